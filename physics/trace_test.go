package physics_test

import (
	"math"
	"testing"

	"github.com/gobragg/gobragg/physics"
)

// TestTrace: a pixel's trace (-printout) ends with the pixel value Render
// computes, bit for bit, over the structures the general loop covers;
// pixels outside the ROI are not traced.
func TestTrace(t *testing.T) {
	inputs := inScratch(t)
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -detpixels 16 -oversample 2"
	for _, extra := range []string{
		"",
		"-mosaic 0.5 -mosaic_domains 3 -phi 0 -osc 1 -phisteps 2 -divergence 1 -divsteps 2 -polar 0.7",
		"-hkl " + inputs + "/P1_varied.hkl -interpolate -N 2 -pixel 0.4", // switches interpolation off mid-image
		"-oversample_omega -oversample_polar -detector_thick 100 -detector_abs 500 -thicksteps 2 -oversample_thick",
		"-round_xtal -curved_det -dmin 20 -water 10",
		"-roi 2 9 3 12",
	} {
		cfg, in := freshInputs(t, base+" "+extra)
		img := make([]float64, cfg.FPixels*cfg.SPixels)
		physics.Render(&cfg, in, img)
		tr := physics.NewTracer(&cfg, in)
		if _, ok := tr.Pixel(-1, 0); ok {
			t.Errorf("%q: pixel -1 traced", extra)
		}
		for s := 0; s < cfg.SPixels; s++ {
			for f := 0; f < cfg.FPixels; f++ {
				got, ok := tr.Pixel(f, s)
				if ok != cfg.Rendered(f, s, in.Mask) {
					t.Fatalf("%q pixel %d,%d: traced %v", extra, f, s, ok)
				}
				if ok && math.Float64bits(got.Pixel) != math.Float64bits(img[s*cfg.FPixels+f]) {
					t.Fatalf("%q pixel %d,%d: trace %.17g, Render %.17g", extra, f, s, got.Pixel, img[s*cfg.FPixels+f])
				}
				if ok && (got.Steps != cfg.Steps() || got.Omega <= 0 || got.Polar <= 0) {
					t.Fatalf("%q pixel %d,%d: trace %+v", extra, f, s, got)
				}
			}
		}
	}
}
