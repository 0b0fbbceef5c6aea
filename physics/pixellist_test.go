package physics_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/physics"
)

// TestPixelList: a loss given as a pixel list (PixelLoss.Pixels, the
// listed pixels' values only) is the loss of the full images with weight
// 0 off the list, and comes out with the same bits: the loss and every
// ∂L/∂P of LossGradient, on every lane kernel, and Value of the rendered
// image. The full images are the independent form (the loss as it was
// before the list existed); the list holds the pixels of non-zero weight
// in spot-like boxes and, listed too, some pixels of weight 0, which it
// leaves out as the full images do. Structures: the loss rows (several
// chunks per row, chunks shortened by many orientations, sub-pixels,
// sensor layers with the chunks that fall back to the per-pixel walk,
// -dmin, the spot shapes, interpolation, a region of interest, a mask)
// and the per-pixel walk (the curved detector, -oversample_thick, 17²
// sub-pixels).
func TestPixelList(t *testing.T) {
	inputs := inScratch(t)
	writeHolesHKL(t) // (for the interpolation's lookups)
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -oversample 1"
	for _, extra := range []string{
		"-detpixels 24",
		"-detpixels_x 600 -detpixels_y 3 -roi 2 590 0 2", // rows of several chunks
		"-detpixels 20 -oversample 2 -mosaic 0.5 -mosaic_domains 3 -water 40",
		"-detpixels 20 -mask",                   // (a mask: every third row and the middle column out)
		"-detpixels 8 -oversample 17",           // the per-pixel walk
		"-detpixels 16 -roi 3 12 2 13 -nopolar", // ROI inside the boxes' rows
		"-detpixels 40 -hkl " + inputs + "/P1.hkl -nopolar -point_pixel -roi 3 35 2 30 -mask",
		"-detpixels_x 150 -detpixels_y 2 -mosaic 0.5 -mosaic_domains 300", // chunks of 64 (hklCap)
		"-detpixels_x 9 -detpixels_y 2 -mosaic 0.5 -mosaic_domains 5500",  // chunks of one lane
		"-detpixels 20 -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2",
		"-detpixels 20 -detector_thick 100 -detector_abs 500 -thicksteps 2 -oversample_thick", // (the per-pixel walk)
		"-detpixels 20 -oversample 2 -detector_thick 1e-9 -detector_abs 1e9 -thicksteps 2",    // (capture 0: chunks fall back to it)
		"-detpixels 40 -dmin 60 -water 40 -polar 0.6 -mask",
		"-detpixels 40 -dmin 60 -oversample 2 -mosaic 0.5 -mosaic_domains 3",
		"-detpixels 20 -gauss_xtal -mosaic 0.5 -mosaic_domains 4 -polar 0.8",
		"-detpixels 20 -round_xtal -fudge 0.3 -divergence 1 -divsteps 3 -water 40",
		"-detpixels 20 -tophat_spots -fudge 3 -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2",
		"-detpixels 20 -curved_det -mask",
		"-detpixels 40 -hkl holes.hkl -cell 20 20 20 90 90 90 -distance 25 -Xbeam 0 -Ybeam 2 -interpolate -polar 0.5",
		"-detpixels 20 -hkl " + inputs + "/P1_varied.hkl -interpolate -cell 100 100 100 90 90 90 -lambda 6.2 -oversample 2 -mosaic 0.5 -mosaic_domains 3 -water 40",
	} {
		if err := os.Remove("Fdump.bin"); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		masked := strings.Contains(extra, "-mask")
		cfg, in := kernelInputs(t, base+" "+strings.ReplaceAll(extra, "-mask", ""))
		n := cfg.FPixels * cfg.SPixels
		if masked {
			maskRowsColumn(&cfg, in)
		}
		img := make([]float64, n)
		physics.Render(&cfg, in, img)
		obs, wts, bg := lossData(n)
		// Boxes: pixels whose column mod 11 and row mod 5 are small;
		// of those, the ones lossData weighs 0 are listed as well.
		var list []int32
		for i := range wts {
			f, s := i%cfg.FPixels, i/cfg.FPixels
			if f%11 < 6 && s%5 < 3 {
				list = append(list, int32(i))
			} else {
				wts[i] = 0
			}
		}
		pick := func(full []float64) []float64 {
			if full == nil {
				return nil
			}
			out := make([]float64, len(list))
			for j, i := range list {
				out[j] = full[i]
			}
			return out
		}
		coef := make([]float64, n) // LossLinear's coefficients, 0 off the boxes
		for i := range coef {
			if wts[i] != 0 {
				coef[i] = obs[i] - 3
			}
		}
		informative := false // (some loss not 0 nor NaN)
		for _, full := range []physics.PixelLoss{
			{Kind: physics.LossPoisson, Observed: obs, Weights: wts, Background: bg},
			{Kind: physics.LossPoisson, Observed: obs, Weights: wts},
			{Kind: physics.LossSSE, Observed: obs, Weights: wts},
			{Kind: physics.LossSum, Weights: wts, Background: bg},
			{Kind: physics.LossGauss, Observed: obs, Weights: wts, Background: bg, ReadNoise: 1.5},
			{Kind: physics.LossLinear, Observed: coef},
		} {
			listed := physics.PixelLoss{Kind: full.Kind, Observed: pick(full.Observed), Weights: pick(full.Weights),
				Background: pick(full.Background), ReadNoise: full.ReadNoise, Pixels: list}
			if err := listed.Check(n); err != nil {
				t.Fatalf("%s, %s: %v", extra, full.Kind, err)
			}
			what := extra + ", " + full.Kind.String()
			if a, b := full.Value(img), listed.Value(img); math.Float64bits(a) != math.Float64bits(b) {
				t.Errorf("%s: Value %.17g listed, %.17g full", what, b, a)
			}
			for _, tier := range physics.AvailableVectorLanes() {
				physics.SetVectorLanes(t, tier)
				want, got := make([]float64, physics.NParams), make([]float64, physics.NParams)
				wl := physics.LossGradient(&cfg, in, &full, want)
				gl := physics.LossGradient(&cfg, in, &listed, got)
				if wl != 0 && !math.IsNaN(wl) {
					informative = true
				}
				if math.Float64bits(wl) != math.Float64bits(gl) {
					t.Errorf("%s, %s lanes: loss %.17g listed, %.17g full", what, tier, gl, wl)
				}
				for j := range want {
					if math.Float64bits(want[j]) != math.Float64bits(got[j]) {
						t.Errorf("%s, %s lanes: ∂L/∂P[%d] %.17g listed, %.17g full", what, tier, j, got[j], want[j])
					}
				}
			}
		}
		if !informative {
			t.Fatalf("%s: every loss 0 or NaN: the case tests nothing", extra)
		}
	}
}

// TestPixelListCheck: a pixel list out of order, repeated or outside the
// image, or values not one per listed pixel, is refused with a message
// naming it.
func TestPixelListCheck(t *testing.T) {
	obs := []float64{1, 2, 3}
	for _, c := range []struct {
		l    physics.PixelLoss
		want string
	}{
		{physics.PixelLoss{Kind: physics.LossSSE, Observed: obs, Pixels: []int32{4, 2, 7}}, "2 after 4"},
		{physics.PixelLoss{Kind: physics.LossSSE, Observed: obs, Pixels: []int32{2, 2, 7}}, "2 after 2"},
		{physics.PixelLoss{Kind: physics.LossSSE, Observed: obs, Pixels: []int32{-1, 2, 7}}, "outside"},
		{physics.PixelLoss{Kind: physics.LossSSE, Observed: obs, Pixels: []int32{1, 2, 10}}, "outside"},
		{physics.PixelLoss{Kind: physics.LossSSE, Observed: obs, Pixels: []int32{1, 2}}, "observed image has 3 pixels, the pixel list 2"},
		{physics.PixelLoss{Kind: physics.LossSum, Weights: obs, Pixels: []int32{1, 2, 3, 4}}, "weight image has 3 pixels, the pixel list 4"},
		{physics.PixelLoss{Kind: physics.LossSum, Background: obs, Pixels: []int32{1}}, "background image has 3 pixels, the pixel list 1"},
	} {
		err := c.l.Check(10)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.l.Pixels, err, c.want)
		}
	}
	ok := physics.PixelLoss{Kind: physics.LossSSE, Observed: obs, Weights: obs, Background: obs, Pixels: []int32{0, 5, 9}}
	if err := ok.Check(10); err != nil {
		t.Errorf("a good list: %v", err)
	}
}
