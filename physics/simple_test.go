package physics_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/physics"
)

// TestPixelSimple: the shortcut for the common structure gives the same
// bits as the general pixel loop, over the structures it covers, and is
// not taken where it does not apply.
func TestPixelSimple(t *testing.T) {
	inputs := inScratch(t)
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -detpixels 24 -oversample 1"
	for _, c := range []struct {
		extra  string
		simple bool
		n      [3]float64 // Na, Nb, Nc set in the parameters (a fit's N), when not 0
	}{
		{"", true, [3]float64{}},
		{"-mosaic 0.5 -mosaic_domains 4 -phi 0 -osc 1 -phisteps 3", true, [3]float64{}},
		{"-divergence 1 -divsteps 3 -dispersion 1 -dispsteps 2 -polar 0.7", true, [3]float64{}},
		{"-hkl " + inputs + "/P1.hkl -water 50", true, [3]float64{}},
		{"-nopolar -point_pixel -detector_rotx 3 -twotheta 5", true, [3]float64{}},
		{"-detpixels_x 150 -detpixels_y 4 -roi 3 140 1 2", true, [3]float64{}}, // rows of several chunks
		{"-N 40", true, [3]float64{}},
		{"-Na 33 -Nb 64 -Nc 101 -mosaic 0.5 -mosaic_domains 3", true, [3]float64{}},
		{"-Na 3", true, [3]float64{}},
		{"-Na 1 -Nb 32 -Nc 2", true, [3]float64{}},
		{"-Na 33", true, [3]float64{}},
		// N as a fit moves it: not whole, mixed, beyond the lanes' range.
		{"", true, [3]float64{5.3, 4.71, 6.02}},
		{"-mosaic 0.5 -mosaic_domains 3 -hkl " + inputs + "/P1.hkl", true, [3]float64{5, 4.5, 0.8}},
		{"", true, [3]float64{1.5, 2.25, 31.9}},
		{"-oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2", true, [3]float64{5.3, 4.71, 6.02}},
		{"", false, [3]float64{5.5, 1 << 21, 5}},
		{"-oversample 3", true, [3]float64{}},
		{"-oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 3 -mosaic 1 -mosaic_domains 2", true, [3]float64{}},
		// The -oversample_* rules (the running sum times C, P or ω after
		// every term) on the lanes.
		{"-oversample 2 -oversample_omega", true, [3]float64{}},
		{"-oversample 3 -oversample_polar -polar 0.7 -divergence 1 -divsteps 3 -dispersion 1 -dispsteps 2", true, [3]float64{}},
		{"-oversample 2 -oversample_omega -oversample_polar -mosaic 0.5 -mosaic_domains 3 -hkl " + inputs + "/P1.hkl -water 50", true, [3]float64{5.3, 4.71, 6.02}},
		{"-oversample_omega -oversample_polar -divergence 1 -divsteps 3", true, [3]float64{}}, // one sub-pixel: the row walk
		{"-oversample_omega -oversample_polar -nopolar -point_pixel -detector_thick 100 -detector_abs 500 -thicksteps 2", true, [3]float64{}},
		{"-oversample 2 -oversample_omega -detector_thick 100 -detector_abs 500 -thicksteps 3 -mosaic 1 -mosaic_domains 2", true, [3]float64{}},
		{"-oversample 2 -oversample_polar -detector_thick 100 -detector_abs 500 -thicksteps 2 -N 40", true, [3]float64{}},
		{"-detector_thick 100 -detector_abs 500 -thicksteps 2 -oversample_thick", true, [3]float64{}},
		{"-oversample 2 -oversample_omega -detector_thick 100 -detector_abs 500 -thicksteps 2 -oversample_thick", true, [3]float64{}},
		{"-oversample 3 -oversample_thick -oversample_polar -polar 0.6 -detector_thick 200 -detector_abs 300 -thicksteps 3 -mosaic 0.5 -mosaic_domains 2 -hkl " + inputs + "/P1.hkl", true, [3]float64{4.5, 6, 3.2}},
		{"-oversample 2 -oversample_omega -curved_det", false, [3]float64{}},
		{"-oversample 2 -oversample_polar -dmin 80", false, [3]float64{}},
		{"-oversample 2 -oversample_omega -round_xtal", false, [3]float64{}},
		{"-curved_det", true, [3]float64{}},
		{"-curved_det -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2 -mosaic 0.5 -mosaic_domains 3 -twotheta 20", true, [3]float64{5.3, 4.71, 6.02}},
		{"-curved_det -distance 20 -detpixels 24 -pixel 2 -hkl " + inputs + "/P1.hkl", true, [3]float64{}},
		{"-curved_det -dmin 80", false, [3]float64{}},
		{"-round_xtal", true, [3]float64{}},
		{"-round_xtal -fudge 0.3", true, [3]float64{4.5, 6, 3.2}},
		{"-gauss_xtal", true, [3]float64{}},
		{"-tophat_spots -fudge 4", true, [3]float64{}},
		{"-gauss_xtal -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2", true, [3]float64{5.3, 4.71, 6.02}},
		// -dmin: 0.5/(sin θ/λ) is 100 Å over the pixel's distance from the
		// beam in mm here, so 80 Å leaves out the outer pixels (the
		// corners are 1.7 mm out) and 3 Å none.
		{"-dmin 3", true, [3]float64{}},
		{"-dmin 80", true, [3]float64{}},
		{"-dmin 75 -mosaic 0.5 -mosaic_domains 3 -divergence 1 -divsteps 3 -dispersion 1 -dispsteps 2 -polar 0.7", true, [3]float64{}},
		{"-dmin 80 -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2 -hkl " + inputs + "/P1.hkl", true, [3]float64{5.3, 4.71, 6.02}},
		{"-dmin 80 -gauss_xtal", false, [3]float64{}},
		// Orientations repeated for the lanes up to maxRepOrient (2¹⁶),
		// beyond it a compact table (pixelsManyLanes and its copy with N
		// per axis; with sub-pixels and layers, the loop over them) for
		// the parallelepiped, and the general loops for the rest.
		{"-mosaic 0.5 -mosaic_domains 20000 -detpixels 4", true, [3]float64{}},
		{"-mosaic 0.5 -mosaic_domains 70000 -detpixels 2", true, [3]float64{}},
		{"-mosaic 0.5 -mosaic_domains 35000 -phisteps 2 -osc 0.1 -detpixels 1 -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2", true, [3]float64{5.3, 4.71, 6.02}},
		{"-mosaic 0.5 -mosaic_domains 70000 -detpixels 3 -roi 1 2 0 2 -nointerpolate -hkl " + inputs + "/P1.hkl", true, [3]float64{}},
		{"-mosaic 0.5 -mosaic_domains 70000 -detpixels 1 -round_xtal", false, [3]float64{}},
	} {
		cfg, in := freshInputs(t, base+" "+c.extra)
		if c.n != [3]float64{} {
			in.P[physics.PNa], in.P[physics.PNb], in.P[physics.PNc] = c.n[0], c.n[1], c.n[2]
		}
		// Render takes the row walk for one sub-pixel and layer, else the
		// shortcut, else the general loop.
		img := make([]float64, cfg.FPixels*cfg.SPixels)
		physics.Render(&cfg, in, img)
		nonzero := 0
		for s := 0; s < cfg.SPixels; s++ {
			for f := 0; f < cfg.FPixels; f++ {
				simple, fast, general := physics.PixelPaths(&cfg, in, f, s)
				if simple != c.simple {
					t.Fatalf("%q %v: shortcut taken %v, want %v", c.extra, c.n, simple, c.simple)
				}
				if simple && math.Float64bits(fast) != math.Float64bits(general) {
					t.Fatalf("%q %v pixel %d,%d: shortcut %.17g, general loop %.17g", c.extra, c.n, f, s, fast, general)
				}
				want := general
				if !cfg.Rendered(f, s, in.Mask) {
					want = 0
				}
				if v := img[s*cfg.FPixels+f]; math.Float64bits(v) != math.Float64bits(want) {
					t.Fatalf("%q %v pixel %d,%d: rendered %.17g, want %.17g", c.extra, c.n, f, s, v, want)
				}
				if general != 0 {
					nonzero++
				}
			}
		}
		if nonzero == 0 {
			t.Fatalf("%q: blank image", c.extra)
		}
		// The float32 image (simulate's), with every lane kernel: each
		// pixel the float64 one rounded once; on the row walk into a
		// buffer of NaN, which every row must overwrite (the ROI's cut
		// rows cleared, whole rows written in full, past the last whole
		// vector too: 150 and 24 pixels a row).
		for _, tier := range physics.AvailableVectorLanes() {
			restore := physics.SetVectorLanes(t, tier)
			img32 := make([]float32, len(img))
			if c.simple {
				for i := range img32 {
					img32[i] = float32(math.NaN())
				}
			}
			physics.Render(&cfg, in, img32)
			restore()
			for i, v := range img32 {
				if math.Float32bits(v) != math.Float32bits(float32(img[i])) {
					t.Fatalf("%q %v %s pixel %d: float32 %v, want %v", c.extra, c.n, tier, i, v, float32(img[i]))
				}
			}
		}
	}
}

// TestThickRuleWithoutSensor: -oversample_thick without a sensor
// thickness. The capture fraction of a layer of thickness 0 is
// e⁰ − e⁰ = 0 (the reference's formula), and the rule multiplies the
// running sum by it after every term: every pixel is 0, on the lanes (at
// one sub-pixel they once took the row walk, which has no capture
// fraction, and rendered the crystal) as on the general loop.
func TestThickRuleWithoutSensor(t *testing.T) {
	for _, os := range []string{"1", "2"} {
		cfg, in := freshInputs(t, "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -detpixels 24 -oversample_thick -oversample "+os)
		for _, tier := range physics.AvailableVectorLanes() {
			restore := physics.SetVectorLanes(t, tier)
			img := make([]float64, cfg.FPixels*cfg.SPixels)
			physics.Render(&cfg, in, img)
			for _, px := range [][2]int{{12, 12}, {0, 0}, {23, 5}} {
				simple, fast, general := physics.PixelPaths(&cfg, in, px[0], px[1])
				if !simple || fast != 0 || general != 0 {
					t.Errorf("-oversample %s %s pixel %v: lanes %v %g, general loop %g; want both 0", os, tier, px, simple, fast, general)
				}
			}
			for i, v := range img {
				if v != 0 {
					t.Fatalf("-oversample %s %s: pixel %d rendered %g, want 0", os, tier, i, v)
				}
			}
			restore()
		}
	}
}

// TestRenderSolidAngle: the solid angle summed by the rendering pass has
// the bits of SolidAngle's own pass, on the shortcut and the general loop,
// with ROI, oversampling, -oversample_omega (with and without a sensor
// thickness, and at one sub-pixel), thickness, curved detector and
// interpolation.
func TestRenderSolidAngle(t *testing.T) {
	inputs := inScratch(t)
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -detpixels 20"
	for _, extra := range []string{
		"-oversample 1",
		"-oversample 2 -roi 3 15 2 11",
		"-oversample 3 -oversample_omega",
		"-oversample 2 -oversample_omega -oversample_polar -detector_thick 100 -detector_abs 500 -thicksteps 2",
		"-oversample 1 -oversample_omega -mosaic 0.5 -mosaic_domains 2",
		"-oversample 2 -oversample_thick -oversample_omega -detector_thick 100 -detector_abs 500 -thicksteps 2",
		"-oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 3",
		"-curved_det -oversample 2 -oversample_omega",
		"-point_pixel -oversample 2 -roi 0 9 4 19",
		"-hkl " + inputs + "/P1.hkl -interpolate -oversample 1",
	} {
		cfg, in := kernelInputs(t, base+" "+extra)
		want := physics.SolidAngle(&cfg, in)
		got := physics.RenderSolidAngle(&cfg, in, make([]float32, cfg.FPixels*cfg.SPixels))
		if math.Float64bits(got) != math.Float64bits(want) || !(want > 0) {
			t.Errorf("%q: rendering pass %.17g, SolidAngle %.17g", extra, got, want)
		}
		if !cfg.Curved {
			if naive := naiveSolidAngle(&cfg, in); math.Abs(got-naive) > 1e-12*naive {
				t.Errorf("%q: rendering pass %.17g, term-by-term sum %.17g", extra, got, naive)
			}
		}
	}
}

// TestShortcutGradients: the loss-and-gradient shortcuts (walkSimple,
// lossRow) against the general walk, which the finite-difference tests
// cover on every structure: same loss and gradient to rounding (1e-9 of
// each value, or of its vector's length: gradientScales).
func TestShortcutGradients(t *testing.T) {
	inputs := inScratch(t)
	// The per-pixel walk takes these (lossRows); every other structure
	// here is on the loss rows. Of 9 sub-pixels and 1300 orientations,
	// chunks of 3 pixels (hklCap/(3·9·1300)) would be slower than the
	// per-pixel walk; 289 sub-pixels are more than maxLossSubs.
	perPixel := map[string]bool{
		"-oversample 3 -mosaic 0.5 -mosaic_domains 100 -phi 0 -osc 1 -phisteps 13 -detpixels_x 4 -detpixels_y 2": true,
		"-oversample 17 -detpixels 4": true,
	}
	// Interpolating structures: the per-pixel walk for the switch-off
	// point's row, the loss rows after it and, for the usual structure
	// (kernel.interpLanes), interpolating before it (LossRows, which
	// asks about every row, says no; the loss against Render's image is
	// checked all the same, below). The switch-off comes at the
	// first pixel with 2 mm pixels; at the start of row 30 of 60 with the
	// beam on the first pixel (physics.InterpolationCutoff says); and, as
	// a review found, part-way through a pixel (row 33, its third
	// evaluation) and part-way along a row (row 0, pixel 19).
	// P1_varied.hkl: P1.hkl's F are all 100, which interpolation leaves
	// as they are.
	interpolating := []string{
		"-hkl " + inputs + "/P1_varied.hkl -interpolate -pixel 2",
		"-hkl " + inputs + "/P1_varied.hkl -interpolate -pixel 0.3 -Xbeam 0 -Ybeam 0 -detpixels_y 60 -oversample 2 -mosaic 0.5 -mosaic_domains 3",
		"-hkl " + inputs + "/P1_varied.hkl -interpolate -pixel 0.3 -Xbeam 1 -Ybeam 0 -detpixels_y 60 -oversample 2",
		"-hkl " + inputs + "/P1_varied.hkl -interpolate -pixel 0.4 -Xbeam 1 -Ybeam 0 -detpixels_y 60 -oversample 2",
		// A sensor thickness: the per-pixel walk before the switch-off
		// row (its switch-off search on the lanes, laneValue).
		"-hkl " + inputs + "/P1_varied.hkl -interpolate -pixel 0.3 -Xbeam 0 -Ybeam 0 -detpixels_y 60 -detector_thick 100 -detector_abs 500 -thicksteps 2",
		// The shapes' and -dmin's loss rows after the switch-off row.
		"-hkl " + inputs + "/P1_varied.hkl -interpolate -pixel 0.3 -Xbeam 0 -Ybeam 0 -detpixels_y 60 -oversample 2 -gauss_xtal",
		"-hkl " + inputs + "/P1_varied.hkl -interpolate -pixel 0.3 -Xbeam 0 -Ybeam 0 -detpixels_y 60 -dmin 8 -water 40", // (beyond 8 Å from ~12.5 mm, row 42, on)
	}
	interpolates := map[string]bool{}
	for _, extra := range interpolating {
		perPixel[extra], interpolates[extra] = true, true
	}
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -detpixels 20 -oversample 1"
	type structure struct {
		extra string
		n     [3]float64 // Na, Nb, Nc set in the parameters, when not 0
	}
	cases := []structure{}
	for _, extra := range []string{
		"",
		"-mosaic 0.5 -mosaic_domains 4 -phi 0 -osc 1 -phisteps 3 -polar 0.8",
		"-divergence 1 -divsteps 3 -dispersion 1 -dispsteps 2 -water 40",
		"-hkl " + inputs + "/P1.hkl -nopolar -point_pixel",
		"-oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2 -mosaic 1 -mosaic_domains 2",
		"-detpixels_x 600 -detpixels_y 3 -roi 2 590 1 1", // rows of several chunks (589 pixels: 256, 256, 77)
		// 200 orientations: chunks of minVecChunk = 64 pixels (hklBudget
		// would give 27), the row's last of 22.
		"-mosaic 0.5 -mosaic_domains 50 -phi 0 -osc 1 -phisteps 4 -detpixels_x 150 -detpixels_y 2",
		// 6000 orientations: chunks of 7 pixels (hklCap/(3·6000)), on one
		// lane.
		"-mosaic 0.5 -mosaic_domains 100 -phi 0 -osc 1 -phisteps 60 -detpixels_x 20 -detpixels_y 1",
		"-beam_vector 1 0 0 -polar_vector 1 0 0", // no E-B plane: cos2ψ = 1
		"-beam_vector 1 0 0 -polar_vector 0 0 1", // 2θ ≤ 1.6°
		"-water 40 -mosaic 0.5 -mosaic_domains 3 -polar 0.6 -divergence 1 -divsteps 2 -roi 2 17 0 19",
		// Sub-pixels in the loss rows.
		"-oversample 2",
		"-oversample 3 -mosaic 0.5 -mosaic_domains 3 -polar 0.8 -water 40 -roi 2 17 0 19",
		"-oversample 2 -divergence 1 -divsteps 3 -dispersion 1 -dispsteps 2 -point_pixel -nopolar",
		"-oversample 2 -hkl " + inputs + "/P1.hkl -detpixels_x 600 -detpixels_y 3 -roi 2 590 1 1",
		// Sensor thickness: the capture fraction of the last layer's first
		// sub-pixel.
		"-detector_thick 100 -detector_abs 500 -thicksteps 1",
		"-oversample 2 -detector_thick 200 -detector_abs 300 -thicksteps 3 -polar 0.7 -mosaic 0.5 -mosaic_domains 2",
		"-detector_thick 150 -detector_abs 400 -thicksteps 2 -point_pixel -nopolar -twotheta 20 -detector_rotx 5",
		// 200 orientations of 4 sub-pixels: chunks of 48 pixels
		// (hklCap/(3·4·200) = 54, in whole vectors); 2000 of them:
		// chunks of 5, on one lane.
		"-oversample 2 -mosaic 0.5 -mosaic_domains 50 -phi 0 -osc 1 -phisteps 4 -detpixels_x 60 -detpixels_y 2",
		"-oversample 2 -mosaic 0.5 -mosaic_domains 100 -phi 0 -osc 1 -phisteps 20 -detpixels_x 12 -detpixels_y 1",
		"-oversample 3 -mosaic 0.5 -mosaic_domains 100 -phi 0 -osc 1 -phisteps 13 -detpixels_x 4 -detpixels_y 2",
		"-oversample 17 -detpixels 4",
	} {
		cases = append(cases, structure{extra: extra})
	}
	for _, extra := range interpolating {
		cases = append(cases, structure{extra: extra})
	}
	// -dmin (termsGradAxesDminLanes): the outer pixels
	// beyond 80 Å (the corners at 1.7 mm; 0.5/(sin θ/λ) is 100 Å over the
	// distance from the beam in mm), with a water background (their
	// polarization 0: no intensity), -nopolar (1), sub-pixels (a chunk
	// with a pixel whose first sub-pixel is beyond and a later one not
	// takes the per-pixel walk), domains and HKL, and several sources
	// (where the first is beyond the limit and a later one not, that
	// chunk takes the per-pixel walk too: 10 % dispersion).
	for _, extra := range []string{
		"-dmin 80",
		"-dmin 80 -water 40 -polar 0.7",
		"-dmin 75 -water 40 -nopolar",
		"-dmin 78 -oversample 2 -water 40",
		"-dmin 80 -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2 -mosaic 0.5 -mosaic_domains 3 -hkl " + inputs + "/P1.hkl",
		"-dmin 3",
	} {
		cases = append(cases, structure{extra: extra})
	}
	cases = append(cases, structure{"-dmin 80 -polar 0.8", [3]float64{5.3, 4.71, 6.02}})
	cases = append(cases, structure{extra: "-dmin 80 -dispersion 10 -dispsteps 3 -divergence 1 -divsteps 2 -water 40"},
		structure{extra: "-dmin 80 -dispersion 1 -dispsteps 2 -polar 0.5"})
	// A Kahn factor not 0 where cos 2ψ's rounding shows: the loss rows'
	// polarization had (e² − b²)·(1/den) where the forward has
	// (e² − b²)/den (1-ulp intensities, found by a review).
	cases = append(cases, structure{extra: "-distance 20 -pixel 1 -divergence 1 -divsteps 3 -polar 0.4"},
		structure{extra: "-distance 20 -pixel 1 -divergence 1 -divsteps 3 -polar 0.4 -gauss_xtal -fudge 3 -N 3"})
	// The spot shapes (their own terms and sums: termsGradShapeLanes).
	for _, extra := range []string{
		"-gauss_xtal",
		"-gauss_xtal -fudge 0.7 -mosaic 0.5 -mosaic_domains 3 -hkl " + inputs + "/P1.hkl -polar 0.8",
		"-gauss_xtal -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2 -divergence 1 -divsteps 2",
		"-gauss_xtal -water 40 -mosaic 0.5 -mosaic_domains 50 -phi 0 -osc 1 -phisteps 40 -detpixels_x 20 -detpixels_y 2", // one lane
		"-round_xtal",
		"-round_xtal -fudge 0.3 -oversample 2 -mosaic 0.5 -mosaic_domains 2",
		"-tophat_spots -fudge 4",
		"-tophat_spots -fudge 2 -oversample 2 -hkl " + inputs + "/P1.hkl",
	} {
		cases = append(cases, structure{extra: extra})
	}
	cases = append(cases, structure{"-gauss_xtal", [3]float64{5.3, 4.71, 6.02}}, structure{"-round_xtal", [3]float64{4.5, 6, 3.2}},
		structure{"-tophat_spots -fudge 3", [3]float64{4.5, 6, 3.2}})
	// N as a fit moves it (not whole; one axis at N ≤ 1; mixed).
	cases = append(cases, structure{"", [3]float64{5.3, 4.71, 6.02}},
		structure{"-mosaic 0.5 -mosaic_domains 3 -polar 0.8 -water 40", [3]float64{5, 4.5, 0.8}},
		structure{"-oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2", [3]float64{2.5, 3, 7.25}},
		structure{"-oversample 2 -polar 0.8", [3]float64{5.3, 1, 6}},
		// Whole N beyond the Chebyshev form (the ratio of sines, as for
		// N not whole).
		structure{"-Na 33 -Nb 40 -Nc 64 -polar 0.8", [3]float64{}},
		structure{"-oversample 2", [3]float64{48, 5, 33.5}})
	for _, sc := range cases {
		extra := sc.extra
		cfg, in := freshInputs(t, base+" "+extra)
		if sc.n != [3]float64{} {
			in.P[physics.PNa], in.P[physics.PNb], in.P[physics.PNc] = sc.n[0], sc.n[1], sc.n[2]
			extra += fmt.Sprint(" N ", sc.n)
		}
		n := cfg.FPixels * cfg.SPixels
		// Every loss kind, against an "observation" with zeros, leaving
		// some pixels out by weight.
		obs, wts, bg := lossData(n)
		// The loss rows' intensities are Render's bits: against
		// Render's image the squared residuals and their gradient are
		// exactly zero.
		if rows := physics.LossRows(&cfg, in); rows == perPixel[sc.extra] {
			t.Errorf("%q: on the loss rows %v", extra, rows)
		} else if rows || interpolates[sc.extra] {
			img := make([]float64, n)
			physics.Render(&cfg, in, img)
			zero := make([]float64, physics.NParams)
			if v := physics.LossGradient(&cfg, in, &physics.PixelLoss{Kind: physics.LossSSE, Observed: img}, zero); v != 0 {
				t.Errorf("%q: squared residuals against Render's image %g", extra, v)
			}
			for j, v := range zero {
				if v != 0 {
					t.Errorf("%q: ∂/∂P[%d] of the squared residuals against Render's image %g", extra, j, v)
				}
			}
		}
		for _, l := range []physics.PixelLoss{{Kind: physics.LossPoisson, Observed: obs, Weights: wts},
			{Kind: physics.LossSSE, Observed: obs}, {Kind: physics.LossLinear, Observed: obs}, {Kind: physics.LossSum, Weights: wts},
			{Kind: physics.LossGauss, Observed: obs, ReadNoise: 1.5}, {Kind: physics.LossGauss, Observed: obs, Weights: wts, Background: bg},
			{Kind: physics.LossPoisson, Observed: obs, Background: bg}, {Kind: physics.LossSSE, Observed: obs, Background: bg}} {
			fast, general := make([]float64, physics.NParams), make([]float64, physics.NParams)
			lf := physics.LossGradient(&cfg, in, &l, fast)
			lg := physics.LossGradientGeneral(&cfg, in, &l, general)
			if math.Abs(lf-lg) > 1e-12*math.Abs(lg) || !(lg != 0) {
				t.Errorf("%q, %s: loss %.17g by the shortcut, %.17g by the general walk", extra, l.Kind, lf, lg)
			}
			scale := gradientScales(general)
			var termScale []float64
			for j := range fast {
				if d := math.Abs(fast[j] - general[j]); d > 1e-9*scale[j] && j >= physics.PLambda {
					// A scalar's gradient that cancels: 1e-9 of the sum
					// of its per-pixel terms' magnitudes.
					if termScale == nil {
						termScale = termMagnitudes(&cfg, in, &l)
					}
					if d <= 1e-9*termScale[j] {
						continue
					}
				}
				if math.Abs(fast[j]-general[j]) > 1e-9*scale[j] {
					t.Errorf("%q, %s: ∂L/∂P[%d] %.12g by the shortcut, %.12g by the general walk", extra, l.Kind, j, fast[j], general[j])
				}
			}
		}
	}
}

// TestLossRowCaptureZero: where the last layer's capture fraction C at a
// pixel's first sub-pixel is 0 (the reference then takes a later
// sub-pixel's), or where g·C underflows, the loss rows leave that chunk to
// the per-pixel walk; masks with sub-pixels and layers too.
//
// The first structure makes C round to exactly 0: a 1 µm sensor in two
// layers with an attenuation length of 3.85e16 µm gives C = e^(−a) −
// e^(−2a) with a ≈ 2.6e-17/(d·n) (d·n the obliquity, 1 to ~0.84 at 1 mm
// from a 2 mm detector), and e^(−2a) rounds to 1 where 2a < 2^(−54): C is
// 0 at the first sub-pixel of the middle pixels and not at all their
// later ones. Against zero counts (squared residuals) those pixels' g is
// 0 at C = 0, so only the capture test hands them on.
//
// The second makes g·C underflow: two layers 1.2 mm apart (the
// reference's step, thickness/(layers − 1)) and an attenuation length of
// 1.7 µm make a ≈ 706/(d·n), C below the smallest float64 (e^(−745))
// where d·n < 0.95 and tiny elsewhere (intensities lifted by the
// fluence); the linear loss takes only the pixels with counts.
func TestLossRowCaptureZero(t *testing.T) {
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 1 -pixel 0.1 -detpixels 20 "
	type structure struct {
		extra   string
		fluence float64 // set in the parameters when not 0
		counts  bool    // observed counts: the image ×(1 + 0.1·(i mod 5)); else zeros
	}
	for _, sc := range []structure{
		{extra: "-oversample 2 -detector_thick 1 -detector_abs 3.85e16 -thicksteps 2"},
		{extra: "-oversample 3 -detector_thick 1 -detector_abs 3.85e16 -thicksteps 2 -polar 0.6"},
		{extra: "-oversample 1 -detector_thick 1200 -detector_abs 1.7 -thicksteps 2", fluence: 1e280, counts: true},
		{extra: "-oversample 2 -detector_thick 1200 -detector_abs 1.7 -thicksteps 2", fluence: 1e280, counts: true},
	} {
		for _, masked := range []bool{false, true} {
			cfg, in := freshInputs(t, base+sc.extra)
			if sc.fluence != 0 {
				in.P[physics.PFluence] = sc.fluence // (beyond what the command line takes)
			}
			if !physics.LossRows(&cfg, in) {
				t.Fatalf("%q: not on the loss rows", sc.extra)
			}
			n := cfg.FPixels * cfg.SPixels
			img := make([]float64, n)
			physics.Render(&cfg, in, img)
			zeros := 0
			for _, v := range img {
				if v == 0 {
					zeros++
				}
			}
			if sc.counts && (zeros == 0 || zeros == n) {
				t.Fatalf("%q: %d of %d pixels are 0: the case does not mix captured and uncaptured pixels", sc.extra, zeros, n)
			}
			if masked {
				maskRowsColumn(&cfg, in)
			}
			obs := make([]float64, n)
			losses := []physics.PixelLoss{{Kind: physics.LossSSE, Observed: obs}}
			if sc.counts {
				for i := range obs {
					obs[i] = img[i] * (1 + 0.1*float64(i%5))
				}
				losses = append(losses, physics.PixelLoss{Kind: physics.LossLinear, Observed: obs})
			}
			for _, l := range losses {
				what := fmt.Sprintf("%q mask %v, %s", sc.extra, masked, l.Kind)
				fast, general := make([]float64, physics.NParams), make([]float64, physics.NParams)
				lf := physics.LossGradient(&cfg, in, &l, fast)
				lg := physics.LossGradientGeneral(&cfg, in, &l, general)
				if math.Abs(lf-lg) > 1e-12*math.Abs(lg) || !(lg != 0) {
					t.Errorf("%s: loss %.17g by the shortcut, %.17g by the general walk", what, lf, lg)
				}
				scale := gradientScales(general)
				var termScale []float64
				for j := range fast {
					d := math.Abs(fast[j] - general[j])
					if d > 1e-9*scale[j] && j >= physics.PLambda {
						if termScale == nil {
							termScale = termMagnitudes(&cfg, in, &l)
						}
						if d <= 1e-9*termScale[j] {
							continue
						}
					}
					if d > 1e-9*scale[j] {
						t.Errorf("%s: ∂L/∂P[%d] %.12g by the shortcut, %.12g by the general walk", what, j, fast[j], general[j])
					}
				}
			}
		}
	}
}

// gradientScales returns, per packed parameter, the size its gradient's
// rounding is relative to: for the 3-vectors (positions, axes, cell
// vectors) the length of the vector's gradient, for the rest the value.
// The walks sum the same terms in different ways (the loss rows' row sums,
// the general walk's per-pixel products), so a component much smaller
// than its vector, such as the along-beam one at small angles, may differ
// by more than its own 1e-9 and still agree to 1e-9 of the vector.
func gradientScales(g []float64) []float64 {
	s := make([]float64, len(g))
	for j, v := range g {
		s[j] = math.Abs(v)
	}
	for _, at := range []int{physics.PPix0, physics.PFdet, physics.PSdet, physics.PObs, physics.PCellA, physics.PCellB, physics.PCellC,
		physics.PAStar, physics.PBStar, physics.PCStar} {
		n := math.Sqrt(g[at]*g[at] + g[at+1]*g[at+1] + g[at+2]*g[at+2])
		s[at], s[at+1], s[at+2] = n, n, n
	}
	return s
}

// termMagnitudes returns, per packed parameter, Σ_i |∂L_i/∂P| over the
// pixels' loss terms L_i (each pixel's gradient by the general walk): the
// size of the rounding of a gradient whose terms cancel.
func termMagnitudes(cfg *physics.Config, in *physics.Inputs, l *physics.PixelLoss) []float64 {
	n := cfg.FPixels * cfg.SPixels
	img := make([]float64, n)
	physics.Render(cfg, in, img)
	one := make([]float64, n)
	g := make([]float64, physics.NParams)
	out := make([]float64, physics.NParams)
	for i := range one {
		_, dt := l.Term(i, img[i])
		if dt == 0 || (l.Weights != nil && l.Weights[i] == 0) {
			continue
		}
		one[i] = dt
		physics.Gradient(cfg, in, one, g)
		for j, v := range g {
			out[j] += math.Abs(v)
		}
		one[i] = 0
	}
	return out
}

// freshInputs is kernelInputs without the structure factors an earlier
// -hkl left in the working directory (Fdump.bin, which nanoBragg reads
// when no -hkl is given): only a command line with -hkl has a table.
func freshInputs(t *testing.T, argv string) (physics.Config, *physics.Inputs) {
	t.Helper()
	if err := os.Remove("Fdump.bin"); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	cfg, in := kernelInputs(t, argv)
	if cfg.HasHKL != strings.Contains(argv, "-hkl ") {
		t.Fatalf("%q: structure-factor table %v", argv, cfg.HasHKL)
	}
	return cfg, in
}

// lossData returns an "observation" of n pixels with zeros, weights that
// leave some pixels out, and a background, for the loss tests.
func lossData(n int) (obs, wts, bg []float64) {
	obs, wts, bg = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range obs {
		obs[i] = float64(i % 7)
		if i%13 != 5 {
			wts[i] = 0.5 + float64(i%3)/4
		}
		bg[i] = 0.25 + float64(i%5)/8
	}
	return obs, wts, bg
}

// inScratch moves the test into a scratch directory (reading -hkl writes
// Fdump.bin into the working one) and returns the absolute path of the
// input files.
func inScratch(t *testing.T) string {
	inputs, err := filepath.Abs("../testdata/inputs")
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	return inputs
}

// kernelInputs returns the kernel's structure and inputs for a command line.
func kernelInputs(t testing.TB, argv string) (physics.Config, *physics.Inputs) {
	args, err := models.ParseArgs(strings.Fields(argv))
	if err != nil {
		t.Fatal(err)
	}
	m, err := args.Model(nil)
	if err != nil {
		t.Fatal(err)
	}
	return graph.KeyOf(m).Pixels, graph.FloatInputs(m)
}

// naiveSolidAngle is the reference's solid-angle statistic written out
// term by term from its definition (nanoBragg's pixel loop): over rendered
// pixels, sensor layers and sub-pixels, add the pixel's ω — the first
// sub-pixel's, or each sub-pixel's own under -oversample_omega — where
// ω = pixel²/R²·(close distance)/R (1/R² for point pixels), R the distance
// from the sample to the sub-pixel centre; divide by the steps. Flat
// detectors only.
func naiveSolidAngle(c *physics.Config, in *physics.Inputs) float64 {
	p := in.P
	v := func(i int) [3]float64 { return [3]float64{p[i], p[i+1], p[i+2]} }
	pix0, fd, sd, od := v(physics.PPix0), v(physics.PFdet), v(physics.PSdet), v(physics.PObs)
	pitch, step := p[physics.PPixel], p[physics.PThickStep]
	closeD := pix0[0]*od[0] + pix0[1]*od[1] + pix0[2]*od[2]
	os := c.Oversample
	sub := pitch / float64(os)
	omegaAt := func(f, s, subF, subS, t int) float64 {
		fdet := sub*float64(f*os+subF) + sub/2
		sdet := sub*float64(s*os+subS) + sub/2
		var r2 float64
		for i := 0; i < 3; i++ {
			x := pix0[i] + fdet*fd[i] + sdet*sd[i] + float64(t)*step*od[i]
			r2 += x * x
		}
		r := math.Sqrt(r2)
		if c.PointPixel {
			return 1 / r2
		}
		return pitch * pitch / r2 * closeD / r
	}
	sum := 0.0
	for s := 0; s < c.SPixels; s++ {
		for f := 0; f < c.FPixels; f++ {
			if !c.Rendered(f, s, in.Mask) {
				continue
			}
			first := omegaAt(f, s, 0, 0, 0)
			for t := 0; t < c.ThickSteps; t++ {
				for subS := 0; subS < os; subS++ {
					for subF := 0; subF < os; subF++ {
						if c.OversampleOmega {
							sum += omegaAt(f, s, subF, subS, t)
						} else {
							sum += first
						}
					}
				}
			}
		}
	}
	return sum / float64(c.Steps())
}

// maskRowsColumn masks every third row (from the second) and the middle
// column of the image out.
func maskRowsColumn(cfg *physics.Config, in *physics.Inputs) {
	n := cfg.FPixels * cfg.SPixels
	in.Mask = make([]float64, n)
	for i := range in.Mask {
		if (i/cfg.FPixels)%3 != 1 && i%cfg.FPixels != cfg.FPixels/2 {
			in.Mask[i] = 1
		}
	}
	cfg.HasMask = true
}

// writeHolesHKL writes holes.hkl into the working directory: a table with
// holes, reflections with h+k+l odd not listed (they take the default F,
// and ∂/∂F flows to them).
func writeHolesHKL(t *testing.T) {
	var hkl strings.Builder
	for h := -4; h <= 4; h++ {
		for k := -4; k <= 4; k++ {
			for l := -4; l <= 4; l++ {
				if (h+k+l)%2 == 0 {
					fmt.Fprintf(&hkl, "%d %d %d %d\n", h, k, l, 50+h*h+2*k*k+3*l*l)
				}
			}
		}
	}
	if err := os.WriteFile("holes.hkl", []byte(hkl.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
