package dials

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/gobragg/gobragg/models"
)

// Geometry is one experiment's geometry in the DIALS lab frame and SI
// units (m, radians are not used: scan angles stay in degrees, as both
// programs' users give them).
type Geometry struct {
	// Beam is the unit vector along which the beam travels (dxtbx's
	// direction is its negative); Lambda the wavelength (m).
	Beam   [3]float64
	Lambda float64
	// PolarNormal is the normal of the polarization plane; Kahn is the
	// Kahn polarization factor, 2f − 1 for dxtbx's fraction f of the
	// intensity polarized in that plane (0: unpolarized).
	PolarNormal [3]float64
	Kahn        float64
	// Pix0 is the outer corner of the first pixel (m); Fast, Slow and
	// Normal the panel's unit vectors; Pixel the pixel size (m, fast then
	// slow); Size the pixels along fast and slow.
	Pix0, Fast, Slow, Normal [3]float64
	Pixel                    [2]float64
	Size                     [2]int
	// Thickness (m) and Mu (attenuation, 1/m) of the sensor; 0 for a thin
	// one.
	Thickness, Mu float64
	// Trusted is the range of valid pixel values.
	Trusted [2]float64
	// Axis is the rotation axis (unit; the goniometer's setting rotation
	// applied).
	Axis [3]float64
	// Scan: images First…Last, the first starting at PhiStartDeg, each
	// OscDeg wide, ExposureS seconds. HasScan is false for stills.
	HasScan        bool
	First, Last    int
	PhiStartDeg    float64
	OscDeg         float64
	ExposureS      float64
	HasGoniometer  bool
	HasCrystal     bool
	A, B, C        [3]float64 // real-space cell vectors (m) at φ = 0, fixed and setting rotations applied
	Template       string     // image template with '#' for the number ("" for none)
	Images         []string   // single images of a still image set
	SpaceGroupHall string
}

// Geometry resolves experiment i of the list: its models looked up,
// hierarchy frames composed, goniometer rotations applied to the axis and
// the crystal, numbers converted to SI units.
func (el *ExperimentList) Geometry(i int) (*Geometry, error) {
	if i < 0 || i >= len(el.Experiments) {
		return nil, fmt.Errorf("dials: no experiment %d (the list has %d)", i, len(el.Experiments))
	}
	e := el.Experiments[i]
	pick := func(name string, idx *int, n int, required bool) (int, bool, error) {
		if idx == nil {
			if required {
				return 0, false, fmt.Errorf("dials: experiment %d has no %s", i, name)
			}
			return 0, false, nil
		}
		if *idx < 0 || *idx >= n {
			return 0, false, fmt.Errorf("dials: experiment %d: %s %d does not exist", i, name, *idx)
		}
		return *idx, true, nil
	}
	g := &Geometry{}
	bi, _, err := pick("beam", e.Beam, len(el.Beams), true)
	if err != nil {
		return nil, err
	}
	if err := g.readBeam(&el.Beams[bi]); err != nil {
		return nil, err
	}
	di, _, err := pick("detector", e.Detector, len(el.Detectors), true)
	if err != nil {
		return nil, err
	}
	if err := g.readDetector(&el.Detectors[di]); err != nil {
		return nil, err
	}
	setting, fixed := identity, identity
	g.Axis = [3]float64{1, 0, 0}
	if gi, ok, err := pick("goniometer", e.Goniometer, len(el.Goniometers), false); err != nil {
		return nil, err
	} else if ok {
		gon := &el.Goniometers[gi]
		if len(gon.Axes) > 0 && string(gon.Axes) != "null" {
			return nil, fmt.Errorf("dials: experiment %d: multi-axis goniometers are not supported", i)
		}
		axis, err := unit.vec3(gon.RotationAxis)
		if err != nil {
			return nil, err
		}
		if setting, err = mat(gon.SettingRotation); err != nil {
			return nil, err
		}
		if fixed, err = mat(gon.FixedRotation); err != nil {
			return nil, err
		}
		g.Axis, g.HasGoniometer = normalize(mulMV(setting, axis)), true
	}
	if si, ok, err := pick("scan", e.Scan, len(el.Scans), false); err != nil {
		return nil, err
	} else if ok {
		if err := g.readScan(&el.Scans[si]); err != nil {
			return nil, err
		}
	}
	if ci, ok, err := pick("crystal", e.Crystal, len(el.Crystals), false); err != nil {
		return nil, err
	} else if ok {
		c := &el.Crystals[ci]
		sf := mulMM(setting, fixed)
		dst := []*[3]float64{&g.A, &g.B, &g.C}
		for j, v := range [][3]json.Number{c.RealSpaceA, c.RealSpaceB, c.RealSpaceC} {
			x, err := angstrm.vec3(v)
			if err != nil {
				return nil, err
			}
			*dst[j] = mulMV(sf, x)
		}
		g.HasCrystal, g.SpaceGroupHall = true, c.SpaceGroupHallSymbol
	}
	if ii, ok, err := pick("imageset", e.ImageSet, len(el.ImageSets), false); err != nil {
		return nil, err
	} else if ok {
		g.Template, g.Images = el.ImageSets[ii].Template, el.ImageSets[ii].Images
	}
	return g, nil
}

func (g *Geometry) readBeam(b *Beam) error {
	dir, err := unit.vec3(b.Direction)
	if err != nil {
		return err
	}
	g.Beam = normalize(neg(dir))
	if g.Lambda, err = angstrm.value(b.Wavelength); err != nil {
		return err
	}
	if !(g.Lambda > 0) {
		return fmt.Errorf("dials: wavelength %s Å: must be positive", b.Wavelength)
	}
	if g.PolarNormal, err = unit.vec3(b.PolarizationNormal); err != nil {
		return err
	}
	if b.PolarizationFraction != "" {
		if g.Kahn, err = kahn.value(b.PolarizationFraction); err != nil {
			return err
		}
	}
	return nil
}

func (g *Geometry) readDetector(d *Detector) error {
	if len(d.Panels) != 1 {
		return fmt.Errorf("dials: the detector has %d panels; gobragg models one flat panel", len(d.Panels))
	}
	p := &d.Panels[0]
	var err error
	if g.Fast, err = unit.vec3(p.FastAxis); err != nil {
		return err
	}
	if g.Slow, err = unit.vec3(p.SlowAxis); err != nil {
		return err
	}
	if g.Pix0, err = mm.vec3(p.Origin); err != nil {
		return err
	}
	if d.Hierarchy != nil {
		m, o, ok := panelFrame(d.Hierarchy, 0, identity, [3]float64{})
		if !ok {
			return fmt.Errorf("dials: the detector hierarchy does not hold panel 0")
		}
		if m != identity || o != ([3]float64{}) {
			g.Fast, g.Slow = mulMV(m, g.Fast), mulMV(m, g.Slow)
			g.Pix0 = add(o, mulMV(m, g.Pix0))
		}
	}
	// DIALS' normal is fast × slow; gobragg's faces the sample (the
	// reference's ADXV axes have it the other way round), and a list
	// gobragg wrote carries it as placed.
	g.Normal = normalize(cross(g.Fast, g.Slow))
	if dot(g.Normal, g.Pix0) < 0 {
		g.Normal = neg(g.Normal)
	}
	if p.Normal != nil {
		if v, err := unit.vec3(*p.Normal); err == nil && math.Abs(norm(v)-1) < 1e-9 {
			if m, _, _ := panelFrame(d.Hierarchy, 0, identity, [3]float64{}); d.Hierarchy != nil {
				v = mulMV(m, v)
			}
			g.Normal = v
		}
	}
	for j := 0; j < 2; j++ {
		if g.Pixel[j], err = mm.value(p.PixelSize[j]); err != nil {
			return err
		}
		if !(g.Pixel[j] > 0) {
			return fmt.Errorf("dials: pixel size %s mm: must be positive", p.PixelSize[j])
		}
		if p.ImageSize[j] < 1 {
			return fmt.Errorf("dials: image size %v: need at least one pixel", p.ImageSize)
		}
		if p.TrustedRange[j] != "" {
			if g.Trusted[j], err = unit.value(p.TrustedRange[j]); err != nil {
				return err
			}
		}
	}
	g.Size = p.ImageSize
	if p.Thickness != "" {
		if g.Thickness, err = mm.value(p.Thickness); err != nil {
			return err
		}
	}
	if p.Mu != "" {
		if g.Mu, err = perMM.value(p.Mu); err != nil {
			return err
		}
	}
	return nil
}

// panelFrame finds panel i under group h and returns the rotation and
// origin that take the panel's vectors to the lab frame: each group's
// frame (fast, slow, fast × slow, origin) is given in its parent's.
func panelFrame(h *Group, i int, m [9]float64, o [3]float64) ([9]float64, [3]float64, bool) {
	if h.PanelIndex != nil {
		return m, o, *h.PanelIndex == i
	}
	f, err1 := unit.vec3(h.FastAxis)
	s, err2 := unit.vec3(h.SlowAxis)
	org, err3 := mm.vec3(h.Origin)
	if err1 == nil && err2 == nil && err3 == nil && (f != [3]float64{} || s != [3]float64{}) {
		n := normalize(cross(f, s))
		local := [9]float64{f[0], s[0], n[0], f[1], s[1], n[1], f[2], s[2], n[2]}
		if local != identity || org != ([3]float64{}) {
			o = add(o, mulMV(m, org))
			m = mulMM(m, local)
		}
	}
	for k := range h.Children {
		if mm, oo, ok := panelFrame(&h.Children[k], i, m, o); ok {
			return mm, oo, true
		}
	}
	return m, o, false
}

// MaxScanImages bounds the images one scan may name: far beyond real
// series (a 360° scan in 0.01° images has 36,000), and small enough that
// a list is refused before a fit makes an entry for each.
const MaxScanImages = 100_000

// maxScanDeg bounds a scan's angles (degrees), as gobragg's -phi and -osc.
const maxScanDeg = 1e6

func (g *Geometry) readScan(s *Scan) error {
	g.HasScan, g.First, g.Last = true, s.ImageRange[0], s.ImageRange[1]
	if g.Last < g.First {
		return fmt.Errorf("dials: scan image range %v is empty", s.ImageRange)
	}
	if float64(g.Last)-float64(g.First) >= MaxScanImages {
		return fmt.Errorf("dials: scan image range %v: more than %d images", s.ImageRange, MaxScanImages)
	}
	osc, exp := s.Oscillation, s.ExposureTime
	if s.Properties != nil {
		exp = s.Properties.ExposureTime
		if len(s.Properties.Oscillation) > 0 && len(s.Properties.OscillationWidth) > 0 {
			osc = []json.Number{s.Properties.Oscillation[0], s.Properties.OscillationWidth[0]}
		}
	}
	if len(osc) != 2 {
		return fmt.Errorf("dials: the scan has no oscillation (start, width)")
	}
	var err error
	if g.PhiStartDeg, err = unit.value(osc[0]); err != nil {
		return err
	}
	if g.OscDeg, err = unit.value(osc[1]); err != nil {
		return err
	}
	end := g.PhiDeg(g.Last + 1)
	if !(g.OscDeg >= 0) || !(math.Abs(g.PhiStartDeg) <= maxScanDeg && math.Abs(end) <= maxScanDeg) {
		return fmt.Errorf("dials: scan oscillation %v°: want a width ≥ 0 and angles of at most %g°", osc, float64(maxScanDeg))
	}
	g.ExposureS = 1
	if len(exp) > 0 {
		if g.ExposureS, err = unit.value(exp[0]); err != nil {
			return err
		}
	}
	return nil
}

// PhiDeg is the angle at which image n starts.
func (g *Geometry) PhiDeg(n int) float64 {
	return g.PhiStartDeg + float64(n-g.First)*g.OscDeg
}

// Images describes the image files of a list being written.
type Images struct {
	// Template names the files, '#' standing for the image number (with
	// leading zeros to the number of '#'); relative to the list's
	// directory. Empty for a list without images.
	Template string
	// First is the number of the first image, Count the number of images.
	First, Count int
	// ExposureS is each image's exposure (s); 0 means 1.
	ExposureS float64
	// Trusted is the range of valid pixel values; zero means −1…65534
	// (16-bit images whose largest value marks an overload).
	Trusted [2]float64
}

// ModelGeometry describes model m (its φ, oscillation and placed
// detector) in the DIALS frame: the lab frame is turned so that the
// model's beam travels along −z and its spindle lies along +x (in the
// x–z plane when not perpendicular to the beam). For the five standard
// conventions that turn is a signed permutation of the axes (MOSFLM:
// x, y, z → z, y, −x, the reference's DIALS_ORIGIN), exact in floating
// point; for CUSTOM vectors it is a rotation.
func ModelGeometry(m *models.Model, im Images) (*Geometry, error) {
	d := m.Detector
	r := frameOf(d)
	A := models.Float{}
	fr := models.Place[float64](A, d, d.Params())
	g := &Geometry{Beam: r.to(d.Beam), Lambda: m.Beam.Lambda,
		Pix0: r.to(fr.Pix0), Fast: r.to(fr.F), Slow: r.to(fr.S), Normal: r.to(fr.O),
		Pixel: [2]float64{d.Pixel, d.Pixel}, Size: [2]int{d.FPixels, d.SPixels},
		Axis: r.to(d.Spindle), Trusted: im.Trusted, Template: im.Template,
		HasGoniometer: true, HasCrystal: true, SpaceGroupHall: " P 1"}
	if g.Trusted == ([2]float64{}) {
		g.Trusted = [2]float64{-1, 65534}
	}
	// The polarization plane holds the beam and the electric vector.
	g.PolarNormal = r.to(normalize(cross(d.Beam, d.Polar)))
	g.Kahn = m.Beam.Kahn
	if d.Thick {
		g.Thickness, g.Mu = d.ThickStep*float64(d.ThickSteps), d.Mu
	}
	if m.Osc != 0 {
		g.HasScan = true
		g.First, g.Last = im.First, im.First+max(im.Count, 1)-1
		g.PhiStartDeg, g.OscDeg = degrees(m.Crystal.Phi), degrees(m.Osc)
		g.ExposureS = im.ExposureS
		if g.ExposureS <= 0 {
			g.ExposureS = 1
		}
	} else if im.Template != "" {
		g.Images, g.Template = []string{im.Template}, ""
	}
	a, b, c := models.RealVectors[float64](A, m.Crystal, m.Crystal.Params(), m.Beam.Lambda)
	g.A, g.B, g.C = r.to(a), r.to(b), r.to(c)
	return g, nil
}

// degrees converts an angle the way a command line's degrees became it
// (models: deg·π/180), finding the degrees that give these radians back.
func degrees(rad float64) float64 {
	d := rad * 180 / math.Pi
	for _, dir := range []float64{math.Inf(1), math.Inf(-1)} {
		x := d
		for k := 0; k < 4; k++ {
			if x*math.Pi/180 == rad {
				return x
			}
			x = math.Nextafter(x, dir)
		}
	}
	return d
}

// List writes the geometry as a one-experiment list.
func (g *Geometry) List() (*ExperimentList, error) {
	var errs []error
	num := func(a affine, x float64) json.Number {
		n, err := a.number(x)
		if err != nil {
			errs = append(errs, err)
		}
		return n
	}
	vec := func(a affine, v [3]float64) [3]json.Number {
		return [3]json.Number{num(a, v[0]), num(a, v[1]), num(a, v[2])}
	}
	zero, one := json.Number("0.0"), json.Number("1.0")
	// Empty model lists are [], not null: dxtbx iterates over each.
	el := &ExperimentList{ID: "ExperimentList", ImageSets: []ImageSet{}, Goniometers: []Goniometer{}, Scans: []Scan{},
		Crystals: []Crystal{}, Profiles: []json.RawMessage{}, ScalingModel: []json.RawMessage{}}
	idx := func(i int) *int { return &i }
	e := Experiment{ID: "Experiment", Beam: idx(0), Detector: idx(0)}
	el.Beams = []Beam{{Direction: vec(unit, neg(g.Beam)),
		Wavelength: num(angstrm, g.Lambda), Divergence: zero, SigmaDivergence: zero,
		PolarizationNormal: vec(unit, g.PolarNormal), PolarizationFraction: num(kahn, g.Kahn),
		Flux: zero, Transmission: one}}
	normal := vec(unit, g.Normal)
	p := Panel{Name: "Panel", Type: "SENSOR_PAD", FastAxis: vec(unit, g.Fast), SlowAxis: vec(unit, g.Slow),
		Origin: vec(mm, g.Pix0), Normal: &normal, ImageSize: g.Size,
		PixelSize:    [2]json.Number{num(mm, g.Pixel[0]), num(mm, g.Pixel[1])},
		TrustedRange: [2]json.Number{num(unit, g.Trusted[0]), num(unit, g.Trusted[1])},
		Thickness:    num(mm, g.Thickness), Mu: num(perMM, g.Mu), Mask: json.RawMessage("[]"),
		Gain: one, Pedestal: zero, PxMmStrategy: json.RawMessage(`{"type": "SimplePxMmStrategy"}`)}
	if g.Thickness > 0 && g.Mu > 0 {
		p.Material, p.PxMmStrategy = "Si", json.RawMessage(`{"type": "ParallaxCorrectedPxMmStrategy"}`)
	}
	root := Group{Panel: Panel{FastAxis: [3]json.Number{one, zero, zero}, SlowAxis: [3]json.Number{zero, one, zero},
		Origin: [3]json.Number{zero, zero, zero}, PixelSize: [2]json.Number{zero, zero},
		TrustedRange: [2]json.Number{zero, zero}, Thickness: zero, Mu: zero, Mask: json.RawMessage("[]"),
		Gain: one, Pedestal: zero, PxMmStrategy: json.RawMessage(`{"type": "SimplePxMmStrategy"}`)},
		Children: []Group{{PanelIndex: idx(0)}}}
	el.Detectors = []Detector{{Panels: []Panel{p}, Hierarchy: &root}}
	ident := [9]json.Number{one, zero, zero, zero, one, zero, zero, zero, one}
	if g.HasGoniometer && g.HasScan {
		el.Goniometers = []Goniometer{{RotationAxis: vec(unit, g.Axis), FixedRotation: ident, SettingRotation: ident}}
		e.Goniometer = idx(0)
	}
	if g.HasScan {
		n := g.Last - g.First + 1
		s := Scan{ImageRange: [2]int{g.First, g.Last}, Oscillation: []json.Number{num(unit, g.PhiStartDeg), num(unit, g.OscDeg)},
			ValidImageRanges: json.RawMessage("{}")}
		for k := 0; k < n; k++ {
			s.ExposureTime = append(s.ExposureTime, num(unit, g.ExposureS))
			s.Epochs = append(s.Epochs, num(unit, float64(k)*g.ExposureS))
		}
		el.Scans, e.Scan = []Scan{s}, idx(0)
	}
	if g.HasCrystal {
		hall := g.SpaceGroupHall
		if hall == "" {
			hall = " P 1"
		}
		el.Crystals = []Crystal{{ID: "crystal", RealSpaceA: vec(angstrm, g.A), RealSpaceB: vec(angstrm, g.B),
			RealSpaceC: vec(angstrm, g.C), SpaceGroupHallSymbol: hall}}
		e.Crystal = idx(0)
	}
	params := json.RawMessage(`{"dynamic_shadowing": "Auto", "multi_panel": false}`)
	switch {
	case g.Template != "":
		el.ImageSets = []ImageSet{{ID: "ImageSequence", Template: g.Template, Params: params}}
		e.ImageSet = idx(0)
	case len(g.Images) > 0:
		el.ImageSets = []ImageSet{{ID: "ImageSet", Images: g.Images, Params: params}}
		e.ImageSet = idx(0)
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	// A stable identifier: a hash of everything above.
	h := fnv.New64a()
	el.Experiments = []Experiment{e}
	b, _ := json.Marshal(el)
	h.Write(b)
	el.Experiments[0].Identifier = fmt.Sprintf("gobragg-%016x", h.Sum64())
	return el, nil
}

// FromModel describes model m as a DIALS experiment list (see
// ModelGeometry and Geometry.List).
func FromModel(m *models.Model, im Images) (*ExperimentList, error) {
	g, err := ModelGeometry(m, im)
	if err != nil {
		return nil, err
	}
	return g.List()
}

// frame is the turn from a model's lab frame to the DIALS frame: rows
// x', y', z' (DIALS = (x'·v, y'·v, z'·v)).
type frame [3][3]float64

func frameOf(d *models.Detector) frame {
	b := normalize(d.Beam)
	z := [3]float64{-b[0], -b[1], -b[2]}
	s := d.Spindle
	sb := dot(s, b)
	x := [3]float64{s[0] - sb*b[0], s[1] - sb*b[1], s[2] - sb*b[2]}
	if norm(x) < 1e-9 {
		// A spindle along the beam: any perpendicular will do.
		x = cross(b, [3]float64{0, 1, 0})
		if norm(x) < 1e-9 {
			x = cross(b, [3]float64{1, 0, 0})
		}
	}
	x = normalize(x)
	return frame{x, cross(z, x), z}
}

func (r frame) to(v [3]float64) [3]float64 {
	return [3]float64{dot(r[0], v), dot(r[1], v), dot(r[2], v)}
}

func (r frame) from(v [3]float64) [3]float64 {
	var out [3]float64
	for i := 0; i < 3; i++ {
		out[i] = r[0][i]*v[0] + r[1][i]*v[1] + r[2][i]*v[2]
	}
	return out
}

var identity = [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}

func mat(ns [9]json.Number) ([9]float64, error) {
	var m [9]float64
	v, err := unit.values(ns[:])
	copy(m[:], v)
	return m, err
}

func mulMV(m [9]float64, v [3]float64) [3]float64 {
	if m == identity {
		return v
	}
	return [3]float64{m[0]*v[0] + m[1]*v[1] + m[2]*v[2], m[3]*v[0] + m[4]*v[1] + m[5]*v[2], m[6]*v[0] + m[7]*v[1] + m[8]*v[2]}
}

func mulMM(a, b [9]float64) [9]float64 {
	if a == identity {
		return b
	}
	if b == identity {
		return a
	}
	var c [9]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			c[3*i+j] = a[3*i]*b[j] + a[3*i+1]*b[3+j] + a[3*i+2]*b[6+j]
		}
	}
	return c
}

func dot(x, y [3]float64) float64 { return x[0]*y[0] + x[1]*y[1] + x[2]*y[2] }
func norm(x [3]float64) float64   { return math.Sqrt(dot(x, x)) }
func add(x, y [3]float64) [3]float64 {
	return [3]float64{x[0] + y[0], x[1] + y[1], x[2] + y[2]}
}
func cross(x, y [3]float64) [3]float64 {
	return [3]float64{x[1]*y[2] - x[2]*y[1], x[2]*y[0] - x[0]*y[2], x[0]*y[1] - x[1]*y[0]}
}

// normalize returns v/|v|, or v itself when it is already a unit vector
// to the last bit (or zero).
func normalize(v [3]float64) [3]float64 {
	n := norm(v)
	if n == 1 || n == 0 {
		return v
	}
	return [3]float64{v[0] / n, v[1] / n, v[2] / n}
}

// neg is −v without negative zeros (0 − x).
func neg(v [3]float64) [3]float64 { return [3]float64{0 - v[0], 0 - v[1], 0 - v[2]} }
