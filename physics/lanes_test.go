package physics_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/physics"
	"github.com/gobragg/gobragg/physics/internal/lanegen"
)

// goldenCommandLines returns the golden set's command lines (and the
// input files each needs) from the manifest.
func goldenCommandLines(t *testing.T) []struct {
	ID      string   `json:"id"`
	Args    []string `json:"args"`
	Inputs  []string `json:"inputs"`
	FPixels int      `json:"fpixels"`
	SPixels int      `json:"spixels"`
} {
	b, err := os.ReadFile("../testdata/golden/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []struct {
		ID      string   `json:"id"`
		Args    []string `json:"args"`
		Inputs  []string `json:"inputs"`
		FPixels int      `json:"fpixels"`
		SPixels int      `json:"spixels"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestLanesBits: on every golden case, every lane kernel this binary and
// CPU run (AvailableVectorLanes) renders the bits of the general loops,
// in float32 (as simulate stores the image) and float64, with the same
// solid angle; and the loss rows give one loss and one gradient whatever
// the lanes.
func TestLanesBits(t *testing.T) {
	cases := goldenCommandLines(t)
	inputs := inScratch(t)
	tiers := physics.AvailableVectorLanes()
	t.Logf("lane kernels: %s", strings.Join(tiers, ", "))
	defer physics.SetVectorLanes(t, physics.VectorLanes())()
	for _, gc := range cases {
		t.Run(gc.ID, func(t *testing.T) {
			n := gc.FPixels * gc.SPixels
			if testing.Short() && n > 512*512 {
				t.Skipf("%d pixels: long case, run without -short", n)
			}
			args := strings.Join(gc.Args, " ")
			for _, in := range gc.Inputs {
				// The command lines name their input files in the working
				// directory.
				args = strings.ReplaceAll(args, " "+in, " "+filepath.Join(inputs, in))
			}
			if err := os.Remove("Fdump.bin"); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			cfg, in := kernelInputs(t, args)
			want32 := make([]float32, n)
			wantSolid := physics.RenderGeneral(&cfg, in, want32)
			want64 := make([]float64, n)
			physics.RenderGeneral(&cfg, in, want64)
			for _, tier := range tiers {
				physics.SetVectorLanes(t, tier)
				got32 := make([]float32, n)
				solid := physics.RenderSolidAngle(&cfg, in, got32)
				got64 := make([]float64, n)
				physics.Render(&cfg, in, got64)
				if math.Float64bits(solid) != math.Float64bits(wantSolid) {
					t.Errorf("%s: solid angle %.17g, general loops %.17g", tier, solid, wantSolid)
				}
				for i := range want32 {
					if math.Float32bits(got32[i]) != math.Float32bits(want32[i]) || math.Float64bits(got64[i]) != math.Float64bits(want64[i]) {
						t.Fatalf("%s: pixel %d,%d = %.9g (float32), %.17g; general loops %.9g, %.17g", tier, i%gc.FPixels, i/gc.FPixels,
							got32[i], got64[i], want32[i], want64[i])
					}
				}
			}
		})
	}
}

// TestLanesGenerated: the generated lane kernels are lanes.go's copies as
// internal/lanegen writes them now (run go generate in physics after
// changing either).
func TestLanesGenerated(t *testing.T) {
	src, err := os.ReadFile("lanes.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range lanegen.Targets {
		want, err := lanegen.Generate(src, tg)
		if err != nil {
			t.Fatalf("%s: %v", tg.File, err)
		}
		got, err := os.ReadFile(tg.File)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is not lanes.go's copy: run go generate in physics", tg.File)
		}
	}
}

// TestLanesGradientBits: the loss rows give one loss and one gradient,
// bit for bit, whatever lane kernels run them (AvailableVectorLanes), on
// every golden case (twelve rows of it) and on structures that take the
// loss rows' other branches (several sources and orientations, Kahn
// polarization, no polarization, a table with missing reflections,
// water, chunks whose terms fall back to one lane), for three kinds of
// loss, the Poisson loss in three forms: with weights and background;
// with weights nowhere 0, whose chunks on full images are runs that
// gather reads in place; and with neither (in place, onesRow's weights).
func TestLanesGradientBits(t *testing.T) {
	tiers := physics.AvailableVectorLanes()
	if len(tiers) < 2 {
		t.Skipf("only the %s lane kernels here: nothing to compare", tiers[0])
	}
	golden := goldenCommandLines(t)
	inputs := inScratch(t)
	defer physics.SetVectorLanes(t, physics.VectorLanes())()
	writeHolesHKL(t)
	// One sub-pixel unless said (these sizes would get two by default).
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -detpixels 40 -oversample 1"
	lines := []string{base,
		base + " -mosaic 0.5 -mosaic_domains 4 -phi 0 -osc 1 -phisteps 3 -polar 0.8", // K ≠ 0
		base + " -divergence 1 -divsteps 3 -dispersion 1 -dispsteps 2 -water 40",     // sources, water
		base + " -hkl " + inputs + "/P1.hkl -nopolar -point_pixel -roi 3 35 2 30",
		base + " -hkl holes.hkl -cell 20 20 20 90 90 90 -distance 20 -polar 0.5",
		base + " -mosaic 0.5 -mosaic_domains 300 -detpixels_x 150 -detpixels_y 2",              // chunks of 64 pixels (lossChunk), then 22
		base + " -mosaic 0.5 -mosaic_domains 5500 -detpixels_x 9 -detpixels_y 2",               // chunks of 7: terms on one lane
		base + " -beam_vector 1 0 0 -polar_vector 1 0 0",                                       // no E-B plane
		base + " -hkl " + inputs + "/P1.hkl -polar 0.5 -oversample 2",                          // sub-pixels
		base + " -oversample 3 -mosaic 0.5 -mosaic_domains 500 -detpixels_x 12 -detpixels_y 2", // chunks of 8 pixels
		base + " -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2",            // sensor layers
		// -dmin (termsGradAxesDminLanes): 60 Å leaves out the pixels from
		// ~1.7 mm off the beam on.
		base + " -dmin 60 -water 40 -polar 0.6",
		base + " -dmin 60 -oversample 2 -mosaic 0.5 -mosaic_domains 3",
		base + " -dmin 60 -dispersion 10 -dispsteps 3 -water 40",
		// The spot shapes (termsGradShapeLanes, shapeBackLanes).
		base + " -gauss_xtal -mosaic 0.5 -mosaic_domains 4 -polar 0.8",
		base + " -gauss_xtal -hkl holes.hkl -cell 20 20 20 90 90 90 -distance 20 -oversample 2",
		base + " -gauss_xtal -mosaic 0.5 -mosaic_domains 5500 -detpixels_x 9 -detpixels_y 2", // one lane
		base + " -round_xtal -fudge 0.3 -divergence 1 -divsteps 3 -water 40",
		base + " -tophat_spots -fudge 3 -oversample 2 -detector_thick 100 -detector_abs 500 -thicksteps 2",
		// Interpolation (termsGradAxesInterpLanes): with missing
		// reflections and the switch-off at the start of row 26 (simulate
		// says); with sub-pixels, domains and water and none.
		base + " -hkl holes.hkl -cell 20 20 20 90 90 90 -distance 25 -Xbeam 0 -Ybeam 2 -interpolate -polar 0.5",
		base + " -hkl " + inputs + "/P1_varied.hkl -interpolate -cell 100 100 100 90 90 90 -lambda 6.2 -oversample 2 -mosaic 0.5 -mosaic_domains 3 -water 40",
	}
	for _, gc := range golden {
		args := strings.Join(gc.Args, " ")
		for _, in := range gc.Inputs {
			args = strings.ReplaceAll(args, " "+in, " "+filepath.Join(inputs, in))
		}
		lines = append(lines, args)
	}
	for _, args := range lines {
		if err := os.Remove("Fdump.bin"); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		cfg, in := kernelInputs(t, args)
		// Twelve rows through the middle of the golden images (inside
		// their own region of interest).
		if mid := cfg.SPixels / 2; cfg.SPixels > 64 {
			cfg.ROISMin, cfg.ROISMax = max(cfg.ROISMin, mid-6), min(cfg.ROISMax, mid+5)
		}
		n := cfg.FPixels * cfg.SPixels
		obs, wts, bg := lossData(n)
		pos := make([]float64, n) // weights nowhere 0
		for i := range pos {
			pos[i] = 0.5 + float64(i%3)/4
		}
		for _, l := range []physics.PixelLoss{{Kind: physics.LossPoisson, Observed: obs, Weights: wts, Background: bg},
			{Kind: physics.LossPoisson, Observed: obs, Weights: pos, Background: bg},
			{Kind: physics.LossPoisson, Observed: obs}, {Kind: physics.LossSSE, Observed: obs}, {Kind: physics.LossSum}} {
			var want []float64
			var wantLoss float64
			for _, tier := range tiers {
				physics.SetVectorLanes(t, tier)
				g := make([]float64, physics.NParams)
				v := physics.LossGradient(&cfg, in, &l, g)
				if want == nil {
					want, wantLoss = g, v
					continue
				}
				if math.Float64bits(v) != math.Float64bits(wantLoss) {
					t.Errorf("%.60s, %s: loss %.17g with %s lanes, %.17g with %s", args, l.Kind, v, tier, wantLoss, tiers[0])
				}
				for j := range g {
					if math.Float64bits(g[j]) != math.Float64bits(want[j]) {
						t.Errorf("%.60s, %s: ∂L/∂P[%d] %.17g with %s lanes, %.17g with %s", args, l.Kind, j, g[j], tier, want[j], tiers[0])
					}
				}
			}
		}
	}
}

// TestLanesNotWholeN: with N as a fit moves it (not whole, different per
// axis, an axis at N ≤ 1), every lane kernel renders the general loops'
// bits, and the loss rows give the same loss and gradient on every lane
// kernel (the golden cases above all have one whole N).
func TestLanesNotWholeN(t *testing.T) {
	tiers := physics.AvailableVectorLanes()
	defer physics.SetVectorLanes(t, physics.VectorLanes())()
	inputs := inScratch(t)
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -detpixels 40 -oversample 1"
	for _, c := range []struct {
		args string
		n    [3]float64
	}{
		{base, [3]float64{5.3, 4.71, 6.02}},
		{base + " -mosaic 0.5 -mosaic_domains 4 -polar 0.8 -water 40", [3]float64{6, 4.5, 0.8}},
		{base + " -hkl " + inputs + "/P1.hkl -divergence 1 -divsteps 3", [3]float64{2.5, 3, 31.75}},
		{base + " -oversample 2", [3]float64{5.5, 5.5, 5.5}},
	} {
		if err := os.Remove("Fdump.bin"); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		cfg, in := kernelInputs(t, c.args)
		in.P[physics.PNa], in.P[physics.PNb], in.P[physics.PNc] = c.n[0], c.n[1], c.n[2]
		n := cfg.FPixels * cfg.SPixels
		want := make([]float64, n)
		physics.RenderGeneral(&cfg, in, want)
		obs, wts, bg := lossData(n)
		l := physics.PixelLoss{Kind: physics.LossPoisson, Observed: obs, Weights: wts, Background: bg}
		var wantG []float64
		var wantLoss float64
		for _, tier := range tiers {
			physics.SetVectorLanes(t, tier)
			got := make([]float64, n)
			physics.Render(&cfg, in, got)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%.50s N %v, %s: pixel %d = %.17g, general loops %.17g", c.args, c.n, tier, i, got[i], want[i])
				}
			}
			g := make([]float64, physics.NParams)
			v := physics.LossGradient(&cfg, in, &l, g)
			if wantG == nil {
				wantG, wantLoss = g, v
				continue
			}
			if math.Float64bits(v) != math.Float64bits(wantLoss) {
				t.Errorf("%.50s N %v: loss %.17g with %s lanes, %.17g with %s", c.args, c.n, v, tier, wantLoss, tiers[0])
			}
			for j := range g {
				if math.Float64bits(g[j]) != math.Float64bits(wantG[j]) {
					t.Errorf("%.50s N %v: ∂L/∂P[%d] %.17g with %s lanes, %.17g with %s", c.args, c.n, j, g[j], tier, wantG[j], tiers[0])
				}
			}
		}
	}
}

// TestGradientParts: with Config.NoN, NoDefaultF and NoGeometry (a fit
// that does not refine N, the default F, or the detector and the beam),
// in every combination, the gradient's entries for what is left out are 0
// and every other entry and the loss are the whole gradient's bits, on
// every lane kernel: the usual structure and N per axis (their NoN,
// NoSigma and crystal copies of the terms), and structures whose terms
// compute every part anyway (interpolation, a spot shape, -dmin, the
// per-pixel walk of many sub-pixels). NoGeometry keeps the crystal's
// vectors, φ, the mosaic spread, the fluence, the water seed, N and the
// default F (its documentation).
func TestGradientParts(t *testing.T) {
	tiers := physics.AvailableVectorLanes()
	defer physics.SetVectorLanes(t, physics.VectorLanes())()
	inputs := inScratch(t)
	base := "-cell 70 80 90 75 85 95 -misset 10 20 30 -default_F 100 -N 5 -lambda 1 -distance 100 -pixel 0.1 -detpixels 40 -oversample 1"
	hkl := " -hkl " + inputs + "/P1.hkl"
	for _, args := range []string{
		base,
		base + " -mosaic 0.5 -mosaic_domains 4 -phi 0 -osc 1 -phisteps 3 -polar 0.8 -water 40",
		base + " -Na 3 -Nb 4 -Nc 6 -divergence 1 -divsteps 3",
		base + hkl + " -cell 100 100 100 90 90 90 -pixel 0.3 -oversample 2", // indices past the table's 5 from 5 mm off the beam: the default F
		base + hkl + " -cell 100 100 100 90 90 90 -pixel 0.3 -Na 3 -Nb 4 -Nc 6 -mosaic 0.5 -mosaic_domains 3",
		base + " -hkl " + inputs + "/P1_varied.hkl -interpolate -cell 100 100 100 90 90 90 -lambda 6.2",
		base + " -gauss_xtal -mosaic 0.5 -mosaic_domains 4",
		base + " -dmin 60 -water 40",
		base + " -oversample 20 -detpixels 6", // 400 sub-pixels: the per-pixel walk
	} {
		if err := os.Remove("Fdump.bin"); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		cfg, in := kernelInputs(t, args)
		n := cfg.FPixels * cfg.SPixels
		obs, wts, bg := lossData(n)
		l := physics.PixelLoss{Kind: physics.LossPoisson, Observed: obs, Weights: wts, Background: bg}
		for _, tier := range tiers {
			physics.SetVectorLanes(t, tier)
			whole := make([]float64, physics.NParams)
			wv := physics.LossGradient(&cfg, in, &l, whole)
			for parts := 1; parts < 8; parts++ {
				c := cfg
				c.NoN, c.NoDefaultF, c.NoGeometry = parts&1 != 0, parts&2 != 0, parts&4 != 0
				g := make([]float64, physics.NParams)
				v := physics.LossGradient(&c, in, &l, g)
				if math.Float64bits(v) != math.Float64bits(wv) {
					t.Errorf("%.60s, %s, NoN %v NoDefaultF %v NoGeometry %v: loss %.17g, whole gradient's %.17g", args, tier, c.NoN, c.NoDefaultF, c.NoGeometry, v, wv)
				}
				for j := range g {
					n := j == physics.PNa || j == physics.PNb || j == physics.PNc
					crystal := j >= physics.PCellA && j < physics.PCStar+3 || j == physics.PPhi0 || j == physics.PPhiStep ||
						j == physics.PMosaic || j == physics.PFluence || j == physics.PIbg
					want := whole[j]
					if c.NoN && n || c.NoDefaultF && j == physics.PDefaultF || c.NoGeometry && !crystal && !n && j != physics.PDefaultF {
						want = 0
					}
					if math.Float64bits(g[j]) != math.Float64bits(want) {
						t.Errorf("%.60s, %s, NoN %v NoDefaultF %v NoGeometry %v: ∂L/∂P[%d] %.17g, want %.17g", args, tier, c.NoN, c.NoDefaultF, c.NoGeometry, j, g[j], want)
					}
				}
			}
			// The entries left out are ones the whole gradient has.
			if whole[physics.PNa] == 0 || whole[physics.PNc] == 0 {
				t.Errorf("%.60s, %s: no derivative by N to leave out", args, tier)
			}
			if strings.Contains(args, "P1.hkl") && whole[physics.PDefaultF] == 0 {
				t.Errorf("%.60s, %s: no derivative by the default F to leave out", args, tier)
			}
			if whole[physics.PPix0] == 0 || whole[physics.PKahn] == 0 {
				t.Errorf("%.60s, %s: no derivative by the detector or the polarization to leave out", args, tier)
			}
		}
	}
}
