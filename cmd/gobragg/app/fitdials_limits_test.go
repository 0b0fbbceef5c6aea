package app

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/dials"
	"github.com/gobragg/gobragg/models/formats"
)

// TestFitFromDIALSLimits: fit --from-dials refuses, in one line and
// before anything is read or written, a list without experiments (it
// once panicked), a scan of two billion images, and many experiments
// naming more than dials.MaxScanImages images together.
func TestFitFromDIALSLimits(t *testing.T) {
	inTemp(t)
	m := oscModel(t)
	write := func(name string, edit func(el *dials.ExperimentList)) {
		el, err := dials.FromModel(m, dials.Images{Template: "img_###.img", First: 1, Count: 3})
		if err != nil {
			t.Fatal(err)
		}
		edit(el)
		var b bytes.Buffer
		if err := el.Write(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile("empty.expt", []byte(`{"__id__": "ExperimentList", "experiment": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	write("huge.expt", func(el *dials.ExperimentList) { el.Scans[0].ImageRange = [2]int{1, 2_000_000_000} })
	write("many.expt", func(el *dials.ExperimentList) {
		el.Scans[0].ImageRange = [2]int{1, 50_000}
		for range 3 {
			el.Experiments = append(el.Experiments, el.Experiments[0])
		}
	})
	for _, c := range []struct{ list, want string }{
		{"empty.expt", "the list has no experiments"},
		{"huge.expt", "more than 100000 images"},
		{"many.expt", "names more than 100000 images"},
	} {
		var out bytes.Buffer
		err := Fit(append([]string{"--from-dials", c.list, "--out", "res"}, seriesModel...), &out, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.list, err, c.want)
		}
	}
	if _, err := os.Stat("res"); err == nil {
		t.Error("res written")
	}
}

// TestFitHeaderAngles: a series' φ and oscillation come from each SMV
// header; a header giving a non-finite or huge PHI or OSC_RANGE is
// refused, naming the file and the key (it named -phi, which the user
// never gave, or was taken as absent for NaN).
func TestFitHeaderAngles(t *testing.T) {
	inTemp(t)
	m := oscModel(t)
	write := func(name string, edit func(h *formats.SMVHeader)) { writeDarkSMV(t, name, m, edit) }
	write("a_1.img", func(*formats.SMVHeader) {})
	for _, c := range []struct {
		edit func(h *formats.SMVHeader)
		want string
	}{
		{func(h *formats.SMVHeader) { h.PhiDeg = math.Inf(1) }, "header PHI = +Inf"},
		{func(h *formats.SMVHeader) { h.OscRangeDeg = 1e300 }, "header OSC_RANGE = 1e+300"},
		{func(h *formats.SMVHeader) { h.OscRangeDeg = math.NaN() }, "header OSC_RANGE = NaN"},
	} {
		write("a_2.img", c.edit)
		var out bytes.Buffer
		err := Fit(append([]string{"--observed", "a_1.img,a_2.img", "--spots", "all", "--out", "res"}, seriesModel...), &out, &out)
		if err == nil || !strings.Contains(err.Error(), "--observed a_2.img: "+c.want) {
			t.Errorf("error %v, want one containing %q", err, "--observed a_2.img: "+c.want)
		}
	}
}

// oscModel is seriesModel's model with -osc 1.
func oscModel(t *testing.T) *models.Model {
	return argsModel(t, append([]string{"-osc", "1"}, seriesModel...)...)
}

// argsModel is the model of nanoBragg flags argv.
func argsModel(t *testing.T, argv ...string) *models.Model {
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

// TestFitNoPixel: a mask that leaves no pixel says so (it asked whether
// the fluence was 0).
func TestFitNoPixel(t *testing.T) {
	inTemp(t)
	m := oscModel(t)
	d := m.Detector
	writeDarkSMV(t, "a_1.img", m, func(*formats.SMVHeader) {})
	if err := os.WriteFile("zero.bin", make([]byte, 4*d.FPixels*d.SPixels), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := Fit(append([]string{"--observed", "a_1.img", "--spots", "all", "--mask", "zero.bin", "--out", "res"}, seriesModel...), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "no pixel is fitted") {
		t.Errorf("error %v, want one saying no pixel is fitted", err)
	}
}

// writeDarkSMV writes an SMV image of m's size with no counts, its header
// m's as edit leaves it.
func writeDarkSMV(t *testing.T, name string, m *models.Model, edit func(h *formats.SMVHeader)) {
	t.Helper()
	h := m.SMVHeader()
	edit(&h)
	d := m.Detector
	var b bytes.Buffer
	if err := formats.WriteSMV(&b, h, d.FPixels, d.SPixels, make([]uint16, d.FPixels*d.SPixels)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
