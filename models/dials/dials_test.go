package dials

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/physics"
)

func model(t *testing.T, argv ...string) *models.Model {
	t.Helper()
	a, err := models.ParseArgs(argv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Model(nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var crystal = []string{"-cell", "57", "66", "79", "83", "95", "102", "-misset", "25", "-12", "40", "-default_F", "100",
	"-N", "5", "-lambda", "1.0", "-distance", "120", "-pixel", "0.1", "-oversample", "1"}

// roundTripCases: geometries the list must carry exactly (small images:
// the geometry is what is checked, the pixels only have to exist).
var roundTripCases = []struct {
	name string
	argv []string
	tol  float64 // 0: bit for bit
}{
	{"mosflm off-centre rectangular, two-theta and rotation", append([]string{"-Xbeam", "4", "-Ybeam", "6", "-twotheta", "15",
		"-detector_rotx", "3", "-detpixels_f", "96", "-detpixels_s", "72", "-phi", "10", "-osc", "1", "-phisteps", "3"}, crystal...), 0},
	{"xds ORGX/ORGY, rotations, polarized", append([]string{"-xds", "-ORGX", "20", "-ORGY", "70.25", "-detector_roty", "-4",
		"-detector_rotz", "7", "-detpixels", "80", "-polar", "0.8", "-phi", "-3.5", "-osc", "0.25"}, crystal...), 0},
	{"dials convention, two-theta", append([]string{"-dials", "-twotheta", "20", "-detpixels", "64", "-osc", "0.5"}, crystal...), 0},
	{"adxv, still", append([]string{"-adxv", "-Xbeam", "3", "-Ybeam", "3.3", "-detpixels", "64"}, crystal...), 0},
	{"denzo, thick sensor", append([]string{"-denzo", "-detpixels", "64", "-detector_thick", "300", "-thicksteps", "3",
		"-osc", "1", "-detector_rotx", "1", "-detector_roty", "2"}, crystal...), 0},
	{"custom vectors", append([]string{"-fdet_vector", "0.1", "0.2", "0.97", "-sdet_vector", "0", "-1", "0.2",
		"-beam_vector", "1", "0.01", "0.02", "-spindle_axis", "0.05", "0", "1", "-detpixels", "48", "-osc", "1"}, crystal...),
		// Turning CUSTOM axes into the DIALS frame rounds.
		1e-15},
	{"matrix crystal, round spots", []string{"-mat", "../../testdata/inputs/A.mat", "-round_xtal", "-default_F", "100", "-N", "3",
		"-lambda", "6.2", "-distance", "100", "-detpixels", "64", "-pixel", "0.4", "-oversample", "1", "-twotheta", "5", "-osc", "2"}, 0},
}

// TestRoundTrip: a model written as an experiment list and read back onto
// the same base model has the same geometry, bit for bit: the placed
// detector, the crystal's real-space vectors, the wavelength, φ and the
// spindle, and so the same image.
func TestRoundTrip(t *testing.T) {
	for _, c := range roundTripCases {
		t.Run(c.name, func(t *testing.T) {
			m := model(t, c.argv...)
			el, err := FromModel(m, Images{Template: "image_###.cbf", First: 1, Count: 3})
			if err != nil {
				t.Fatal(err)
			}
			m2 := reread(t, el, m, 1)
			p1, p2 := graph.Packed(m), graph.Packed(m2)
			// The reciprocal vectors (entries 21…29) of a -cell crystal are
			// the reference's, not those of its real vectors: only the
			// non-square shapes read them. The distance along the beam
			// (46) is the reference's, before the two-theta swing: only a
			// curved detector, which no list describes, reads it.
			for i := range p1 {
				if (i >= 21 && i < 30 && !m.Crystal.FromMatrix) || i == physics.PDistance {
					continue
				}
				same := math.Float64bits(p1[i]) == math.Float64bits(p2[i]) || (p1[i] == 0 && p2[i] == 0)
				if c.tol > 0 {
					scale := math.Abs(p1[i])
					if i < 30 { // ten 3-vectors: relative to the vector's length
						j := i - i%3
						scale = math.Sqrt(p1[j]*p1[j] + p1[j+1]*p1[j+1] + p1[j+2]*p1[j+2])
					}
					same = math.Abs(p1[i]-p2[i]) <= c.tol*scale
				}
				if !same {
					t.Errorf("packed parameter %d: %v, read back %v", i, p1[i], p2[i])
				}
			}
			if m.Crystal.Phi != m2.Crystal.Phi || m.Crystal.PhiStep != m2.Crystal.PhiStep || m.Osc != m2.Osc ||
				m.Beam.Lambda != m2.Beam.Lambda || m.Beam.Kahn != m2.Beam.Kahn {
				t.Errorf("φ %v/%v step %v/%v osc %v/%v λ %v/%v K %v/%v", m.Crystal.Phi, m2.Crystal.Phi, m.Crystal.PhiStep,
					m2.Crystal.PhiStep, m.Osc, m2.Osc, m.Beam.Lambda, m2.Beam.Lambda, m.Beam.Kahn, m2.Beam.Kahn)
			}
			img1, img2 := render(t, m), render(t, m2)
			diff := 0
			for i := range img1 {
				if math.Float32bits(img1[i]) != math.Float32bits(img2[i]) {
					diff++
				}
			}
			if diff > 0 && c.tol == 0 {
				t.Errorf("%d of %d pixels differ", diff, len(img1))
			}
			if c.tol > 0 {
				return
			}
			// Written again, the list is the same text.
			el2, err := FromModel(m2, Images{Template: "image_###.cbf", First: 1, Count: 3})
			if err != nil {
				t.Fatal(err)
			}
			var a, b bytes.Buffer
			el.Write(&a)
			el2.Write(&b)
			if a.String() != b.String() {
				t.Errorf("written again, the list differs:\n%s\n%s", a.String(), b.String())
			}
		})
	}
}

func render(t *testing.T, m *models.Model) []float32 {
	t.Helper()
	s, err := graph.New(m, graph.Float32Image())
	if err != nil {
		t.Fatal(err)
	}
	img, err := s.Image32()
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestHierarchy: panel vectors under a detector hierarchy are relative to
// the groups' frames (dxtbx's own example, computed with dxtbx 3.12: a
// root frame fast (0,1,0), slow (1,0,0), origin (5,6,7) mm and a panel at
// local (1,0,0), (0,−1,0), (1,2,3) give the panel fast (0,1,0) and origin
// (7,7,4) mm; slow is −(1,0,0) by the same rule).
func TestHierarchy(t *testing.T) {
	m := model(t, append([]string{"-detpixels", "10"}, crystal...)...)
	el, err := FromModel(m, Images{})
	if err != nil {
		t.Fatal(err)
	}
	d := &el.Detectors[0]
	d.Hierarchy.FastAxis = [3]json.Number{"0", "1", "0"}
	d.Hierarchy.SlowAxis = [3]json.Number{"1", "0", "0"}
	d.Hierarchy.Origin = [3]json.Number{"5", "6", "7"}
	p := &d.Panels[0]
	p.FastAxis, p.SlowAxis, p.Origin, p.Normal = [3]json.Number{"1", "0", "0"}, [3]json.Number{"0", "-1", "0"}, [3]json.Number{"1", "2", "3"}, nil
	g, err := el.Geometry(0)
	if err != nil {
		t.Fatal(err)
	}
	if g.Fast != [3]float64{0, 1, 0} || g.Slow != [3]float64{-1, 0, 0} || g.Pix0 != [3]float64{0.007, 0.007, 0.004} {
		t.Errorf("fast %v slow %v origin %v", g.Fast, g.Slow, g.Pix0)
	}
}

// TestExactNumbers: numbers that do not survive a plain ×1000 round trip
// are written in full.
func TestExactNumbers(t *testing.T) {
	for _, x := range []float64{0.1, 0.0512345678901234, 1e-3, 0.30000000000000004, 5e-5 + 1e-20, -0.07, 0} {
		n, err := mm.number(x)
		if err != nil {
			t.Fatal(err)
		}
		back, err := mm.value(n)
		if err != nil || back != x {
			t.Errorf("%v: written %s, read %v", x, n, back)
		}
	}
	n, _ := mm.number(0.1)
	if n != "100.0" {
		t.Errorf("0.1 m written as %s mm, want 100.0", n)
	}
	for _, k := range []float64{0, 0.8, -1, 1e-17, 0.999} {
		n, _ := kahn.number(k)
		if back, _ := kahn.value(n); back != k {
			t.Errorf("Kahn %v: written %s, read %v", k, n, back)
		}
	}
}

// TestReadErrors: lists gobragg cannot model are refused with a reason.
func TestReadErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`{"__id__": "DataBlock"}`, "not ExperimentList"},
		{`[1, 2]`, "not an experiment list"},
		{`{"__id__": "ExperimentList", "experiment": [{"__id__": "Experiment", "beam": 0}], "beam": []}`, "beam 0 does not exist"},
	} {
		el, err := Read(strings.NewReader(c.text))
		if err == nil {
			_, err = el.Geometry(0)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.text, err, c.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	m := func() *models.Model {
		a, _ := models.ParseArgs(append([]string{"-detpixels", "8", "-osc", "1", "-twotheta", "3"}, crystal...))
		m, _ := a.Model(nil)
		return m
	}()
	el, err := FromModel(m, Images{Template: "x_##.cbf", First: 1, Count: 2})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	el.Write(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(`{"__id__": "ExperimentList", "experiment": [{"beam": 0, "detector": 0}], "beam": [{}], "detector": [{"panels": [{}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		el, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := range el.Experiments {
			g, err := el.Geometry(i)
			if err != nil {
				continue
			}
			if g.Size[0] > 64 || g.Size[1] > 64 {
				continue // keep the model small
			}
			if mm, err := g.Model(m, g.First); err == nil {
				if err := mm.Validate(); err != nil {
					t.Fatalf("Model returned an invalid model: %v", err)
				}
			}
		}
	})
}

// TestScanLimits: a scan naming more than MaxScanImages images, or with a
// negative or non-finite width or angles beyond 1e6° (gobragg's bound on
// -phi and -osc), is refused when its geometry is read; the list's own
// scan, and a width of 0, are taken.
func TestScanLimits(t *testing.T) {
	a, _ := models.ParseArgs(append([]string{"-detpixels", "8", "-osc", "1"}, crystal...))
	m, err := a.Model(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		first, last int
		osc         [2]string
		want        string
	}{
		{1, 2, [2]string{"0", "1"}, ""},
		{1, 2, [2]string{"0", "0"}, ""},
		{1, MaxScanImages, [2]string{"0", "0.001"}, ""},
		{1, 2_000_000_000, [2]string{"0", "1"}, "more than 100000 images"},
		{1, MaxScanImages + 1, [2]string{"0", "0.001"}, "more than 100000 images"},
		{1, 2, [2]string{"1e300", "1e300"}, "angles of at most"},
		{1, 2, [2]string{"0", "-1"}, "width ≥ 0"},
		{1, 3, [2]string{"0", "400000"}, "angles of at most"},
		{1, 3, [2]string{"-999999", "0.1"}, ""},
	} {
		el, err := FromModel(m, Images{Template: "x_##.cbf", First: 1, Count: 2})
		if err != nil {
			t.Fatal(err)
		}
		s := &el.Scans[0]
		s.ImageRange = [2]int{c.first, c.last}
		s.Oscillation = []json.Number{json.Number(c.osc[0]), json.Number(c.osc[1])}
		s.Properties = nil
		_, err = el.Geometry(0)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("images %d…%d, oscillation %v: error %v, want %q", c.first, c.last, c.osc, err, c.want)
		}
	}
}
