package app

import (
	"io"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/graph/fit"
)

// TestFitImagesShareTable: a fit of a series of images given as files
// builds a model per image from the same flags, their φ from the headers.
// The structure factors are read once and shared (each model read its own
// grid, a copy per image of a table that can take most of the memory).
func TestFitImagesShareTable(t *testing.T) {
	inDir(t, []string{"P1_varied.hkl"}, func() {
		base := append(withCell("70", "80", "90", "75", "85", "95"), "-hkl", "P1_varied.hkl", "-detpixels", "64", "-osc", "1")
		for i, phi := range []string{"0", "1"} {
			name := []string{"img_001.img", "img_002.img"}[i]
			if err := Simulate(append(append([]string{}, base...), "-phi", phi, "-intfile", name), io.Discard); err != nil {
				t.Fatal(err)
			}
		}
		lo := lossOptions{Loss: "poisson"}
		inputs, _, _, _, err := fitInputs(&lo, []string{"img_001.img", "img_002.img"}, base, "cell,orientation", "",
			fit.Pixels{AllPixels: true}, false, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		g0, g1 := inputs[0].obj.Model.Crystal.HKL, inputs[1].obj.Model.Crystal.HKL
		if g0 == nil || g0 != g1 {
			t.Errorf("the images' structure factors: %p and %p, want one grid", g0, g1)
		}
		if inputs[0].phi != 0 || inputs[1].phi != 1 {
			t.Errorf("φ from the headers: %g and %g, want 0 and 1", inputs[0].phi, inputs[1].phi)
		}
		if v, _ := inputs[1].obj.Model.Get("phi"); v != 1 {
			t.Errorf("the second image's model has φ %g°", v)
		}
	})
}

// TestWarnNotDifferentiable: one warning line per reason, naming its
// parameters (a fit of cell and orientation with an -hkl table printed
// nine lines, one per parameter, all the same).
func TestWarnNotDifferentiable(t *testing.T) {
	inDir(t, []string{"P1_varied.hkl"}, func() {
		m := argsModel(t, append(withCell("70", "80", "90", "75", "85", "95"), "-hkl", "P1_varied.hkl", "-detpixels", "64")...)
		var log strings.Builder
		warnNotDifferentiable(&log, m, []string{"a", "Na", "orient_x"})
		want := "WARNING: a, orient_x: nearest-reflection structure factors jump at half-integer hkl (-interpolate makes them smooth); their gradients ignore the jumps\n"
		if log.String() != want {
			t.Errorf("warnings:\n%s\nwant\n%s", log.String(), want)
		}
	})
}
