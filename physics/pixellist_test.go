package physics_test

import (
	"math"
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
// chunks per row, sub-pixels, a region of interest, a mask) and the
// per-pixel walk.
func TestPixelList(t *testing.T) {
	inScratch(t)
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -oversample 1"
	for _, extra := range []string{
		"-detpixels 24",
		"-detpixels_x 600 -detpixels_y 3 -roi 2 590 0 2", // rows of several chunks
		"-detpixels 20 -oversample 2 -mosaic 0.5 -mosaic_domains 3 -water 40",
		"-detpixels 20 -mask",                   // (a mask: every third row and the middle column out)
		"-detpixels 8 -oversample 17",           // the per-pixel walk
		"-detpixels 16 -roi 3 12 2 13 -nopolar", // ROI inside the boxes' rows
	} {
		masked := strings.Contains(extra, "-mask")
		cfg, in := kernelInputs(t, base+" "+strings.ReplaceAll(extra, "-mask", ""))
		n := cfg.FPixels * cfg.SPixels
		if masked {
			in.Mask = make([]float64, n)
			for i := range in.Mask {
				if (i/cfg.FPixels)%3 != 1 && i%cfg.FPixels != cfg.FPixels/2 {
					in.Mask[i] = 1
				}
			}
			cfg.HasMask = true
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
				if wl == 0 || math.IsNaN(wl) {
					t.Fatalf("%s: loss %g: the case tests nothing", what, wl)
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
