package app

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/dials"
	"github.com/gobragg/gobragg/models/formats"
)

// seriesModel is a small triclinic crystal on an off-centre, rotated,
// rectangular detector: every piece of geometry a list has to carry.
var seriesModel = []string{"-cell", "57", "66", "79", "83", "95", "102", "-misset", "25", "-12", "40", "-default_F", "100",
	"-N", "8", "-lambda", "1.0", "-distance", "120", "-pixel", "0.4", "-detpixels_f", "96", "-detpixels_s", "72",
	"-Xbeam", "10", "-Ybeam", "15", "-twotheta", "15", "-detector_rotx", "3", "-oversample", "1", "-phisteps", "2",
	"-fluence", "1e29", "-water", "0.012"}

func inTemp(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	return dir
}

// TestSeriesFramesMatchSimulate: image k of a series is, byte for byte,
// what simulate writes for the same command line with -phi φ0+k·osc and
// -seed seed+k (noise image as miniCBF, integer image as SMV, float
// image), and the series' experiment list reads back to each image's
// model.
func TestSeriesFramesMatchSimulate(t *testing.T) {
	dir := inTemp(t)
	argv := append([]string{"-phi", "-2.5", "-osc", "0.7", "-seed", "17"}, seriesModel...)
	outs := []string{"-noisefile", "img/noise_##.cbf", "-intfile", "img/int_##.img", "-floatfile", "img/float_##.bin"}
	if err := os.Mkdir("img", 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Series(append(append([]string{"--frames", "3", "--first", "8", "--jobs", "2"}, argv...), outs...), &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "writing img/noise.expt") {
		t.Errorf("no experiment list in:\n%s", out.String())
	}
	el, err := dials.ReadFile("img/noise.expt")
	if err != nil {
		t.Fatal(err)
	}
	g, err := el.Geometry(0)
	if err != nil {
		t.Fatal(err)
	}
	if g.Template != "noise_##.cbf" || g.First != 8 || g.Last != 10 {
		t.Errorf("template %q images %d…%d", g.Template, g.First, g.Last)
	}
	a, err := models.ParseArgs(argv)
	if err != nil {
		t.Fatal(err)
	}
	base, err := a.Model(nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 3; k++ {
		n := 8 + k
		phi := strconv.FormatFloat(-2.5+float64(k)*0.7, 'g', -1, 64)
		sim := filepath.Join(dir, "sim"+strconv.Itoa(k))
		if err := os.MkdirAll(filepath.Join(sim, "img"), 0o755); err != nil {
			t.Fatal(err)
		}
		name := func(p string) string { return strings.Replace(p, "##", pad2(n), 1) }
		sargv := models.ReplaceFlag(models.ReplaceFlag(argv, "-phi", []string{phi}), "-seed", []string{strconv.Itoa(17 + k)})
		for i := 0; i < len(outs); i += 2 {
			sargv = append(sargv, outs[i], filepath.Join(sim, name(outs[i+1])))
		}
		if err := Simulate(sargv, io.Discard); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(outs); i += 2 {
			got, err1 := os.ReadFile(name(outs[i]))
			want, err2 := os.ReadFile(filepath.Join(sim, name(outs[i])))
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("image %d: %s differs from simulate's", n, name(outs[i]))
			}
		}
		// The list's image n is the model of image n, bit for bit.
		mk, err := g.Model(base, n)
		if err != nil {
			t.Fatal(err)
		}
		sa, _ := models.ParseArgs(sargv)
		ms, err := sa.Model(nil)
		if err != nil {
			t.Fatal(err)
		}
		p1, p2 := graph.Packed(ms), graph.Packed(mk)
		for i := range p1 {
			if i >= 21 && i < 30 || i == 46 { // the -cell's reciprocal vectors; the curved-detector distance
				continue
			}
			if p1[i] != p2[i] {
				t.Errorf("image %d: packed parameter %d is %v, from the list %v", n, i, p1[i], p2[i])
			}
		}
	}
}

func pad2(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 2 {
		s = "0" + s
	}
	return s
}

// TestSeriesErrors: series command lines that cannot make a series are
// refused before anything is written.
func TestSeriesErrors(t *testing.T) {
	inTemp(t)
	model := append([]string{"-osc", "1"}, seriesModel...)
	for _, c := range []struct {
		argv []string
		want string
	}{
		{append([]string{"--frames", "2", "-noisefile", "a_#.cbf"}, seriesModel...), "-osc"},
		{append([]string{"--frames", "2", "-noisefile", "a.cbf"}, model...), "needs # in the name"},
		{append([]string{"--frames", "12", "-noisefile", "a_#.cbf"}, model...), "more digits"},
		{append([]string{"--frames", "2", "-noisefile", "a_#_#.cbf"}, model...), "one run of #"},
		{append([]string{"--frames", "2", "--format", "tiff", "-noisefile", "a_#.cbf"}, model...), "--format"},
		{append([]string{"--frames", "2", "--bogus", "-noisefile", "a_#.cbf"}, model...), "unknown option --bogus"},
		{append([]string{"-noisefile", "a_#.cbf"}, model...), "--frames"},
		{append([]string{"--frames", "2"}, model...), "no output"},
		{append([]string{"--frames", "2", "-noisefile", "-"}, model...), "standard output"},
		{append([]string{"--frames", "2", "-noisefile", "a_#.cbf", "-expt", "x.expt"}, model...), "--expt"},
		{append([]string{"--frames", "2", "-noisefile", "a_#.cbf", "-json"}, model...), "simulate's"},
		{append([]string{"--frames", "2", "-noisefile", "a_#.cbf", "-printout"}, model...), "simulate's"},
		{append([]string{"--frames", "2", "-noisefile", "a_#.cbf", "-printout_pixel", "1", "2"}, model...), "simulate's"},
		{append([]string{"--frames", "2", "-noisefile", "nodir/a_#.cbf"}, model...), "nodir"},
	} {
		var out bytes.Buffer
		err := Series(c.argv, &out, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.argv[:4], err, c.want)
		}
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Errorf("refused series left %d files", len(ents))
	}
	var out bytes.Buffer
	if err := Series([]string{"--help"}, &out, &out); err != nil || !strings.Contains(out.String(), "--frames") {
		t.Errorf("--help: %v\n%s", err, out.String())
	}
}

// TestSeriesFormat: a series' --format decides the integer images'
// format whatever their names (--format smv writes SMV to .cbf names,
// --format cbf miniCBF to .img names), each name decides without it, and
// --format smv beside -cbf is refused.
func TestSeriesFormat(t *testing.T) {
	inTemp(t)
	model := append([]string{"-osc", "1", "-seed", "3", "-detpixels_f", "24", "-detpixels_s", "16"}, seriesModel...)
	for _, c := range []struct {
		format, name string
		cbf          bool
	}{{"smv", "s_#.cbf", false}, {"cbf", "c_#.img", true}, {"", "n_#.cbf", true}, {"", "m_#.img", false}} {
		argv := []string{"--frames", "1", "--expt", "none", "-noisefile", c.name}
		if c.format != "" {
			argv = append(argv, "--format", c.format)
		}
		var out bytes.Buffer
		if err := Series(append(argv, model...), &out, &out); err != nil {
			t.Fatalf("--format %q %s: %v\n%s", c.format, c.name, err, out.String())
		}
		b, err := os.ReadFile(strings.Replace(c.name, "#", "1", 1))
		if err != nil {
			t.Fatal(err)
		}
		if got := formats.IsCBF(b); got != c.cbf {
			t.Errorf("--format %q %s: miniCBF %v, want %v", c.format, c.name, got, c.cbf)
		}
		if !c.cbf {
			if _, err := formats.ReadSMV(bytes.NewReader(b)); err != nil {
				t.Errorf("--format %q %s: not SMV: %v", c.format, c.name, err)
			}
		}
	}
	var out bytes.Buffer
	err := Series(append([]string{"--frames", "1", "--format", "smv", "-noisefile", "x_#.img", "-cbf"}, model...), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "-cbf") {
		t.Errorf("--format smv with -cbf: error %v, want one naming -cbf", err)
	}
	if _, err := os.Stat("x_1.img"); err == nil {
		t.Error("--format smv with -cbf: x_1.img written")
	}
}

// TestSimulateCBFAndExpt: simulate writes miniCBF for .cbf names (and
// with -cbf for any name) holding the SMV image's pixels, and with -expt
// a DIALS experiment list that reads back to the model; fit and gradcheck
// read the CBF as they read SMV.
func TestSimulateCBFAndExpt(t *testing.T) {
	inTemp(t)
	argv := append([]string{"-osc", "1", "-seed", "3", "-noisefile", "n_001.cbf", "-intfile", "i.img", "-expt", "one.expt"}, seriesModel...)
	if err := Simulate(argv, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := Simulate(append([]string{"-osc", "1", "-seed", "3", "-noisefile", "n.img", "-intfile", "i.cbf"}, seriesModel...), io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := Simulate(append([]string{"-osc", "1", "-intfile", "j.img", "-cbf"}, seriesModel...), io.Discard); err != nil {
		t.Fatal(err)
	}
	if j, _ := os.ReadFile("j.img"); !formats.IsCBF(j) {
		t.Error("-cbf: j.img is not a CBF file")
	}
	for _, pair := range [][2]string{{"n_001.cbf", "n.img"}, {"i.cbf", "i.img"}} {
		b, err := os.ReadFile(pair[0])
		if err != nil {
			t.Fatal(err)
		}
		cbf, err := formats.ReadCBF(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", pair[0], err)
		}
		f, err := os.Open(pair[1])
		if err != nil {
			t.Fatal(err)
		}
		smv, err := formats.ReadSMV(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range smv.Data {
			if cbf.Data[i] != int32(v) {
				t.Fatalf("%s pixel %d is %d, the SMV's %d", pair[0], i, cbf.Data[i], v)
			}
		}
	}
	a, _ := models.ParseArgs(argv)
	m, err := a.Model(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The header's beam position: the beam meets the detector where the
	// list's geometry says.
	b, _ := os.ReadFile("n_001.cbf")
	cbf, _ := formats.ReadCBF(bytes.NewReader(b))
	el, err := dials.ReadFile("one.expt")
	if err != nil {
		t.Fatal(err)
	}
	g, err := el.Geometry(0)
	if err != nil {
		t.Fatal(err)
	}
	if g.Template != "n_###.cbf" || g.First != 1 || g.Last != 1 {
		t.Errorf("list names %q, images %d…%d", g.Template, g.First, g.Last)
	}
	var v [3]float64
	tb := dotv(g.Pix0, g.Normal) / dotv(g.Beam, g.Normal)
	for i := range v {
		v[i] = tb*g.Beam[i] - g.Pix0[i]
	}
	if fx, fy := dotv(v, g.Fast)/g.Pixel[0], dotv(v, g.Slow)/g.Pixel[0]; math.Abs(fx-cbf.Header.BeamXPx) > 1e-9 || math.Abs(fy-cbf.Header.BeamYPx) > 1e-9 {
		t.Errorf("CBF Beam_xy (%v, %v), list (%v, %v)", cbf.Header.BeamXPx, cbf.Header.BeamYPx, fx, fy)
	}
	m2, err := g.Model(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p1, p2 := graph.Packed(m), graph.Packed(m2); p1[0] != p2[0] || p1[3] != p2[3] || p1[12] != p2[12] {
		t.Errorf("read back: pix0 %v/%v", p1[:3], p2[:3])
	}
	obs, err := readImage("n_001.cbf", m, 40)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(cbf.Data[5]) - 40; obs[5] != want {
		t.Errorf("readImage: pixel 5 is %v, want %v", obs[5], want)
	}
}

func dotv(x, y [3]float64) float64 { return x[0]*y[0] + x[1]*y[1] + x[2]*y[2] }

// TestAutoExpt: the default experiment list is named after the images.
func TestAutoExpt(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"out/image_###.cbf", "out/image.expt"}, {"###.img", "series.expt"}, {"d/x-##.cbf", "d/x.expt"},
	} {
		tm, err := parseTemplate("-noisefile", c.name, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got := autoExpt(&tm); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got, n := singleImage("a/b_0042.cbf"); got != "a/b_####.cbf" || n != 42 {
		t.Errorf("singleImage: %s %d", got, n)
	}
}
