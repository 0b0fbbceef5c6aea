package physics

import "math"

// Gradient is the pixel physics' backward pass: given dI, the gradient of
// a loss with respect to every pixel of the image Render computes, it
// writes dL/dP (NParams values) to out. Rendered pixels with dI ≠ 0 are
// differentiated one by one (the forward value recomputed on the way), in
// row tiles fixed by the image size; tile sums are added in tile order, so
// the result does not depend on the number of threads.
//
// Piecewise-constant parts of the model contribute what their smooth
// pieces do: the nearest-reflection lookup and the tophat shape have zero
// derivative in hkl, the resolution cut-off and the interpolation
// switch-off stay where the forward pass put them.
func Gradient(c *Config, in *Inputs, dI []float64, out []float64) {
	// The loss whose derivative by each pixel is dI.
	LossGradient(c, in, &PixelLoss{Kind: LossLinear, Observed: dI}, out)
}

// LossGradient computes the pixel-wise loss l of the image Render would
// compute (l.Check must accept it) and writes its gradient dL/dP to out,
// in one pass
// over the pixels: each pixel's intensity, loss term and gradient come
// from the same walk through its terms, so the cost is that of the
// backward pass alone. Tiles as in Gradient; the loss is their sum in
// tile order (each tile's with compensated summation).
func LossGradient(c *Config, in *Inputs, l *PixelLoss, out []float64) float64 {
	k := newKernel(c, in)
	k.gradSetup()
	pixel := func(i, f, s int, m interpMode, u int, a []float64, w *gradWork) float64 {
		j := l.indexAt(i, &w.listAt) // (a pixel list: no search for pixels in order)
		if j < 0 || l.skipsAt(j) {
			return 0
		}
		t, dt := l.termAt(j, k.pixelWalk(f, s, m, u, w))
		if dt != 0 {
			k.pixelBack(dt, a, w)
		} else {
			clear(w.tmp)
		}
		return t
	}
	var row func(s int, a []float64, w *gradWork, ls *lossSum)
	if k.lossRowStructure() {
		row = func(s int, a []float64, w *gradWork, ls *lossSum) {
			k.lossRow(s, in.Mask, l, a, w, ls, pixel)
		}
	}
	return k.reduce(in, out, row, pixel)
}

// neumaier adds v to the compensated sum (sum, comp).
func neumaier(sum, comp, v float64) (float64, float64) {
	x := sum + v
	if math.Abs(sum) >= math.Abs(v) {
		comp += (sum - x) + v
	} else {
		comp += (v - x) + sum
	}
	return x, comp
}

// lossSlots is the number of compensated partial sums of a gradient
// tile's loss value (lossSum), in every build.
const lossSlots = 8

// lossSum is a gradient tile's loss value: lossSlots compensated sums
// (Neumaier's: s, with c its compensation), the terms added in order,
// a loss row's chunk's j-th term (PixelLoss.terms, perPixel) to sum j
// mod lossSlots, and the term of pixel f of a row reduce's per-pixel
// walk takes to sum f mod lossSlots. The split is fixed, so the value
// does not depend on the lanes (lossSumsLanes adds a vector of terms to
// as many sums at once) or on the number of threads; one sum in pixel
// order was a chain of dependent additions, 8 % of a gradient run at
// cubic 1024².
type lossSum struct {
	s, c [lossSlots]float64
}

// add adds t, a chunk's j-th term, to the sums.
func (a *lossSum) add(j int, t float64) {
	q := j % lossSlots
	a.s[q], a.c[q] = neumaier(a.s[q], a.c[q], t)
}

// value is the sums' total: the sums added with compensation in slot
// order, then their compensations.
func (a *lossSum) value() float64 {
	var s, c float64
	for _, v := range a.s {
		s, c = neumaier(s, c, v)
	}
	for _, v := range a.c {
		c += v
	}
	return s + c
}

// reduce runs pixel(i, f, s, mode, until, acc, w) for every rendered pixel
// in row tiles (or, when it is not nil, row(s, acc, w, ls) for every row,
// which adds its pixels' values to the tile's lossSum itself),
// sums the tiles' parameter gradients (and the values pixel returns) in
// tile order, turns the orientation adjoints into parameter gradients and
// writes them to out.
func (k *kernel) reduce(in *Inputs, out []float64, row func(s int, acc []float64, w *gradWork, ls *lossSum),
	pixel func(i, f, s int, m interpMode, u int, acc []float64, w *gradWork) float64) float64 {
	c := k.c
	mode, cut, until := interpNone, -1, 0
	if c.Interpolate && c.HasHKL {
		mode = interpOn
		cut, until = k.interpolationCutoff(in.Mask)
	}
	nt := min(gradTiles, c.SPixels)
	per := (c.SPixels + nt - 1) / nt
	L := NParams + 9*len(k.orient)
	acc := make([][]float64, nt)
	vals := make([]float64, nt)
	parallelWorkers(nt, func() func(t int) {
		// One scratch state per goroutine: it is left clean after every
		// pixel.
		w := &gradWork{tmp: make([]float64, L), hkl: make([]float64, 3*len(k.orient))}
		return func(t int) {
			a := make([]float64, L)
			var ls lossSum
			for s := t * per; s < min((t+1)*per, c.SPixels); s++ {
				// The loss rows take the rows that do not interpolate:
				// every row without interpolation, those after the
				// switch-off point's row with it.
				if row != nil && (mode == interpNone || cut >= 0 && s > cut/c.FPixels) {
					row(s, a, w, &ls)
					continue
				}
				// With interpolation on the lanes, the loss rows take the
				// rows before the switch-off point's too, interpolating
				// (and so do the pixels they hand to the per-pixel walk:
				// perPixel).
				if row != nil && k.interpLanes() && (cut < 0 || s < cut/c.FPixels) {
					w.interp = true
					row(s, a, w, &ls)
					w.interp = false
					continue
				}
				for f := 0; f < c.FPixels; f++ {
					i := s*c.FPixels + f
					if !c.Rendered(f, s, in.Mask) {
						continue
					}
					m, u := mode, 0
					switch {
					case cut < 0 || mode == interpNone:
					case i < cut:
					case i == cut:
						m, u = interpUntil, until
					default:
						m = interpNone
					}
					ls.add(f, pixel(i, f, s, m, u, a, w))
				}
			}
			acc[t], vals[t] = a, ls.value()
		}
	})
	total := make([]float64, L)
	value := 0.0
	for t, a := range acc {
		for i, v := range a {
			total[i] += v
		}
		value += vals[t]
	}
	k.orientationGrad(total[NParams:], total)
	copy(out, total[:NParams])
	for i := range out[:NParams] {
		if !c.wants(i) {
			out[i] = 0
		}
	}
	return value
}

// gradTiles is the number of row tiles Gradient reduces over: fixed, so
// that sums do not depend on GOMAXPROCS.
const gradTiles = 64

// interpolationCutoff runs the forward pass with interpolation on and
// returns the first rendered pixel (scan order) and evaluation at which the
// reference would switch it off, or −1: row by row up to each row's first
// such point (on the lanes where they interpolate, whole rows into
// scratch space), in batches of rows in order (untilCutoff). It is the
// render's search without the rest of the render (LossGradient's, and
// InterpolationCutoff's).
func (k *kernel) interpolationCutoff(mask []float64) (pixel, eval int) {
	c := k.c
	firstOOR := make([]int, c.SPixels)
	firstEval := make([]int, c.SPixels)
	if k.interpLanes() {
		pixel, eval, _ = untilCutoff(c, firstOOR, firstEval, func(from, to int) {
			parallelWorkers(to-from, func() func(int) {
				rb := k.newRowBuf()
				rb.interp = true
				row := make([]float64, c.FPixels)
				return func(i int) {
					var om float64
					firstOOR[from+i], firstEval[from+i] = rowLanes(k, from+i, mask, row, &om, rb)
				}
			})
		})
		return pixel, eval
	}
	pixel, eval, _ = untilCutoff(c, firstOOR, firstEval, func(from, to int) {
		parallelRows(to-from, func(i int) {
			s := from + i
			firstOOR[s] = -1
			for f := 0; f < c.FPixels; f++ {
				if c.Rendered(f, s, mask) {
					if _, e := k.pixel(f, s, interpOn, 0, nil, nil); e >= 0 {
						firstOOR[s], firstEval[s] = f, e
						return
					}
				}
			}
		})
	})
	return pixel, eval
}

// geo is one sub-pixel's geometry: its coordinates on the detector, lab
// position before and after bending onto the curved detector, distance
// and unit direction from the sample.
type geo struct {
	t, subF, subS    int
	fdet, sdet, odet float64
	flat, pos, d     [3]float64
	r, invR          float64
}

// geomInto computes what kernel.position computes, keeping the pieces
// the backward pass needs.
func (k *kernel) geomInto(g *geo, f, s, subF, subS, t int) {
	os := k.c.Oversample
	g.t, g.subF, g.subS = t, subF, subS
	g.fdet = k.sub*float64(f*os+subF) + k.sub/2
	g.sdet = k.sub*float64(s*os+subS) + k.sub/2
	g.odet = float64(t) * k.thickStep
	for i := 0; i < 3; i++ {
		g.flat[i] = g.fdet*k.fd[i] + g.sdet*k.sd[i] + g.odet*k.od[i] + k.pix0[i]
	}
	g.pos = g.flat
	if k.c.Curved {
		g.pos = k.bend(g.flat)
	}
	g.r = math.Sqrt(dot(g.pos, g.pos))
	g.invR = 1 / g.r
	g.d = [3]float64{g.pos[0] * g.invR, g.pos[1] * g.invR, g.pos[2] * g.invR}
}

// geomBack adds to acc the parameter gradient of a sub-pixel geometry
// whose direction d and distance r have adjoints dbar and rbar.
func (k *kernel) geomBack(g *geo, dbar [3]float64, rbar float64, acc []float64) {
	_ = acc[NParams-1]
	var pb [3]float64
	dd := dot(dbar, g.d)
	for i := 0; i < 3; i++ {
		pb[i] = (dbar[i]-dd*g.d[i])*g.invR + rbar*g.d[i]
	}
	fb := pb
	if k.c.Curved {
		D := k.distance
		var v [3]float64
		for i := 0; i < 3; i++ {
			v[i] = D * k.c.Beam[i]
		}
		th1, th2 := g.flat[1]/D, g.flat[2]/D
		v1 := rotateAxis(v, k.sd, th1)
		v1bar, fdbar, th2bar := rotateAxisBack(v1, k.fd, th2, pb)
		vbar, sdbar, th1bar := rotateAxisBack(v, k.sd, th1, v1bar)
		for i := 0; i < 3; i++ {
			acc[PFdet+i] += fdbar[i]
			acc[PSdet+i] += sdbar[i]
		}
		acc[PDistance] += dot(vbar, k.c.Beam) - (th1bar*g.flat[1]+th2bar*g.flat[2])/(D*D)
		fb = [3]float64{0, th1bar / D, th2bar / D}
	}
	for i := 0; i < 3; i++ {
		acc[PPix0+i] += fb[i]
		acc[PFdet+i] += g.fdet * fb[i]
		acc[PSdet+i] += g.sdet * fb[i]
	}
	acc[PPixel] += (dot(fb, k.fd)*g.fdet + dot(fb, k.sd)*g.sdet) * k.invPitch
	if g.t != 0 {
		for i := 0; i < 3; i++ {
			acc[PObs+i] += g.odet * fb[i]
		}
		acc[PThickStep] += dot(fb, k.od) * float64(g.t)
	}
}

// rotateAxisBack is the adjoint of y = rotateAxis(v, u, th): given ybar it
// returns the adjoints of v, u and th.
func rotateAxisBack(v, u [3]float64, th float64, ybar [3]float64) (vbar, ubar [3]float64, thbar float64) {
	c, s := math.Cos(th), math.Sin(th)
	uv, uy := dot(u, v), dot(u, ybar)
	yxu, vxy, uxv := cross(ybar, u), cross(v, ybar), cross(u, v)
	for i := 0; i < 3; i++ {
		vbar[i] = (1-c)*uy*u[i] + c*ybar[i] + s*yxu[i]
		ubar[i] = (1-c)*(uv*ybar[i]+uy*v[i]) + s*vxy[i]
		thbar += ybar[i] * (u[i]*uv*s - v[i]*s + uxv[i]*c)
	}
	return vbar, ubar, thbar
}

// omegaBack adds the gradient of the solid angle of g (adjoint wbar) to
// acc and returns the adjoint it passes to r.
func (k *kernel) omegaBack(g *geo, wbar float64, acc []float64) (rbar float64) {
	inv3 := g.invR * g.invR * g.invR
	if k.c.PointPixel {
		return -2 * wbar * inv3
	}
	_ = acc[NParams-1]
	acc[PPixel] += wbar * 2 * k.pitch * k.closeD * inv3
	cd := wbar * k.pitch * k.pitch * inv3 // ∂L/∂(close distance)
	for i := 0; i < 3; i++ {
		acc[PPix0+i] += cd * k.od[i]
		acc[PObs+i] += cd * k.pix0[i]
	}
	return -3 * cd * k.closeD * g.invR
}

// capture is the fraction of photons along direction d absorbed in sensor
// layer t (as kernel.pixel computes it).
func (k *kernel) capture(g *geo) float64 {
	return k.captureFrac(g.t, dot(g.d, k.od))
}

// captureBack adds the gradient of capture(g) (adjoint cbar) to acc and
// returns the adjoint it passes to the direction.
func (k *kernel) captureBack(g *geo, cbar float64, acc []float64) (dbar [3]float64) {
	par := dot(g.d, k.od)
	step, mu, pbar := k.captureAdjoint(g.t, par, cbar)
	acc[PThickStep] += step
	acc[PMu] += mu
	for i := 0; i < 3; i++ {
		dbar[i] = pbar * k.od[i]
		acc[PObs+i] += pbar * g.d[i]
	}
	return dbar
}

// captureAdjoint returns the gradient of captureFrac(t, par) (adjoint
// cbar) by the layer step and by μ, and the adjoint it passes to the
// obliquity par.
func (k *kernel) captureAdjoint(t int, par, cbar float64) (step, mu, pbar float64) {
	tf := float64(t)
	a := k.thickStep * k.mu / par
	abar := cbar * (-tf*exp(-tf*a) + (tf+1)*exp(-(tf+1)*a))
	return abar * k.mu / par, abar * k.thickStep / par, -abar * a / par
}

// polarizationGrad is Polarization for source si with its derivatives by
// the Kahn factor and by the diffracted direction d.
func (k *kernel) polarizationGrad(si int, d [3]float64) (p, dkahn float64, dd [3]float64) {
	sr := &k.src[si]
	p, dkahn, a, b, g, _ := k.polarizationCoef(si, d[0], d[1], d[2])
	for i := range dd {
		dd[i] = a*sr.inc[i] + b*sr.ein[i] + g*sr.bin[i]
	}
	return p, dkahn, dd
}

// sincgGrad is Sincg(h, n) with its derivatives by h and by n (n treated
// as continuous: the derivative of Sincg's continuation σ·sin(nπd)/sin(πd),
// d = h − m, which at whole n is π·d·cos(nπh)/sin(πh), σ at the peaks).
func sincgGrad(h, n float64) (s, dh, dn float64) {
	if n == math.Trunc(n) && math.Abs(n) < 1<<52 && math.Abs(h) < 1<<52 {
		// On the offset d from the nearest integer m, as sincgWhole:
		// sincg = σ·sin(nπd)/sin(πd), σ = (−1)^{(n−1)m}.
		m := math.Round(h)
		d := h - m
		x := math.Pi * d
		sigma := 1.0
		if int64(n)&1 == 0 && int64(m)&1 != 0 {
			sigma = -1
		}
		if x == 0 {
			if h == 0 {
				return n, 0, 1
			}
			// At an exact lattice point the peak height grows by one
			// per cell.
			return sigma * n, 0, sigma
		}
		s1, c1 := sinCosPiReduced(d)
		var sn, cn float64
		if n <= 16 {
			// sin nx, cos nx by angle addition: cheaper than Sincos for
			// the usual few cells, and within a few ulp.
			sn, cn = s1, c1
			for j := int(n); j > 1; j-- {
				sn, cn = sn*c1+cn*s1, cn*c1-sn*s1
			}
		} else {
			sn, cn = sinCosPi(n * d)
		}
		inv := 1 / s1
		var dx float64
		if nx := n * x; math.Abs(nx) < 1e-3 {
			// Series: the closed form cancels badly near the peak.
			dx = sincgSeriesLanes(n, x)
		} else {
			dx = (n*cn - sn*c1*inv) * inv
		}
		return sigma * sn * inv, sigma * math.Pi * dx, sigma * math.Pi * d * cn * inv
	}
	if !(math.Abs(h) < 1<<52) {
		x := math.Pi * h
		sn, cn := math.Sincos(n * x)
		s1, c1 := math.Sincos(x)
		return sn / s1, math.Pi * (n*cn*s1 - sn*c1) / (s1 * s1), x * cn / s1
	}
	// Not whole: Sincg's continuation on the offset d (σ = 1), as the
	// lane kernels have it (Sincg), with the derivatives' factors −π and
	// π they leave out.
	s, dh, dn = sincgRatioGradLanes(h-math.RoundToEven(h), n)
	return s, minusPi * dh, piC * dn
}

// latt is a lattice-transform value with its derivatives.
type latt struct {
	fl     float64
	dh     [3]float64 // by h, k, l
	dn     [3]float64 // by Na, Nb, Nc
	dfudge float64
	dstar  [9]float64 // by a*, b*, c* (Gaussian shape only)
}

// latticeGrad computes kernel.lattice (for every shape) with derivatives.
func (k *kernel) latticeGrad(h, kk, l float64, g *latt) {
	c := k.c
	*g = latt{}
	if c.Shape == Square {
		k.squareGrad(h, kk, l, g)
		return
	}
	// The spot shapes: the loss rows' formulas on one lane (shapeGradLanes;
	// F_latt with kernel.lattice's bits).
	fl, g0, g1, g2, n0, n1, n2, dfu, w, v0, v1, v2, dh, dk, dl := shapeGradLanes(k.lr, h, kk, l)
	g.fl, g.dh, g.dn, g.dfudge = fl, [3]float64{g0, g1, g2}, [3]float64{n0, n1, n2}, dfu
	if c.Shape == Gauss {
		for i, d := range [3]float64{dh, dk, dl} {
			for j, v := range [3]float64{v0, v1, v2} {
				g.dstar[3*i+j] = w * d * v
			}
		}
	}
}

// squareGrad is latticeGrad for the parallelepiped: Π sincg(πh, N) over
// the axes with N > 1. It sets every field the square shape uses.
func (k *kernel) squareGrad(h, kk, l float64, g *latt) {
	sa, sb, sc := 1.0, 1.0, 1.0
	var ha, hb, hc, na, nb, nc float64
	if k.na > 1 {
		sa, ha, na = k.sincgGradAxis(0, h)
	}
	if k.nb > 1 {
		sb, hb, nb = k.sincgGradAxis(1, kk)
	}
	if k.nc > 1 {
		sc, hc, nc = k.sincgGradAxis(2, l)
	}
	g.fl = sa * sb * sc
	g.dh = [3]float64{ha * sb * sc, sa * hb * sc, sa * sb * hc}
	g.dn = [3]float64{na * sb * sc, sa * nb * sc, sa * sb * nc}
	g.dfudge = 0
}

// sincgGradAxis is sincgGrad for axis i (N > 1) with whole N up to
// maxChebyshevN the lane kernels' Chebyshev form on one lane
// (sincgGradLanes): the forward's value bits (sincgWhole's, sincg3's),
// so that the per-pixel walk's intensities are Render's (its
// derivatives times −π and π: sincgGradLanes leaves those out).
func (k *kernel) sincgGradAxis(i int, x float64) (s, dx, dn float64) {
	if k.nmode[i] == nChebyshev && math.Abs(x) < 1<<51 {
		s, dx, dn = sincgGradLanes(k.lr, x, k.lr.nn[i])
		return s, minusPi * dx, piC * dn
	}
	return sincgGrad(x, [3]float64{k.na, k.nb, k.nc}[i])
}

// cellFGrad is cellF with its derivative by the default F.
func (k *kernel) cellFGrad(h, kk, l float64) (f, ddef float64) {
	c := k.c
	if !c.HasHKL {
		return k.defaultF, 1
	}
	h0, k0, l0 := int(math.Ceil(h-0.5)), int(math.Ceil(kk-0.5)), int(math.Ceil(l-0.5))
	if h0 < c.HMin || h0 > c.HMax || k0 < c.KMin || k0 > c.KMax || l0 < c.LMin || l0 > c.LMax {
		return k.defaultF, 1
	}
	i := (h0-c.HMin)*k.hStride + (k0-c.KMin)*k.kStride + (l0 - c.LMin)
	if k.missBits != nil && k.missBits[i] != 0 {
		return k.fhkl[i], 1
	}
	return k.fhkl[i], 0
}

// interpolateGrad is interpolate with its derivatives by h, k, l and by
// the default F (through table cells without data: k.missBits, filledTable):
// interpGradLanes on one lane.
func (k *kernel) interpolateGrad(h, kk, l float64) (f float64, df [3]float64, ddef float64) {
	var ia [1]int32
	var cube [2 * 64]float64
	f, ddef, df[0], df[1], df[2] = interpGradLanes(k.lr, k.fhklBits, k.missBits, &ia, cube[:], h, kk, l)
	return f, df, ddef
}

// gradWork is one worker's scratch space, and the state pixelWalk leaves
// for pixelBack.
type gradWork struct {
	blocks  []block
	pow     []float64
	tmp     []float64 // the pixel's ∂S/∂P (S: the running sum)
	hkl     []float64 // ∂S/∂(h, k, l), 3 per orientation (and source and pixel in loss rows)
	rowSums []float64 // loss rows: 9 per row of sub-pixels, source and orientation (lossRow)
	dsq     []float64 // loss rows: |d − inc|² per sub-pixel, source and pixel (rowChunk each)
	lr      *lossRecs // loss rows: the chunk's records
	oinc    [][3]laneVal
	back    []float64  // loss rows: the backward pass's partial sums (lossBackLanes)
	interp  bool       // loss rows: the row interpolates (kernel.reduce)
	listAt  int        // with a pixel list: where listChunk's and indexAt's searches start
	cube    []float64  // loss rows: interpGradLanes' scratch
	ds      [1]float64 // walkSimple's |d − inc|² (the terms store it; not read)

	f, s                  int  // the pixel
	touchedAll            bool // tmp has entries beyond the terms' own
	sum, post, ibgWeight  float64
	omega, polar, capture factor
	first                 pending
	scratch               geo
}

// block is one (sensor layer, sub-pixel, source) group of a pixel's terms
// under the -oversample_* running-sum rules: the running sum S becomes
// (S + T)·c after each of its n terms.
type block struct {
	c, sStart, after float64 // after: product of c^n over the later blocks
	n                int
}

// factor is a once-applied factor (ω, polarization, capture fraction): its
// value and the sub-pixel it was last computed at (and, for polarization,
// its derivatives by K and by the direction).
type factor struct {
	v             float64
	t, subF, subS int // the sub-pixel
	set           bool
	dk            float64
	dd            [3]float64
}

// geoOf returns the geometry of the sub-pixel f was computed at: the
// pending first block's when it is that one, else computed into scratch.
func (k *kernel) geoOf(f *factor, w *gradWork, scratch *geo) *geo {
	if a := &w.first.at; w.first.used && a.t == f.t && a.subF == f.subF && a.subS == f.subS {
		return a
	}
	k.geomInto(scratch, w.f, w.s, f.subF, f.subS, f.t)
	return scratch
}

// pending is a sub-pixel geometry whose adjoints are still being gathered
// (so that one geomBack serves every factor computed there).
type pending struct {
	at   geo
	dbar [3]float64
	rbar float64
	used bool
}

// pixelWalk walks one pixel's terms, keeping in w what pixelBack needs,
// and returns the pixel's intensity.
//
// I = scale·S·post, where S is the running sum of the terms F²·F_latt²
// (seeded with the water background) and post the product of the factors
// (ω, polarization, capture) that are not applied per term. The walk
// gathers ∂S/∂P in w.tmp (NParams values, then 9 per orientation: adjoints
// of its a, b, c vectors) while it sums S. With any -oversample_* flag the
// running sum is also multiplied after each term by the current block's
// factors; a first walk then records each block's multiplier and term
// count, so that the second knows every term's weight ∂S_final/∂T.
func (k *kernel) pixelWalk(fpix, spix int, mode interpMode, until int, w *gradWork) float64 {
	c := k.c
	w.ibgWeight = 1
	if c.OversampleOmega || c.OversamplePolar || c.OversampleThick {
		k.walk(fpix, spix, mode, until, nil, w)
		after := 1.0
		for b := len(w.blocks) - 1; b >= 0; b-- {
			w.blocks[b].after = after
			after *= math.Pow(w.blocks[b].c, float64(w.blocks[b].n))
		}
		w.ibgWeight = after
	}
	w.f, w.s = fpix, spix
	w.touchedAll = c.Shape == Gauss || c.OversampleOmega || c.OversamplePolar || c.OversampleThick
	w.omega.set, w.polar.set, w.capture.set, w.first.used = false, false, false, false
	if k.simple && mode == interpNone {
		w.sum = k.walkSimple(fpix, spix, w.tmp, w)
	} else {
		w.sum = k.walk(fpix, spix, mode, until, w.tmp, w)
	}
	// The value with kernel.pixel's grouping, (scale·S)·C·P·ω (the same
	// bits as Render's); post = C·P·ω for the backward pass.
	v := k.scale * w.sum
	w.post = 1
	if !c.OversampleThick {
		w.post *= w.capture.v
		v *= w.capture.v
	}
	if !c.OversamplePolar {
		w.post *= w.polar.v
		v *= w.polar.v
	}
	if !c.OversampleOmega {
		w.post *= w.omega.v
		v *= w.omega.v
	}
	return v
}

// pixelBack adds g·∂I/∂P for the pixel pixelWalk walked to acc.
func (k *kernel) pixelBack(g float64, acc []float64, w *gradWork) {
	c := k.c
	omega, polar, capture, first := &w.omega, &w.polar, &w.capture, &w.first
	scratch := &w.scratch
	wpix := g * k.scale * w.post // ∂L/∂S
	// Fold ∂S/∂P in and clear it for the next pixel: all of it, or (the
	// common case: one block, square shape) the entries the terms touch.
	acc = acc[:len(w.tmp)]
	if w.touchedAll {
		for i, v := range w.tmp {
			acc[i] += wpix * v
			w.tmp[i] = 0
		}
	} else {
		for _, i := range [...]int{PNa, PNb, PNc, PFudge, PDefaultF, PLambda} {
			acc[i] += wpix * w.tmp[i]
			w.tmp[i] = 0
		}
		t, a := w.tmp[NParams:], acc[NParams:]
		a = a[:len(t)]
		for i, v := range t {
			a[i] += wpix * v
			t[i] = 0
		}
	}
	for i := range first.dbar {
		first.dbar[i] *= wpix
	}
	first.rbar *= wpix
	// The once-applied factors: ∂L/∂factor = g·scale·S·(the others).
	gs := g * k.scale * w.sum
	if !c.OversampleOmega && omega.set {
		f := gs
		if !c.OversampleThick {
			f *= capture.v
		}
		if !c.OversamplePolar {
			f *= polar.v
		}
		at := k.geoOf(omega, w, scratch)
		k.addBack(first, at, [3]float64{}, k.omegaBack(at, f, acc), acc)
	}
	if c.Thick && !c.OversampleThick && capture.set {
		f := gs
		if !c.OversamplePolar {
			f *= polar.v
		}
		if !c.OversampleOmega {
			f *= omega.v
		}
		at := k.geoOf(capture, w, scratch)
		k.addBack(first, at, k.captureBack(at, f, acc), 0, acc)
	}
	if !c.NoPolar && !c.OversamplePolar && polar.set {
		f := gs
		if !c.OversampleThick {
			f *= capture.v
		}
		if !c.OversampleOmega {
			f *= omega.v
		}
		acc[PKahn] += f * polar.dk
		k.addBack(first, k.geoOf(polar, w, scratch), [3]float64{f * polar.dd[0], f * polar.dd[1], f * polar.dd[2]}, 0, acc)
	}
	if first.used {
		k.geomBack(&first.at, first.dbar, first.rbar, acc)
	}
	acc[PFluence] += g * ThomsonSq / float64(c.Steps()) * w.sum * w.post
	acc[PIbg] += wpix * w.ibgWeight
}

// addBack sends adjoints of a sub-pixel's direction and distance back to
// the parameters: into p when it is the same sub-pixel, else directly.
func (k *kernel) addBack(p *pending, at *geo, dbar [3]float64, rbar float64, acc []float64) {
	if p.used && p.at.same(at) {
		for i := range dbar {
			p.dbar[i] += dbar[i]
		}
		p.rbar += rbar
		return
	}
	k.geomBack(at, dbar, rbar, acc)
}

func (g *geo) same(h *geo) bool {
	return g.t == h.t && g.subF == h.subF && g.subS == h.subS
}

// scatter returns the scattering vector of source si at g (Å⁻¹ scale: 1/m
// as the kernel's wavelengths).
func (k *kernel) scatter(g *geo, si int) [3]float64 {
	sr := &k.src[si]
	return [3]float64{(g.d[0] - sr.inc[0]) * sr.invLambda, (g.d[1] - sr.inc[1]) * sr.invLambda, (g.d[2] - sr.inc[2]) * sr.invLambda}
}

// walk goes through one pixel's terms in kernel.pixel's order and returns
// the final running sum S. With tmp nil it records the -oversample_*
// blocks in w (first walk); otherwise it adds ∂S/∂P to tmp, using the
// blocks recorded when the chain rules apply, and keeps the once-applied
// factors and the first block's geometry adjoints in w.
func (k *kernel) walk(fpix, spix int, mode interpMode, until int, tmp []float64, w *gradWork) float64 {
	c := k.c
	record := tmp == nil
	chain := c.OversampleOmega || c.OversamplePolar || c.OversampleThick
	if record {
		w.blocks = w.blocks[:0]
	}
	sum := k.ibg
	eval, b := 0, 0
	var lg latt
	square := c.Shape == Square
	var gm geo
	var omega, polar, capture float64
	if c.NoPolar {
		polar = 1
	}
	if !record {
		w.polar.v, w.capture.v = polar, 0
		if !c.Thick {
			w.capture.v = 1
		}
	}
	firstBlock := true
	for t := 0; t < c.ThickSteps; t++ {
		capture = 0
		if !c.Thick {
			capture = 1
		}
		for subS := 0; subS < c.Oversample; subS++ {
			for subF := 0; subF < c.Oversample; subF++ {
				k.geomInto(&gm, fpix, spix, subF, subS, t)
				if omega == 0 || c.OversampleOmega {
					omega = k.omega(gm.invR)
					if !record && !c.OversampleOmega {
						of := &w.omega
						of.v, of.t, of.subF, of.subS, of.set = omega, t, subF, subS, true
					}
				}
				if capture == 0 || c.OversampleThick {
					capture = k.capture(&gm)
					if !record && !c.OversampleThick {
						cf := &w.capture
						cf.v, cf.t, cf.subF, cf.subS, cf.set = capture, t, subF, subS, true
					}
				}
				for si := range k.src {
					sr := &k.src[si]
					q := k.scatter(&gm, si)
					if k.dmin > 0 {
						if stol := 0.5 * math.Sqrt(dot(q, q)); stol > 0 && k.dmin > 0.5/stol {
							continue
						}
					}
					var polarD [3]float64
					var polarK float64
					if polar == 0 || c.OversamplePolar {
						polar, polarK, polarD = k.polarizationGrad(si, gm.d)
						if !record && !c.OversamplePolar {
							pf := &w.polar
							pf.v, pf.t, pf.subF, pf.subS, pf.set, pf.dk, pf.dd = polar, t, subF, subS, true, polarK, polarD
						}
					}
					cb := 1.0
					if c.OversampleThick {
						cb *= capture
					}
					if c.OversamplePolar {
						cb *= polar
					}
					if c.OversampleOmega {
						cb *= omega
					}
					// This block's weights: w0 = ∂S_final/∂S at its end.
					w0, n := 1.0, 0
					var pow []float64
					if chain && !record {
						bl := &w.blocks[b]
						w0 = bl.after
						n = bl.n
						w.pow = append(w.pow[:0], 1)
						for i := 0; i < n; i++ {
							w.pow = append(w.pow, w.pow[i]*cb)
						}
						pow = w.pow
					}
					sStart := sum
					var qbar [3]float64
					var cbar float64 // ∂S_end/∂c
					r := 0
					for oi := range k.orient {
						o := &k.orient[oi]
						h, kk, l := dot(o[0], q), dot(o[1], q), dot(o[2], q)
						if square {
							k.squareGrad(h, kk, l, &lg) // the common case, without the general set-up
						} else {
							k.latticeGrad(h, kk, l, &lg)
						}
						if lg.fl == 0 && !c.Water {
							continue
						}
						var fc, ddef float64
						var dfc [3]float64
						switch {
						case mode == interpNone || (mode == interpUntil && eval >= until):
							fc, ddef = k.cellFGrad(h, kk, l)
						case k.inInterpRange(h, kk, l):
							fc, dfc, ddef = k.interpolateGrad(h, kk, l)
						default:
							fc, ddef = k.cellFGrad(h, kk, l)
						}
						eval++
						term := fc * fc * lg.fl * lg.fl
						if chain {
							sum = (sum + term) * cb
						} else {
							sum += term
						}
						if record {
							r++
							continue
						}
						wt := w0
						if chain {
							wt *= pow[n-r]
							cbar += float64(n-r) * term * pow[n-r-1]
						}
						r++
						tfl := wt * 2 * fc * fc * lg.fl
						tfc := wt * 2 * fc * lg.fl * lg.fl
						hb, kb, lb := tfl*lg.dh[0]+tfc*dfc[0], tfl*lg.dh[1]+tfc*dfc[1], tfl*lg.dh[2]+tfc*dfc[2]
						ob := tmp[NParams+9*oi : NParams+9*oi+9]
						for i := 0; i < 3; i++ {
							ob[i] += hb * q[i]
							ob[3+i] += kb * q[i]
							ob[6+i] += lb * q[i]
							qbar[i] += hb*o[0][i] + kb*o[1][i] + lb*o[2][i]
						}
						tmp[PNa] += tfl * lg.dn[0]
						tmp[PNb] += tfl * lg.dn[1]
						tmp[PNc] += tfl * lg.dn[2]
						tmp[PFudge] += tfl * lg.dfudge
						tmp[PDefaultF] += tfc * ddef
						if c.Shape == Gauss {
							for i := 0; i < 9; i++ {
								tmp[PAStar+i] += tfl * lg.dstar[i]
							}
						}
					}
					if record {
						w.blocks = append(w.blocks, block{c: cb, sStart: sStart, n: r})
						continue
					}
					// Back through q = (d − incident)/λ.
					var dbar [3]float64
					for i := 0; i < 3; i++ {
						dbar[i] = qbar[i] * sr.invLambda
					}
					tmp[PLambda] -= dot(qbar, q) * k.invLambda0
					var rbar float64
					if chain {
						bl := &w.blocks[b]
						b++
						if bl.n > 0 {
							cbar += float64(bl.n) * bl.sStart * pow[bl.n-1]
						}
						cbar *= w0
						// c = capture·polar·omega over the flags set.
						if c.OversampleThick {
							db := k.captureBack(&gm, cbar*others(c, true, false, false, capture, polar, omega), tmp)
							for i := range dbar {
								dbar[i] += db[i]
							}
						}
						if c.OversamplePolar {
							f := cbar * others(c, false, true, false, capture, polar, omega)
							tmp[PKahn] += f * polarK
							for i := range dbar {
								dbar[i] += f * polarD[i]
							}
						}
						if c.OversampleOmega {
							rbar += k.omegaBack(&gm, cbar*others(c, false, false, true, capture, polar, omega), tmp)
						}
					}
					if firstBlock {
						// Kept for the factors computed here (most often
						// all of them): one geomBack at the end.
						firstBlock = false
						w.first = pending{at: gm, dbar: dbar, rbar: rbar, used: true}
						continue
					}
					w.touchedAll = true
					k.geomBack(&gm, dbar, rbar, tmp)
				}
			}
		}
	}
	return sum
}

// others is the product of the per-term factors other than the one
// selected (capture, polar or omega), among those the flags apply.
func others(c *Config, skipCapture, skipPolar, skipOmega bool, capture, polar, omega float64) float64 {
	v := 1.0
	if c.OversampleThick && !skipCapture {
		v *= capture
	}
	if c.OversamplePolar && !skipPolar {
		v *= polar
	}
	if c.OversampleOmega && !skipOmega {
		v *= omega
	}
	return v
}

// orientationGrad turns the adjoints of every orientation's a, b, c
// (ob: 9 per orientation) into gradients of the base cell vectors, the
// φ start and step, and the mosaic spread (out, NParams layout).
func (k *kernel) orientationGrad(ob []float64, out []float64) {
	c := k.c
	p := k.p
	base := [3][3]float64{vec(p, PCellA), vec(p, PCellB), vec(p, PCellC)}
	for t := 0; t < c.PhiSteps; t++ {
		phi := p[PPhi0] + p[PPhiStep]*float64(t)
		var rotated [3][3]float64 // R(φ)·v0
		for v := 0; v < 3; v++ {
			rotated[v] = base[v]
			if phi != 0 {
				rotated[v] = rotateAxis(base[v], c.Spindle, phi)
			}
		}
		for m := 0; m < c.Domains; m++ {
			oi := t*c.Domains + m
			adj := ob[9*oi : 9*oi+9]
			var phibar float64
			for v := 0; v < 3; v++ {
				u := [3]float64{adj[3*v], adj[3*v+1], adj[3*v+2]}
				if c.Mosaic && m > 0 {
					// o = U·w with U the rotation by F·spread about the
					// domain axis V: ∂o/∂spread = F·V × o.
					r := k.mosaic[m*MosaicCols:]
					axis := [3]float64{r[0], r[1], r[2]}
					out[PMosaic] += r[3] * dot(u, cross(axis, k.orient[oi][v]))
					u = matTVec(&k.umats[m], u)
				}
				phibar += dot(u, cross(c.Spindle, rotated[v]))
				if phi != 0 {
					u = rotateAxis(u, c.Spindle, -phi)
				}
				for i := 0; i < 3; i++ {
					out[PCellA+3*v+i] += u[i]
				}
			}
			out[PPhi0] += phibar
			out[PPhiStep] += phibar * float64(t)
		}
	}
}

func matTVec(u *[9]float64, v [3]float64) [3]float64 {
	return [3]float64{u[0]*v[0] + u[3]*v[1] + u[6]*v[2], u[1]*v[0] + u[4]*v[1] + u[7]*v[2], u[2]*v[0] + u[5]*v[1] + u[8]*v[2]}
}
