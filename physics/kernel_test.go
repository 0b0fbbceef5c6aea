package physics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSincg checks the lattice transform against its definition
// sin(Nπh)/sin(πh) away from integers, and against the analytic limit
// (−1)^{(N−1)n}·N at integer h = n, where the quotient is 0/0.
func TestSincg(t *testing.T) {
	for _, n := range []float64{1, 2, 3, 5, 10} {
		for _, h := range []float64{0.1, 0.37, -1.3, 2.5, 7.77, -12.01} {
			want := math.Sin(n*math.Pi*h) / math.Sin(math.Pi*h)
			if got := Sincg(h, n); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("Sincg(%g, %g) = %.15g, definition gives %.15g", h, n, got, want)
			}
		}
		for _, m := range []float64{0, 1, -1, 2, 3, -7} {
			want := n
			if math.Mod(math.Abs((n-1)*m), 2) == 1 {
				want = -n
			}
			if got := Sincg(m, n); got != want {
				t.Errorf("Sincg(%g, %g) = %g, limit is %g", m, n, got, want)
			}
		}
	}
	// Non-whole N (continuous N for gradients): sin(Nπd)/sin(πd) on the
	// offset d from the nearest integer, N at every integer, and F_latt²
	// continuous into the whole N on either side.
	for _, h := range []float64{0.3, 7.3, -2.45, 11.5} {
		d := h - math.Round(h)
		if got, want := Sincg(h, 4.5), math.Sin(4.5*math.Pi*d)/math.Sin(math.Pi*d); math.Abs(got-want) > 1e-12 {
			t.Errorf("Sincg(%g, 4.5) = %g, want %g", h, got, want)
		}
		for _, n := range []float64{4, 5} {
			near := Sincg(h, n+0.5*(4.5-n)*1e-9*2)
			if w := Sincg(h, n); math.Abs(near*near-w*w) > 1e-7*math.Max(1, w*w) {
				t.Errorf("Sincg(%g, %g±) = %g, at %g: %g", h, n, near, n, w)
			}
		}
	}
	for _, m := range []float64{0, 3, -8} {
		if got := Sincg(m, 4.5); got != 4.5 {
			t.Errorf("Sincg(%g, 4.5) = %g, want 4.5", m, got)
		}
	}
}

// TestPolarization checks the Kahn factor on geometries with textbook
// answers: unpolarized ½(1+cos²2θ); fully polarized (K=1) scattering in
// the plane of the E-vector gives cos²2θ, perpendicular to it gives 1.
func TestPolarization(t *testing.T) {
	inc := [3]float64{1, 0, 0}
	axis := [3]float64{0, 0, 1} // E-vector along z
	tt := 30 * math.Pi / 180
	inPlane := [3]float64{math.Cos(tt), 0, math.Sin(tt)}
	perp := [3]float64{math.Cos(tt), math.Sin(tt), 0}
	c2 := math.Cos(tt) * math.Cos(tt)
	for _, c := range []struct {
		name string
		k    float64
		d    [3]float64
		want float64
	}{
		{"unpolarized", 0, inPlane, 0.5 * (1 + c2)},
		{"K=1 in E plane", 1, inPlane, c2},
		{"K=1 perpendicular", 1, perp, 1},
		{"K=0.5 perpendicular", 0.5, perp, 0.5 * (1 + c2 + 0.5*(1-c2))},
		{"forward", 1, inc, 1},
	} {
		if got := Polarization(c.k, inc, c.d, axis); math.Abs(got-c.want) > 1e-14 {
			t.Errorf("%s: %.16g, want %.16g", c.name, got, c.want)
		}
	}
}

// TestInterpolationSwitchOff: the reference walks pixels in scan order and
// switches interpolation off for good at the first evaluation whose 4×4×4
// neighbourhood leaves the table. Render must give exactly what that
// sequential walk gives, whatever the number of threads, with masks and
// ROIs, with the solid angle SolidAngle sums and one progress call per
// row. The walk below is written out evaluation by evaluation against the
// reference's loop.
func TestInterpolationSwitchOff(t *testing.T) {
	all := [4]int{0, 23, 0, 19}
	for _, g := range []struct {
		name       string
		table      int     // the table's h, k, l from −table to table
		pix0       float64 // the beam's offset along the fast axis, mm
		mask       bool    // every fifth pixel left out
		roi        [4]int  // fmin, fmax, smin, smax
		cutoffRows [2]int  // the rows the switch-off must fall in (−1: none)
		os         int     // sub-pixels per axis (2 unless set)
		sensor     int     // 1: a sensor of two 100 µm layers (capture fractions)
	}{
		// A ±3 table: |l| passes 1 (where it can no longer hold the
		// 4-point neighbourhood) a few pixels along the first row.
		{"early", 3, 0.5, false, all, [2]int{0, 0}, 0, 0},
		{"early, mask, ROI", 3, 0.5, true, [4]int{3, 21, 0, 19}, [2]int{0, 0}, 0, 0},
		// A ±8 table with the beam above the middle of the first row:
		// the switch-off comes in row 15, past the first batches of rows
		// Render interpolates (4 per thread: with 3 threads row 15 is
		// inside a batch, whose later rows are rendered again).
		{"late", 8, 12.5, false, all, [2]int{15, 15}, 0, 0},
		{"late, mask", 8, 12.5, true, all, [2]int{15, 15}, 0, 0},
		{"late, mask, ROI", 8, 12.5, true, [4]int{2, 20, 1, 17}, [2]int{5, 17}, 0, 0},
		// A ±20 table holds every point: no switch-off.
		{"none", 20, 12.5, false, all, [2]int{-1, -1}, 0, 0},
		// One sub-pixel (the lane kernels' other loop): the switch-off at
		// the start of row 16, and inside the first row, part-way through
		// a vector of 4 or 8 pixels (pixels 20 and 22).
		{"late, one sub-pixel", 8, 12.5, false, all, [2]int{16, 16}, 1, 0},
		{"mid-row, one sub-pixel", 7, 7.7, false, all, [2]int{0, 0}, 1, 0},
		{"mid-row, mask, one sub-pixel", 7, 9.3, true, all, [2]int{0, 0}, 1, 0},
		// A sensor thickness (the capture fraction formed after the lanes,
		// laneValue).
		{"late, sensor", 8, 12.5, false, all, [2]int{15, 15}, 0, 1},
		{"mid-row, mask, one sub-pixel, sensor", 7, 9.3, true, all, [2]int{0, 0}, 1, 1},
		{"none, sensor", 20, 12.5, false, all, [2]int{-1, -1}, 1, 1},
		{"none, one sub-pixel", 20, 12.5, false, all, [2]int{-1, -1}, 1, 0},
	} {
		os := g.os
		if os == 0 {
			os = 2
		}
		t.Run(g.name, func(t *testing.T) { testSwitchOff(t, g.table, g.pix0, g.mask, g.roi, g.cutoffRows, os, g.sensor) })
	}
}

// smallParams are the parameters of the small test geometries: a
// MOSFLM-like detector 100 mm away, 1 mm pixels, the beam on pixel
// (pix0 − ½, 0), a 40 Å cell at 1 Å, N 3.
func smallParams(pix0 float64) []float64 {
	p := make([]float64, NParams)
	copy(p[PPix0:], []float64{0.1, 0.0005, -pix0 * 1e-3})
	copy(p[PFdet:], []float64{0, 0, 1})
	copy(p[PSdet:], []float64{0, -1, 0})
	copy(p[PObs:], []float64{1, 0, 0})
	copy(p[PCellA:], []float64{40e-10, 0, 0})
	copy(p[PCellB:], []float64{0, 40e-10, 0})
	copy(p[PCellC:], []float64{0, 0, 40e-10})
	p[PLambda], p[PFluence], p[PNa], p[PNb], p[PNc], p[PDefaultF], p[PPixel], p[PFudge] = 1e-10, 1e24, 3, 3, 3, 7, 1e-3, 1
	return p
}

func testSwitchOff(t *testing.T, table int, pix0 float64, mask bool, roi [4]int, cutoffRows [2]int, os, sensor int) {
	c := &Config{FPixels: 24, SPixels: 20, Oversample: os, PhiSteps: 1, Domains: 1, Sources: 1, ThickSteps: 1,
		Beam: [3]float64{1, 0, 0}, PolarAxis: [3]float64{0, 0, 1}, Spindle: [3]float64{0, 0, 1},
		ROIFMin: roi[0], ROIFMax: roi[1], ROISMin: roi[2], ROISMax: roi[3], Interpolate: true, HasHKL: true,
		HMin: -table, HMax: table, KMin: -table, KMax: table, LMin: -table, LMax: table}
	p := smallParams(pix0)
	tab := make([]float64, c.TableLen())
	for i := range tab {
		tab[i] = float64(10 + i%17) // varied, so interpolation and nearest differ
	}
	if sensor == 1 {
		c.Thick, c.ThickSteps = true, 2
		p[PThickStep], p[PMu] = 100e-6, 1/500e-6
	}
	in := &Inputs{P: p, Fhkl: tab, Sources: []float64{1, 0, 0, 1}, Mosaic: []float64{1, 0, 0, 0}, Mask: []float64{0}}
	if mask {
		c.HasMask = true
		in.Mask = make([]float64, c.FPixels*c.SPixels)
		for i := range in.Mask {
			if i%5 != 2 {
				in.Mask[i] = 1
			}
		}
	}

	// The walk written out evaluation by evaluation against the
	// reference's loop.
	want := make([]float64, c.FPixels*c.SPixels)
	k := newKernel(c, in)
	off, cut := false, -1
	var cutHKL [3]float64 // the indices of the first point out of range
	k.onOOR = func(h, kk, l float64) {
		if !off {
			cutHKL = [3]float64{h, kk, l}
		}
	}
	for i := range want {
		f, s := i%c.FPixels, i/c.FPixels
		if !c.Rendered(f, s, in.Mask) {
			continue
		}
		if off {
			want[i], _ = k.pixel(f, s, interpNone, 0, nil, nil)
			continue
		}
		v, e := k.pixel(f, s, interpOn, 0, nil, nil)
		if e >= 0 {
			v, _ = k.pixel(f, s, interpUntil, e, nil, nil)
			off, cut = true, i
		}
		want[i] = v
	}
	if cutoffRows[0] < 0 {
		if cut >= 0 {
			t.Fatalf("switch-off at pixel %d: the test geometry must have none", cut)
		}
	} else if cut <= 0 || cut >= len(want)-1 || cut/c.FPixels < cutoffRows[0] || cut/c.FPixels > cutoffRows[1] {
		t.Fatalf("switch-off at pixel %d (row %d): the test geometry must switch part-way through, in rows %v", cut, cut/c.FPixels, cutoffRows)
	}
	if gotCut, gotHKL := InterpolationCutoff(c, in); gotCut != cut || gotHKL != cutHKL {
		t.Errorf("InterpolationCutoff = %d at %v, sequential walk switches at %d at %v", gotCut, gotHKL, cut, cutHKL)
	}
	solid := SolidAngle(c, in)
	// Every lane kernel this binary runs here (and the general loops:
	// the walk's own).
	defer UseVectorLanes(VectorLanes())
	for _, tier := range AvailableVectorLanes() {
		if err := UseVectorLanes(tier); err != nil {
			t.Fatal(err)
		}
		for _, procs := range []int{1, 2, 3, 7} {
			old := runtime.GOMAXPROCS(procs)
			got := make([]float64, len(want))
			var mu sync.Mutex
			calls, most := 0, 0
			rep := RenderReport(c, in, got, func(rows int) {
				mu.Lock()
				calls, most = calls+1, max(most, rows)
				mu.Unlock()
			})
			sa := rep.SolidAngle
			runtime.GOMAXPROCS(old)
			if rep.Cutoff != cut || rep.CutoffHKL != cutHKL {
				t.Errorf("%s, GOMAXPROCS=%d: the render's cutoff %d at %v, sequential walk %d at %v", tier, procs, rep.Cutoff, rep.CutoffHKL, cut, cutHKL)
			}
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s, GOMAXPROCS=%d: pixel %d = %g, sequential walk %g", tier, procs, i, got[i], want[i])
				}
			}
			if math.Float64bits(sa) != math.Float64bits(solid) {
				t.Errorf("%s, GOMAXPROCS=%d: solid angle %.17g, SolidAngle %.17g", tier, procs, sa, solid)
			}
			if calls != c.SPixels || most != c.SPixels {
				t.Errorf("%s, GOMAXPROCS=%d: %d progress calls, the last %d rows; want %d", tier, procs, calls, most, c.SPixels)
			}
		}
	}
}

// TestPolint: the 4-point Lagrange polynomial (lagrangeLanes,
// polintLanes on one lane) reproduces a cubic exactly, and gives the bits
// of the reference's formula (nanoBragg's polint, its denominators
// computed from the points) on consecutive integer points.
func TestPolint(t *testing.T) {
	cubic := func(x float64) float64 { return 2*x*x*x - 3*x*x + 0.5*x - 4 }
	// The points −1 … 2 around x in [0, 1).
	ya := [4]float64{cubic(-1), cubic(0), cubic(1), cubic(2)}
	polint := func(x, x0 float64, ya *[4]float64) float64 {
		p0, p1, p2, p3 := lagrangeLanes(x, x0)
		return polintLanes(p0, p1, p2, p3, ya[0], ya[1], ya[2], ya[3])
	}
	for _, x := range []float64{0, 0.25, 0.5, 0.99} {
		if got, want := polint(x, 0, &ya), cubic(x); math.Abs(got-want) > 1e-12 {
			t.Errorf("polint(%g) = %g, cubic gives %g", x, got, want)
		}
	}
	reference := referencePolint
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100000; i++ {
		m := math.Floor(rng.NormFloat64() * 30)
		x := m + rng.Float64()
		xa := [4]float64{m - 1, m, m + 1, m + 2}
		var ya [4]float64
		for j := range ya {
			ya[j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			if rng.IntN(8) == 0 {
				ya[j] = 0
			}
		}
		if got, want := polint(x, m, &ya), reference(&xa, &ya, x); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("polint(%v, %v, %v) = %v, the reference's formula %v", xa, ya, x, got, want)
		}
	}
}

// TestParallelWorkersPanic: a panic in a row worker comes back on the
// caller's goroutine (where it can be recovered) instead of ending the
// process.
func TestParallelWorkersPanic(t *testing.T) {
	defer func() {
		r := recover()
		if s, ok := r.(string); !ok || !strings.Contains(s, "row 7 broke") {
			t.Errorf("recovered %v, want the worker's panic", r)
		}
	}()
	parallelRows(64, func(s int) {
		if s == 7 {
			panic("row 7 broke")
		}
	})
	t.Error("no panic")
}

// TestLossChunk: the loss rows' chunk sizes for the structures
// TestShortcutGradients names, worked out by hand from hklBudget (2¹⁴),
// hklCap (2¹⁷), minVecChunk (64), rowChunk (256) and maxLanes (8): the
// rule, not the code, gives each.
func TestLossChunk(t *testing.T) {
	for _, c := range []struct{ per, want int }{
		{3, 256},          // one orientation: rowChunk
		{30, 256},         // 10 domains: 16384/30 = 546, then rowChunk
		{3 * 80, 64},      // 16384/240 = 68: in whole vectors
		{3 * 100, 64},     // 16384/300 = 54 < 64: min(64, 131072/300 = 436)
		{3 * 200, 64},     // 16384/600 = 27 < 64: min(64, 131072/600 = 218)
		{3 * 4 * 200, 48}, // 16384/2400 = 6: min(64, 54) = 54, in whole vectors
		{3 * 6000, 7},     // 131072/18000 = 7: one lane
		{3 * 4 * 2000, 5}, // 131072/24000 = 5
		{3 * 9 * 1300, 3}, // 131072/35100 = 3 (below minLossChunk)
		{3 * 100000, 1},   // beyond hklCap: one pixel
	} {
		if got := lossChunk(c.per); got != c.want {
			t.Errorf("lossChunk(%d) = %d, want %d", c.per, got, c.want)
		}
	}
}

// referencePolint is the reference's 4-point Lagrange polynomial (its
// polint) through (xa[i], ya[i]) at x, written out with its denominators
// computed from the points.
func referencePolint(xa *[4]float64, ya *[4]float64, x float64) float64 {
	x0 := (x - xa[1]) * (x - xa[2]) * (x - xa[3]) * ya[0] / ((xa[0] - xa[1]) * (xa[0] - xa[2]) * (xa[0] - xa[3]))
	x1 := (x - xa[0]) * (x - xa[2]) * (x - xa[3]) * ya[1] / ((xa[1] - xa[0]) * (xa[1] - xa[2]) * (xa[1] - xa[3]))
	x2 := (x - xa[0]) * (x - xa[1]) * (x - xa[3]) * ya[2] / ((xa[2] - xa[0]) * (xa[2] - xa[1]) * (xa[2] - xa[3]))
	x3 := (x - xa[0]) * (x - xa[1]) * (x - xa[2]) * ya[3] / ((xa[3] - xa[0]) * (xa[3] - xa[1]) * (xa[3] - xa[2]))
	return x0 + x1 + x2 + x3
}

// TestInterpGrad: interpGradLanes on one lane (the general loops'
// interpolateGrad) gives the bits of the Lagrange-weight formulas written
// out below, term by term (the general loops' own before they took the
// lanes' function): the value (the reference's polin3: its polint along
// l for each of 16 rows, then along k, then h), the derivatives by h, k, l
// and, through cells without data, by the default F. (Derivatives against
// finite differences: graph's interpolation gradient checks.)
func TestInterpGrad(t *testing.T) {
	const table = 6
	c := &Config{FPixels: 1, SPixels: 1, Oversample: 1, PhiSteps: 1, Domains: 1, Sources: 1, ThickSteps: 1,
		Interpolate: true, HasHKL: true, HMin: -table, HMax: table, KMin: -table, KMax: table, LMin: -table, LMax: table,
		ROIFMax: 0, ROISMax: 0}
	p := make([]float64, NParams)
	p[PLambda], p[PNa], p[PNb], p[PNc], p[PDefaultF], p[PPixel] = 1e-10, 3, 3, 3, 7, 1e-3
	copy(p[PCellA:], []float64{40e-10, 0, 0})
	copy(p[PCellB:], []float64{0, 40e-10, 0})
	copy(p[PCellC:], []float64{0, 0, 40e-10})
	rng := rand.New(rand.NewPCG(7, 8))
	tab := make([]float64, c.TableLen())
	for i := range tab {
		tab[i] = rng.Float64() * 100
		if rng.IntN(5) == 0 {
			tab[i] = math.NaN() // no data: the default F
		}
	}
	in := &Inputs{P: p, Fhkl: tab, Sources: []float64{1, 0, 0, 1}, Mosaic: []float64{1, 0, 0, 0}, Mask: []float64{0}}
	k := newKernel(c, in)
	k.gradSetup()
	if k.missBits == nil {
		t.Fatal("the table must have cells without data")
	}
	lagrange4 := func(x float64) (w, dw [4]float64) {
		t := x - math.Floor(x)
		a, b, c, d := t+1, t, t-1, t-2
		const sixth = 1.0 / 6 // (the lanes multiply by ⅙ where these weights were divided by 6)
		w = [4]float64{-b * c * d * sixth, a * c * d / 2, -a * b * d / 2, a * b * c * sixth}
		dw = [4]float64{-(c*d + b*d + b*c) * sixth, (c*d + a*d + a*c) / 2, -(b*d + a*d + a*b) / 2, (b*c + a*c + a*b) * sixth}
		return w, dw
	}
	wantF := func(h, kk, l float64) float64 {
		h0, k0, l0 := int(math.Floor(h)), int(math.Floor(kk)), int(math.Floor(l))
		var xh, xk, xl, alongH [4]float64
		for i := range 4 {
			xh[i], xk[i], xl[i] = float64(h0-1+i), float64(k0-1+i), float64(l0-1+i)
		}
		for i1 := 0; i1 < 4; i1++ {
			var alongK [4]float64
			for i2 := 0; i2 < 4; i2++ {
				base := (h0-1+i1-c.HMin)*k.hStride + (k0-1+i2-c.KMin)*k.kStride + (l0 - 1 - c.LMin)
				alongK[i2] = referencePolint(&xl, (*[4]float64)(k.fhkl[base:base+4]), l)
			}
			alongH[i1] = referencePolint(&xk, &alongK, kk)
		}
		return referencePolint(&xh, &alongH, h)
	}
	want := func(h, kk, l float64) (df [3]float64, ddef float64) {
		h0, k0, l0 := int(math.Floor(h)), int(math.Floor(kk)), int(math.Floor(l))
		wh, dwh := lagrange4(h)
		wk, dwk := lagrange4(kk)
		wl, dwl := lagrange4(l)
		for i1 := 0; i1 < 4; i1++ {
			for i2 := 0; i2 < 4; i2++ {
				base := (h0-1+i1-c.HMin)*k.hStride + (k0-1+i2-c.KMin)*k.kStride + (l0 - 1 - c.LMin)
				var s, sl, sd float64
				for i3 := 0; i3 < 4; i3++ {
					v := k.fhkl[base+i3]
					s += wl[i3] * v
					sl += dwl[i3] * v
					if math.IsNaN(tab[base+i3]) { // (no data: the default F)
						sd += wl[i3]
					}
				}
				df[0] += dwh[i1] * wk[i2] * s
				df[1] += wh[i1] * dwk[i2] * s
				df[2] += wh[i1] * wk[i2] * sl
				ddef += wh[i1] * wk[i2] * sd
			}
		}
		return df, ddef
	}
	for i := 0; i < 20000; i++ {
		h := (rng.Float64()*2 - 1) * (table - 2)
		kk := (rng.Float64()*2 - 1) * (table - 2)
		l := (rng.Float64()*2 - 1) * (table - 2)
		if i%7 == 0 {
			h = math.Round(h) // whole indices too
		}
		if !k.inInterpRange(h, kk, l) {
			continue
		}
		f, df, ddef := k.interpolateGrad(h, kk, l)
		wdf, wddef := want(h, kk, l)
		if wf := wantF(h, kk, l); math.Float64bits(f) != math.Float64bits(wf) {
			t.Fatalf("(%g, %g, %g): F %v, the reference's formulas %v", h, kk, l, f, wf)
		}
		for j := range df {
			if math.Float64bits(df[j]) != math.Float64bits(wdf[j]) {
				t.Fatalf("(%g, %g, %g): ∂F/∂index %d %v, written out %v", h, kk, l, j, df[j], wdf[j])
			}
		}
		if math.Float64bits(ddef) != math.Float64bits(wddef) {
			t.Fatalf("(%g, %g, %g): ∂F/∂(default F) %v, written out %v", h, kk, l, ddef, wddef)
		}
	}
}

// TestChunkPixelsWeights: chunkPixels' scan of a fit's weights (on
// vector lanes eight at a time; every lane kernel this binary runs) lists, chunk after chunk, the
// pixels of a row whose weight is not 0, in order, most to a chunk — the
// definition, written out here as a filter of the row — on rows of spot
// boxes (runs of 1–20 weighted pixels, at every offset to the groups of
// eight), with NaN, ±Inf, −0, subnormal and negative weights, from every
// starting pixel of the ROI to every row end, for chunk limits below,
// at and past a group.
func TestChunkPixelsWeights(t *testing.T) {
	defer func(old string) { UseVectorLanes(old) }(VectorLanes())
	for _, tier := range AvailableVectorLanes() {
		if err := UseVectorLanes(tier); err != nil {
			t.Fatal(err)
		}
		testChunkPixelsWeights(t)
	}
}

func testChunkPixelsWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 17))
	odd := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 5e-324, -2, 1e300}
	for trial := range 300 {
		W := 1 + rng.IntN(90)
		w := make([]float64, 2*W) // two rows; the second is scanned
		row := w[W:]
		for f := 0; f < W; {
			if rng.IntN(3) == 0 {
				run := 1 + rng.IntN(20)
				for i := f; i < min(W, f+run); i++ {
					row[i] = 1
					if rng.IntN(8) == 0 {
						row[i] = odd[rng.IntN(len(odd))]
					}
				}
				f += run
			} else {
				f += 1 + rng.IntN(12)
			}
		}
		if trial%7 == 0 {
			for i := range row {
				row[i] = 1 // a row of one box
			}
		}
		if trial%11 == 0 {
			row[rng.IntN(W)] = math.Copysign(0, -1) // (−0 is left out)
		}
		f0, last := rng.IntN(W), W-1-rng.IntN(3)
		if last < f0 {
			last = W - 1
		}
		var want []int
		for f := f0; f <= last; f++ {
			if row[f] != 0 {
				want = append(want, f)
			}
		}
		c := &Config{FPixels: W, SPixels: 2, ROIFMin: f0, ROIFMax: last, ROISMax: 1}
		l := &PixelLoss{Kind: LossPoisson, Observed: make([]float64, 2*W), Weights: w}
		for _, most := range []int{1, 3, 7, 8, 9, 16, 17, 64, rowChunk} {
			var fs [rowChunk]int
			var got []int
			for f := f0; f <= last; {
				var chunk []int
				chunk, f = chunkPixels(c, 1, f, nil, l, &fs, most)
				if len(chunk) > most || len(chunk) < most && f <= last {
					t.Fatalf("W %d, f0 %d, last %d, most %d: a chunk of %d pixels before pixel %d", W, f0, last, most, len(chunk), f)
				}
				got = append(got, chunk...)
			}
			if len(got) != len(want) {
				t.Fatalf("W %d, f0 %d, most %d: %d pixels listed, %d weighted: %v, want %v", W, f0, most, len(got), len(want), got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("W %d, f0 %d, most %d: pixels %v, want %v", W, f0, most, got, want)
				}
			}
		}
	}
}

// TestLanesSteps: on every lane kernel, steps(g, n, v, d) stores v + p·d
// (whole numbers: the expected values are exact) at every p < n, and
// nothing at or past n rounded up to maxLanes (NaN stays there); between
// n and that bound it may store the next steps or nothing.
func TestLanesSteps(t *testing.T) {
	defer func(old string) { UseVectorLanes(old) }(VectorLanes())
	for _, tier := range AvailableVectorLanes() {
		if err := UseVectorLanes(tier); err != nil {
			t.Fatal(err)
		}
		for n := range 21 {
			for _, vd := range [][2]float64{{0, 1}, {3, 2}, {1 << 40, 3}, {-7, 1}} {
				v, d := vd[0], vd[1]
				end := (n + maxLanes - 1) / maxLanes * maxLanes
				g := make([]float64, end+maxLanes)
				for i := range g {
					g[i] = math.NaN()
				}
				steps(g, n, v, d)
				for p, x := range g {
					want := v + float64(p)*d
					switch {
					case p < n && x != want, p >= n && p < end && x == x && x != want, p >= end && x == x:
						t.Fatalf("%s: steps(n %d, v %g, d %g) stored %g at %d", tier, n, v, d, x, p)
					}
				}
			}
		}
	}
}

// TestChunkPixelsRun: without a mask or a loss that skips pixels,
// chunkPixels lists every pixel from f0 (up to most of them, and to the
// ROI's last), as a slice no append can write past.
func TestChunkPixelsRun(t *testing.T) {
	c := &Config{FPixels: 5000, SPixels: 3, ROIFMin: 7, ROIFMax: 4321, ROISMax: 2}
	l := &PixelLoss{Kind: LossSum}
	var fs [rowChunk]int
	for _, f0 := range []int{7, 100, 4300, 4321, 4322} {
		for _, most := range []int{1, 8, rowChunk} {
			got, next := chunkPixels(c, 1, f0, nil, l, &fs, most)
			n := max(0, min(most, c.ROIFMax-f0+1))
			if len(got) != n || cap(got) != n || next != f0+n {
				t.Fatalf("from %d, most %d: %d pixels (capacity %d), next %d; want %d, next %d", f0, most, len(got), cap(got), next, n, f0+n)
			}
			for i, f := range got {
				if f != f0+i {
					t.Fatalf("from %d, most %d: pixel %d is %d", f0, most, i, f)
				}
			}
		}
	}
}

// TestColumns: columns(n) holds 0, …, n − 1 with no room past them (an
// append copies instead of writing into the shared table), below and
// beyond the table's first size (4096), and from goroutines at once
// (go test -race checks that they share the table safely).
func TestColumns(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, n := range []int{0, 1, 255, 4096, 4097 + g, 9000 - g, 3} {
				c := columns(n)
				if len(c) != n || cap(c) != n {
					t.Errorf("columns(%d): length %d, capacity %d", n, len(c), cap(c))
					return
				}
				for i, v := range c {
					if v != i {
						t.Errorf("columns(%d)[%d] = %d", n, i, v)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkChunkPixelsBoxes times chunkPixels' scan over a 512² image of
// a fit's spot boxes (10² boxes on a grid of 17 pixels, ~35 % of the
// pixels weighted) in chunks of rowChunk.
func BenchmarkChunkPixelsBoxes(b *testing.B) {
	c, w, _ := boxImage()
	l := &PixelLoss{Kind: LossPoisson, Observed: make([]float64, len(w)), Weights: w}
	var fs [rowChunk]int
	benchChunks(b, c, func(s, f int) ([]int, int) { return chunkPixels(c, s, f, nil, l, &fs, rowChunk) })
}

// boxImage is the image of BenchmarkChunkPixelsBoxes: its structure, the
// weights (1 in the boxes) and the boxes' pixels as a list.
func boxImage() (*Config, []float64, []int32) {
	const W = 512
	w := make([]float64, W*W)
	var px []int32
	for s := range W {
		for f := range W {
			if s%17 < 10 && f%17 < 10 {
				w[s*W+f] = 1
				px = append(px, int32(s*W+f))
			}
		}
	}
	return &Config{FPixels: W, SPixels: W, ROIFMax: W - 1, ROISMax: W - 1}, w, px
}

// benchChunks times chunk(s, f) (a row's chunk from pixel f and the pixel
// to go on from) over every row of c's image.
func benchChunks(b *testing.B, c *Config, chunk func(s, f int) ([]int, int)) {
	n := 0
	b.ResetTimer()
	for range b.N {
		for s := range c.SPixels {
			for f := 0; f < c.FPixels; {
				var fs []int
				fs, f = chunk(s, f)
				n += len(fs)
			}
		}
	}
	if n == 0 {
		b.Fatal("no pixels")
	}
}

// TestListChunk: listChunk gives, row by row and chunk by chunk, the
// chunks chunkPixels gives for the same loss on full images (weight 0 off
// the list; chunkPixels is checked against its definition above), and
// each chunk pixel's index in the list, whatever search start it is
// handed: 0, the one it left, one from a later row (a goroutine's rows
// need not come in order), past the list's end or negative. The list
// holds weights of 0 too (left out), a mask and a region of interest
// leave pixels out, and chunks are of 1 to rowChunk pixels.
func TestListChunk(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 17))
	for trial := range 40 {
		W, H := 5+rng.IntN(300), 1+rng.IntN(6)
		n := W * H
		full := make([]float64, n)
		var px []int32
		var wl []float64
		for i := range full {
			if rng.IntN(3) == 0 {
				continue // not listed
			}
			w := float64(rng.IntN(3)) // 0 for a third of the listed
			px, wl = append(px, int32(i)), append(wl, w)
			full[i] = w
		}
		mask := make([]float64, n)
		for i := range mask {
			if rng.IntN(5) != 0 {
				mask[i] = 1
			}
		}
		c := &Config{FPixels: W, SPixels: H, ROIFMin: rng.IntN(3), ROIFMax: W - 1 - rng.IntN(3), ROISMax: H - 1, HasMask: trial%2 == 0}
		dense := &PixelLoss{Kind: LossPoisson, Observed: make([]float64, n), Weights: full}
		listed := &PixelLoss{Kind: LossPoisson, Observed: make([]float64, len(px)), Weights: wl, Pixels: px}
		for _, most := range []int{1, 2, 8, 9, rowChunk} {
			at := 0
			for s := range H {
				for f := c.ROIFMin; f <= c.ROIFMax; {
					var fs, fl, js [rowChunk]int
					want, next := chunkPixels(c, s, f, mask, dense, &fs, most)
					switch rng.IntN(6) { // the search start handed over
					case 0:
						at = 0
					case 1:
						at = len(px) + rng.IntN(2)
					case 2:
						at = -1 - rng.IntN(3)
					case 3:
						at = rng.IntN(len(px) + 1) // anywhere, a later row's too
					}
					got, jl, nextL := listChunk(c, s, f, mask, listed, &fl, &js, &at, most)
					if !slices.Equal(got, want) || nextL != next {
						t.Fatalf("trial %d, row %d from %d, most %d: chunk %v (next %d), want %v (next %d)", trial, s, f, most, got, nextL, want, next)
					}
					for p, j := range jl {
						if int(px[j]) != s*W+got[p] {
							t.Fatalf("trial %d, row %d: pixel %d at list index %d, which holds %d", trial, s, got[p], j, px[j])
						}
					}
					f = nextL
					if len(want) < most && next <= c.ROIFMax {
						t.Fatalf("trial %d: chunkPixels stopped at %d with a short chunk", trial, next)
					}
				}
			}
		}
	}
}

// BenchmarkListChunkBoxes is BenchmarkChunkPixelsBoxes for the same boxes
// as a pixel list (listChunk).
func BenchmarkListChunkBoxes(b *testing.B) {
	c, _, px := boxImage()
	w := make([]float64, len(px))
	for i := range w {
		w[i] = 1
	}
	l := &PixelLoss{Kind: LossPoisson, Observed: make([]float64, len(px)), Weights: w, Pixels: px}
	var fs, js [rowChunk]int
	at := 0
	benchChunks(b, c, func(s, f int) ([]int, int) {
		chunk, _, next := listChunk(c, s, f, nil, l, &fs, &js, &at, rowChunk)
		return chunk, next
	})
}

// TestIndexAt: indexAt finds each pixel's place in a pixel list as a
// binary search of the whole list does (index), for pixels in ascending
// order (the per-pixel walk's), in random order and with any search
// start handed to it.
func TestIndexAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	for trial := range 50 {
		n := 1 + rng.IntN(500)
		var px []int32
		for i := range n {
			if rng.IntN(1+trial%4) == 0 {
				px = append(px, int32(i))
			}
		}
		l := &PixelLoss{Pixels: px}
		at := 0
		for pass := range 3 {
			for q := range n {
				i := q
				if pass == 1 {
					i = rng.IntN(n)
				}
				if pass == 2 {
					at = rng.IntN(len(px)+3) - 1
				}
				want := -1
				for j, p := range px {
					if int(p) == i {
						want = j
					}
				}
				if got := l.indexAt(i, &at); got != want || l.index(i) != want {
					t.Fatalf("trial %d, pass %d: pixel %d at %d by indexAt, %d by index, want %d", trial, pass, i, got, l.index(i), want)
				}
			}
		}
	}
}
