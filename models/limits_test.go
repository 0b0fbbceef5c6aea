package models

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models/formats"
)

// modelErr parses argv and builds its model, returning the error.
func modelErr(argv ...string) error {
	a, err := ParseArgs(argv)
	if err != nil {
		return err
	}
	_, err = a.Model(io.Discard)
	return err
}

// TestCountOf: float counts saturate instead of wrapping or converting
// undefinedly (int(+Inf) is the most negative int on amd64).
func TestCountOf(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want int
	}{{0, 0}, {3, 3}, {-5, 0}, {4294967296, maxCount}, {math.Inf(1), maxCount}, {math.NaN(), maxCount}, {1e300, maxCount}} {
		if got := countOf(c.x); got != c.want {
			t.Errorf("countOf(%g) = %d, want %d", c.x, got, c.want)
		}
	}
}

// TestLimits: the work product is checked before anything is rendered,
// names its factors and says how to override it; -max_work and
// -max_memory override.
func TestLimits(t *testing.T) {
	base := []string{"-cell", "100", "-default_F", "1", "-detpixels", "128", "-oversample", "2"}
	m := mustModel(t, append(base, "-phisteps", "10", "-osc", "1", "-mosaic", "1", "-mosaic_domains", "3")...)
	if k := m.Cost(SimulatePixelBytes, 0); k.Work != 128*128*4*10*3 || !strings.HasPrefix(k.WorkTerms, "128×128 pixels × 2² sub-pixels × 1 layer × 1 source × 10 φ steps × 3 domains") {
		t.Errorf("cost %+v", k)
	}
	err := modelErr(append(base, "-phisteps", "1000000", "-osc", "1")...)
	if err == nil || !strings.Contains(err.Error(), "1000000 φ steps") || !strings.Contains(err.Error(), "-max_work 6.6e+10") {
		t.Errorf("1e6 φ steps: %v", err)
	}
	if err := modelErr(append(base, "-phisteps", "1000000", "-osc", "1", "-max_work", "6.6e10")...); err != nil {
		t.Errorf("with -max_work: %v", err)
	}
	// A million sources (divergence steps) cost ~2.5 GB in a gradient run
	// and 1.1 GB in a simulation (peak resident memory, measured; the
	// estimate once counted 244 MB): refused at the default budget.
	err = modelErr(append(base, "-hdivsteps", "1000000", "-hdivrange", "1", "-max_work", "1e11")...)
	if err == nil || !strings.Contains(err.Error(), "1000000 sources") || !strings.Contains(err.Error(), "give -max_memory") {
		t.Errorf("1e6 sources: %v", err)
	}
	err = modelErr(append(base, "-max_memory", "0.5")...)
	if err == nil || !strings.Contains(err.Error(), "more than the 0 MB allowed") {
		t.Errorf("tiny -max_memory: %v", err)
	}
	for _, bad := range [][]string{{"-max_work", "-1"}, {"-max_memory", "-1"}} {
		if err := modelErr(append(base, bad...)...); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestSourceCountOverflow: divergence steps whose product wraps in int
// (2³²·2³² = 0) are refused by their real product.
func TestSourceCountOverflow(t *testing.T) {
	for _, extra := range [][]string{
		{"-hdivrange", "4294967296", "-hdivstep", "1", "-vdivrange", "4294967296", "-vdivstep", "1"},
		{"-divsteps", "2147483648", "-dispsteps", "2147483648", "-divergence", "1", "-dispersion", "1"},
		{"-divsteps", "2147483648", "-dispsteps", "2147483648", "-divergence", "1", "-dispersion", "1", "-square_div"},
		{"-hdivrange", "1e300", "-hdivstep", "1e-300"},
	} {
		err := modelErr(append([]string{"-cell", "100", "-default_F", "1", "-detpixels", "16"}, extra...)...)
		if err == nil || !strings.Contains(err.Error(), "at most a million are supported") {
			t.Errorf("%q: %v", extra, err)
		}
	}
}

// TestImpossibleValues: non-finite or physically impossible numbers are
// refused with a line naming them.
func TestImpossibleValues(t *testing.T) {
	base := []string{"-cell", "100", "-default_F", "1", "-detpixels", "16"}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"-pixel", "1e308"}, "-pixel 1e+308 mm"},
		{[]string{"-pixel", "1e-300"}, "-pixel 1e-300 mm"},
		{[]string{"-lambda", "1e-300"}, "wavelength 1e-300 Å"},
		{[]string{"-energy", "1e300"}, "wavelength"},
		{[]string{"-detsize", "1e308", "-detpixels", "0"}, "-detsize_f 1e+308"},
		{[]string{"-pixel", "1e-5", "-detsize", "1e6", "-detpixels", "0"}, "is too large"},
		{[]string{"-distance", "1e300"}, "-distance 1e+300"},
		{[]string{"-Xbeam", "1e300"}, "-Xbeam 1e+300"},
		{[]string{"-twotheta", "180"}, "does not face the forward beam"},
		{[]string{"-twotheta", "90"}, "does not face the forward beam"},
		{[]string{"-twotheta", "-120", "-xds"}, "does not face the forward beam"},
		{[]string{"-detector_roty", "100"}, "does not face the forward beam"},
		{[]string{"-odet_vector", "-1", "0", "0"}, "does not face the forward beam"},
		{[]string{"-cell", "100", "100", "100", "120", "120", "120"}, "degenerate"},
		{[]string{"-cell", "100", "100", "100", "60", "60", "119.99999"}, "degenerate"},
		{[]string{"-cell", "1e300", "100", "100", "90", "90", "90"}, "lengths must lie between"},
		{[]string{"-default_F", "1e308"}, "-default_F 1e+308"},
		{[]string{"-polar", "2"}, "-polar 2"},
		{[]string{"-water", "-100"}, "-water -100 µm"},
		{[]string{"-fluence", "1e300"}, "fluence 1e+300"},
		{[]string{"-osc", "1e300", "-phistep", "1"}, "-osc 1e+300"},
		{[]string{"-beam_vector", "1e300", "1e300", "0"}, "finite non-zero vector"},
		{[]string{"-misset", "1e300", "0", "0"}, "-misset 1e+300 0 0 deg"},
		{[]string{"-misset", "0", "-1e16", "0"}, "at most 1e+06 degrees"},
	} {
		err := modelErr(append(append([]string{}, base...), c.extra...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line containing %q", c.extra, err, c.want)
		}
	}
	// Still fine: the edges of what is allowed.
	for _, ok := range [][]string{{"-twotheta", "60"}, {"-twotheta", "80", "-xds"}, {"-cell", "100", "100", "100", "60", "60", "60"},
		{"-polar", "-1"}, {"-water", "0"}, {"-misset", "1e6", "-1e6", "0"}} {
		if err := modelErr(append(append([]string{}, base...), ok...)...); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestSourceFileWavelengths: a -sourcefile's wavelengths (metres, its
// fifth column) are held to the range -lambda has, 1e-6 to 1e6 Å, and so
// are a beam's sources built in code (Beam.Validate); inside it they
// are taken. A file outside it is a file error, not a usage error.
func TestSourceFileWavelengths(t *testing.T) {
	dir := t.TempDir()
	base := []string{"-cell", "100", "100", "100", "90", "90", "90", "-default_F", "1", "-detpixels", "4"}
	for _, c := range []struct {
		row, want string
	}{{"-10 0 0 1 1e-300", "wavelength 1e-300 m"}, {"-10 0 0 1 1e300", "wavelength 1e+300 m"},
		{"-10 0 0 1 1e-3", "must lie between"}, {"-10 0 0 1 1e-10", ""}, {"-10 0 0 1", ""}} {
		f := filepath.Join(dir, "s.src")
		if err := os.WriteFile(f, []byte(c.row+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := modelErr(append(append([]string{}, base...), "-sourcefile", f)...)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: error %v, want %q", c.row, err, c.want)
		}
		// The file's content is wrong, not the command line (exit 1, not 2).
		if errors.Is(err, ErrUsage) {
			t.Errorf("%q: a usage error: %v", c.row, err)
		}
	}
	b := &Beam{Lambda: 1e-10, Fluence: 1, Sources: []Source{{Incident: [3]float64{1, 0, 0}, LambdaFactor: 1}, {Incident: [3]float64{1, 0, 0}, LambdaFactor: 1e-300}}}
	if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "source 2") {
		t.Errorf("a source at 1e-290 Å: error %v, want one naming source 2", err)
	}
}

// TestHeaderNaN: an -img (or -mask) header value given as NaN is refused,
// naming the file and the key (it was taken as absent, and the reference
// would take the NaN); the same file with numbers is read.
func TestHeaderNaN(t *testing.T) {
	a, err := ParseArgs([]string{"-cell", "100", "100", "100", "90", "90", "90", "-default_F", "1", "-detpixels", "4", "-osc", "1"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Model(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		key  string
		edit func(h *formats.SMVHeader)
	}{{"", func(*formats.SMVHeader) {}}, {"PIXEL_SIZE", func(h *formats.SMVHeader) { h.PixelMM = math.NaN() }},
		{"OSC_RANGE", func(h *formats.SMVHeader) { h.OscRangeDeg = math.NaN() }}} {
		h := m.SMVHeader()
		c.edit(&h)
		var b bytes.Buffer
		if err := formats.WriteSMV(&b, h, 4, 4, make([]uint16, 16)); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "h.img")
		if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, flag := range []string{"-img", "-mask"} {
			_, err := ParseArgs([]string{flag, f, "-cell", "100", "100", "100", "90", "90", "90"})
			if c.key == "" && err != nil || c.key != "" && (err == nil || !strings.Contains(err.Error(), "header "+c.key+" is not a number")) {
				t.Errorf("%s with %s NaN: error %v", flag, c.key, err)
			}
		}
	}
}

// TestOversampleRuleAtBoundary: where 3·N·a·pixel = λ·distance exactly
// (round numbers), the reference's rule rounds its real-space edge a hair
// above a and picks 2 sub-pixels where gobragg picked 1 (its images then
// differed by relL2 0.04), or not: the counts are what nanoBragg
// (bl831/nanoBragg, run 2026-11-27) printed as "auto-selected N-fold
// oversampling" for these command lines.
func TestOversampleRuleAtBoundary(t *testing.T) {
	for _, c := range []struct {
		args string
		want int
	}{
		{"-cell 50 50 50 90 90 120 -default_F 40 -N 5 -lambda 1.5 -distance 50 -detpixels 64", 2},
		{"-cell 50 50 50 90 90 90 -misset 33 -71 12 -default_F 40 -N 5 -lambda 1.5 -distance 50 -detpixels 32", 2},
		{"-cell 50 50 50 90 90 90 -default_F 40 -N 10 -lambda 1.5 -distance 100 -pixel 0.1 -detpixels 8", 1},
	} {
		if m := mustModel(t, strings.Fields(c.args)...); m.Detector.Oversample != c.want {
			t.Errorf("%s: %d-fold oversampling, the reference's %d", c.args, m.Detector.Oversample, c.want)
		}
	}
}
