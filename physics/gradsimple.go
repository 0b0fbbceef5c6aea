package physics

import "math"

// oneSixth is 1/6 rounded (lagrangeWeightsLanes).
const oneSixth = 1.0 / 6

// Constants of the lane kernels (lanes.go), which take only named ones.
const (
	seriesMax2     = 1e-6 // (Nπd)² below which sincg's ∂/∂x is a series
	piC            = math.Pi
	minusPi        = -math.Pi
	minusInvPi     = -invPi // (fGradAddLanes)
	halfPiSq       = math.Pi * math.Pi / 2
	piSq           = math.Pi * math.Pi
	sinc3SeriesMax = 1 // x below which sinc3GradLanes takes its series
	// The series' coefficients j·a_j, a_j = 3(−1)^j·2(j+1)/(2j+3)! those
	// of sinc3 in x² (sinc3GradLanes).
	sinc3B1 = -1.0 / 10
	sinc3B2 = 2 * 18.0 / 5040
	sinc3B3 = -3 * 24.0 / 362880
	sinc3B4 = 4 * 30.0 / 39916800
	sinc3B5 = -5 * 36.0 / 6227020800
	sinc3B6 = 6 * 42.0 / 1307674368000
	sinc3B7 = -7 * 48.0 / 355687428096000
	sinc3B8 = 8 * 54.0 / 121645100408832000
)

// polarizationCoef is polarizationCoefLanes on one lane, for source si.
func (k *kernel) polarizationCoef(si int, dx, dy, dz float64) (p, dkahn, alpha, beta, gamma, dd float64) {
	return polarizationCoefLanes(k.lr, &k.ll.src[si], dx, dy, dz)
}

// termLanes are a row chunk's diffracted directions (d) and its
// pixels' sums over their terms (termsGradLanes): S, its derivatives by
// Na, Nb, Nc and the default F, and σ (the last four in the units of
// termUnits, whose consumers take them). With fresh set the sums have not
// been started: the terms kernel that runs next starts them (S at the
// water background, the others at 0) instead of loading them, and
// clears it (lossFrontLanes sets it: its stores of the starting values
// were a third of the loss rows' front at cubic 1024²).
type termLanes struct {
	d                       [3][rowChunk]float64
	s, na, nb, nc, def, sig [rowChunk]float64
	fresh                   bool
	_                       [lineBytes - 1]byte // (whole lines: TestLaneDataAligned)
}

// termsGrad is the signature of termsGradLanes and its copies. A call
// through one makes its arguments escape: scratch passed to it lives in
// gradWork, not on the caller's stack (an array there would be
// allocated at every call).
type termsGrad func(k *kernel, si int, oinc [][3]laneVal, t *termLanes, cube, ds, hkl []float64, stride, np int)

// The copies of the terms kernel (termsKind): the whole gradient's,
// interpolation's, the crystal's alone (no σ, no N), without N, without σ.
const (
	termsWhole = iota
	termsInterp
	termsCrystal
	termsNoN
	termsNoSigma
)

// termsScalar are the scalar copies of the terms kernel in termsKind's
// order, N common to the axes and per axis (laneReps.axes);
// interpolation has the per-axis copy alone.
var termsScalar = [...][2]termsGrad{
	termsWhole:   {(*kernel).termsGradLanes, (*kernel).termsGradAxesLanes},
	termsInterp:  {(*kernel).termsGradAxesInterpLanes, (*kernel).termsGradAxesInterpLanes},
	termsCrystal: {(*kernel).termsGradCrystalLanes, (*kernel).termsGradAxesCrystalLanes},
	termsNoN:     {(*kernel).termsGradNoNLanes, (*kernel).termsGradAxesNoNLanes},
	termsNoSigma: {(*kernel).termsGradNoSigmaLanes, (*kernel).termsGradAxesNoSigmaLanes},
}

// termsKind is the copy of the terms kernel a loss row runs
// (termsGradRow), as indices into termsScalar and termsVector: kind,
// interpolating the interpolating one (it takes every part), else the
// one that leaves out what the gradient does not want (Config.wants): σ
// without the detector's and the beam's parameters, the sums of N
// without N; and axes, 1 for N per axis (laneReps.axes), else 0.
func (k *kernel) termsKind(interp bool) (kind, axes int) {
	if k.lr.axes {
		axes = 1
	}
	switch noGeom, noN := k.c.noGeometry(), k.c.noN(); {
	case interp:
		return termsInterp, axes
	case noGeom && noN:
		return termsCrystal, axes
	case noN:
		return termsNoN, axes
	case noGeom:
		return termsNoSigma, axes
	}
	return termsWhole, axes
}

// gradSetup sets what termsGradLanes reads besides the forward kernels'
// values: k.perDef.
func (k *kernel) gradSetup() {
	k.perDef = (k.c.HasHKL || k.ibg != 0) && k.c.wants(PDefaultF)
}

// addOrientation adds w·(∂S/∂h, ∂S/∂k, ∂S/∂l)⊗q, the derivatives by
// every orientation's a, b, c vectors (9 per orientation in ob), from the
// derivatives by h, k, l that termsGradLanes wrote to hkl (one pixel).
func addOrientation(ob, hkl []float64, qx, qy, qz, w float64) {
	for oi := 0; oi < len(hkl)/3; oi++ {
		b, v := ob[9*oi:9*oi+9], hkl[3*oi:3*oi+3]
		hbar, kbar, lbar := w*v[0], w*v[1], w*v[2]
		b[0], b[1], b[2] = b[0]+hbar*qx, b[1]+hbar*qy, b[2]+hbar*qz
		b[3], b[4], b[5] = b[3]+kbar*qx, b[4]+kbar*qy, b[5]+kbar*qz
		b[6], b[7], b[8] = b[6]+lbar*qx, b[7]+lbar*qy, b[8]+lbar*qz
	}
}

// walkSimple is walk for the structures kernel.simple covers (no
// -oversample_* running-sum rules, flat detector, the parallelepiped with
// N in the lane kernels' forms (kernel.nmode), nearest reflections, no
// resolution cut):
// the same bookkeeping in w, with the terms from termsGradLanes' scalar
// copy (one pixel). The loss rows (lossRow) take these structures row by
// row; this walk is left the pixels after the interpolation's switch-off
// and the chunks lossRow hands back (perPixel).
func (k *kernel) walkSimple(fpix, spix int, tmp []float64, w *gradWork) float64 {
	c := k.c
	tl, oinc := w.terms(), w.orientScratch(len(k.orient))
	tl.fresh = true // (the first terms start the pixel's sums)
	var lam float64
	M := len(k.orient)
	hkl := w.hkl[:3*M]
	hu, nu, du := k.termUnits()
	var gm geo
	var omega, polar, capture float64
	if c.NoPolar {
		polar = 1
	}
	w.polar.v, w.capture.v = polar, 0
	if !c.Thick {
		w.capture.v = 1
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
				if omega == 0 {
					omega = k.omega(gm.invR)
					w.omega.v, w.omega.t, w.omega.subF, w.omega.subS, w.omega.set = omega, t, subF, subS, true
				}
				if capture == 0 {
					capture = k.capture(&gm)
					w.capture.v, w.capture.t, w.capture.subF, w.capture.subS, w.capture.set = capture, t, subF, subS, true
				}
				dx, dy, dz := gm.d[0], gm.d[1], gm.d[2]
				var dbar [3]float64 // ∂S/∂d through q
				for si := range k.src {
					sr := &k.src[si]
					qx, qy, qz := (dx-sr.inc[0])*sr.invLambda, (dy-sr.inc[1])*sr.invLambda, (dz-sr.inc[2])*sr.invLambda
					if polar == 0 {
						var pk float64
						var pd [3]float64
						polar, pk, pd = k.polarizationGrad(si, gm.d)
						pf := &w.polar
						pf.v, pf.t, pf.subF, pf.subS, pf.set, pf.dk, pf.dd = polar, t, subF, subS, true, pk, pd
					}
					tl.d[0][0], tl.d[1][0], tl.d[2][0] = dx, dy, dz
					k.termsGradRow(false, si, oinc, tl, nil, w.ds[:], hkl, 1, 1)
					for i := range hkl {
						hkl[i] *= hu
					}
					addOrientation(tmp[NParams:], hkl, qx, qy, qz, 1)
					// Back through q = (d − incident)/λ.
					var qb [3]float64
					for oi := range k.orient {
						o, v := &k.orient[oi], hkl[3*oi:3*oi+3]
						for j := range qb {
							qb[j] += v[0]*o[0][j] + v[1]*o[1][j] + v[2]*o[2][j]
						}
					}
					for j := range dbar {
						dbar[j] += qb[j] * sr.invLambda
					}
					lam -= (qb[0]*qx + qb[1]*qy + qb[2]*qz) * k.invLambda0
				}
				if firstBlock {
					// Kept for the factors computed here: one geomBack at
					// the end.
					firstBlock = false
					w.first = pending{at: gm, dbar: dbar, used: true}
					continue
				}
				w.touchedAll = true
				k.geomBack(&gm, dbar, 0, tmp)
			}
		}
	}
	tmp[PNa] += nu * tl.na[0]
	tmp[PNb] += nu * tl.nb[0]
	tmp[PNc] += nu * tl.nc[0]
	def := du * tl.def[0]
	if !c.HasHKL && k.ibg == 0 {
		// Every term is F²·F_latt² with the one F: ∂S/∂F = 2S/F.
		def = 0
		if k.defaultF != 0 {
			def = 2 * tl.s[0] / k.defaultF
		}
	}
	tmp[PDefaultF] += def
	tmp[PLambda] += lam
	return tl.s[0]
}

// lossRow is the fused loss-and-gradient walk of the rendered pixels of
// row spix for the structures lossRowStructure takes, with
// any number of sub-pixels and sensor layers. It adds g·∂I/∂P to acc
// (orientation adjoints after NParams; g: the pixel's loss derivative) and
// each pixel's loss term to the tile's sums ls. A chunk with
// a pixel whose capture fraction is 0 (the reference then takes the next
// sub-pixel's) goes pixel by pixel through pixel instead (LossGradient's
// per-pixel walk).
//
// The pixels are taken in chunks (chunkPixels), each in three passes:
// the terms, sub-pixel by sub-pixel (layers, then sub-pixels, as the
// forward rows: lossFrontLanes, for the later sub-pixels
// lossFrontSubLanes, then termsGradLanes, on vector lanes where the CPU
// has them: S, ∂S/∂N, ∂S/∂(h, k, l) per sub-pixel, source and
// orientation, and σ, their contraction with d), the loss terms, then the
// backward pass, once per sub-pixel (lossBackLanes, lossBackSubLanes, in
// loops without calls, so that their running sums stay in registers). The backward pass
// sums over the row only what the adjoints are linear in: along a row of
// sub-pixels the lab position is p = P₀ + fdet·f, so
//
//	Σ u_i·q_j = λ⁻¹·(Σ u_i/R·P₀⊥_j + Σ fdet·u_i/R·f⊥_j − ½·Σ u_i·|d − inc|²·inc_j)
//
// (⊥: the part across inc; the part along it from |d − inc|², which
// does not cancel at small angles) gives the orientation adjoints
// (u = ∂L/∂(h, k, l)), and the part of
// ∂L/∂p that comes through q, (I − d⊗d)·λ⁻¹·Σ_i u_i·o_i/R, is
// λ⁻¹·Σ_i o_i·Σ u_i/R less a multiple of d per pixel (σ). Per pixel
// that is three row sums of 3-vectors per source and orientation instead
// of two 3×3 products. P₀ differs between the rows of sub-pixels (their
// sdet and layer depth), so the row sums are kept per row of sub-pixels.
//
// With a sensor thickness the pixel is scale·S·C·P·ω, C the capture
// fraction of the last layer's first sub-pixel (as the forward rows and
// the reference take it): the backward pass takes g·C for g, which gives
// every adjoint but C's own, and C's (through μ, the layer step, the
// detector normal and that sub-pixel's direction) is added here, per
// pixel.
func (k *kernel) lossRow(spix int, mask []float64, loss *PixelLoss, acc []float64, w *gradWork, ls *lossSum,
	pixel func(i, f, s int, m interpMode, u int, acc []float64, w *gradWork) float64) {
	c := k.c
	os, T := c.Oversample, c.ThickSteps
	R := T * os // rows of sub-pixels, t·os + subS
	J := R * os // sub-pixels per pixel, (t·os + subS)·os + subF
	r := w.recs(os, T)
	S, M := len(k.src), len(k.orient)
	SM := S * M
	n := lossChunk(3 * SM * J)
	// The vector lanes take whole vectors of pixels (padded chunks of up
	// to rowChunk, a multiple of maxLanes) and so want chunks of at least
	// maxLanes pixels, which ∂S/∂(h, k, l) of up to 5461 sub-pixels,
	// sources and orientations leave room for (hklCap); with more the
	// scalar copy runs.
	vector := n >= maxLanes
	w.rowScratch(k, r, J, n, R, S, SM)
	hkl, rs, dsq, back := w.hkl, w.rowSums[:R*9*SM], w.dsq, w.back
	// The spot shapes' sums (shapeBackLanes): the fudge's, and the
	// Gaussian's by a*, b*, c* (their records only for a shape).
	var shapeTot [10]float64
	ns := k.shapeSumCount()
	sh := r.shape
	oinc := w.orientScratch(M)
	var cube []float64 // interpolating rows: interpGradLanes' scratch
	if w.interp {
		cube = w.cube
	}
	clear(rs)
	sr0 := &k.src[0]
	// The K = 0 shortcut needs an E-B plane: with the polarization axis
	// along the beam ein = bin = 0 and cos2ψ = 1 (polarizationCoefLanes).
	kahn0 := k.kahn == 0 && sr0.bin != [3]float64{}
	pol := 2
	switch {
	case c.NoPolar:
		pol = 0
	case c.noGeometry():
		pol = 3
	case kahn0:
		pol = 1
	}
	// The rows of sub-pixels: sdet, as the forward rows have it.
	for subS := range os {
		sdet := k.sub*float64(spix*os+subS) + k.sub/2
		r.sdet[subS] = sdet
		repeat3To(&r.sdetRep[subS], [3]float64{sdet * k.sd[0], sdet * k.sd[1], sdet * k.sd[2]})
	}
	// Row sums: of u·|d − inc|², u/R, fdet·u/R per row of sub-pixels,
	// source and orientation (in rs), and the rest (lossTotals, per row of
	// sub-pixels; in memory: kept in registers they would be spilled
	// around every call of every chunk).
	tots := r.tot[:R]
	clear(tots)
	fr0, t0 := &r.subs[0].front, &r.subs[0].tl
	jc := (T - 1) * os * os // the capture fraction's sub-pixel
	frc, tc := &r.subs[jc].front, &r.subs[jc].tl
	// The capture fraction's adjoints: by the layer step, μ and the
	// detector normal, and ∂L/∂p at its sub-pixel, plain and times fdet.
	var capStep, capMu float64
	var capObs, capP, capFP [3]float64
	last := min(c.ROIFMax, c.FPixels-1)
	if spix < c.ROISMin || spix > c.ROISMax {
		last = -1
	}
chunks:
	for f0 := max(c.ROIFMin, 0); f0 <= last; {
		var fs []int
		var js []int
		if loss.Pixels != nil {
			fs, js, f0 = listChunk(c, spix, f0, mask, loss, &r.idx, &r.js, &w.listAt, n)
		} else {
			fs, f0 = chunkPixels(c, spix, f0, mask, loss, &r.idx, n)
			js = r.js[:len(fs)] // (a summed loss reads their number alone)
			if !loss.summed() {
				js = indices(spix*c.FPixels, fs, &r.js)
			}
		}
		var sc *lossScratch // (the Poisson loss on vector lanes)
		var cv chunkValues
		if loss.Kind == LossPoisson && k.tier != tierScalar {
			sc = r.scratch
			cv = loss.gather(js, sc)
		}
		np := len(fr0.f[:len(fs)]) // ≤ rowChunk, as the compiler sees
		pad := min(rowChunk, (np+maxLanes-1)/maxLanes*maxLanes)
		if k.shapeLanes {
			clear(sh.fu[:pad])
			for i := range sh.st[:ns-1] {
				clear(sh.st[i][:pad])
			}
		}
		// The terms, sub-pixel by sub-pixel in the forward rows' order:
		// the geometry and factors, then source by source the terms, added
		// to the sums the previous sub-pixel left.
		j := 0
		for layer := range T {
			for subS := range os {
				for subF := range os {
					sp := &r.subs[j]
					sp.front.setF(fs, os, subF, pad)
					if j == 0 {
						k.lossFront(&r.sdetRep[subS], &k.ll.odet[layer], &sp.front, &sp.tl, np, pol)
					} else {
						k.lossFrontSub(&r.sdetRep[subS], &k.ll.odet[layer], &sp.front, &sp.tl, np)
						sp.tl.carry(&r.subs[j-1].tl, pad)
					}
					for si := range k.src {
						at := j*S + si
						if k.dminLanes {
							k.termsGradDminRow(vector, si, oinc, &sp.tl, dsq[at*rowChunk:][:rowChunk], hkl[3*M*at*n:], n, np)
						} else if k.shapeLanes {
							k.termsGradShapeRow(vector, si, oinc, &sp.tl, sh, dsq[at*rowChunk:][:rowChunk], hkl[3*M*at*n:], n, np)
						} else {
							k.termsGradRow(vector, si, oinc, &sp.tl, cube, dsq[at*rowChunk:][:rowChunk], hkl[3*M*at*n:], n, np)
						}
					}
					j++
				}
			}
		}
		if J > 1 {
			t0.carry(&r.subs[J-1].tl, pad) // the pixels' sums, for the backward pass
		}
		if k.dminLanes && pol != 0 && !k.dminPolar(r, J, np) {
			k.perPixel(spix, fs, acc, w, ls, pixel)
			continue chunks
		}
		// The loss terms; the backward pass weighs every term by g.
		if c.Thick {
			for p := 0; p < np; p++ {
				r.capture[p] = k.captureFrac(T-1, frc.par[p])
				if r.capture[p] == 0 {
					// The reference takes a later sub-pixel's: the
					// per-pixel walk does.
					k.perPixel(spix, fs, acc, w, ls, pixel)
					continue chunks
				}
			}
			for p := 0; p < np; p++ {
				r.g[p] = k.scale * t0.s[p] * r.capture[p] * fr0.p[p] * fr0.omega[p] // Render's grouping: the same bits
			}
		} else {
			k.lossValue(fr0, t0, r.g[:], pad) // (past np: zeroed below)
		}
		ls0 := *ls
		loss.terms(js, r.g[:np], ls, sc, cv)
		if c.Thick {
			// The backward pass takes g·C for g: where that is not a
			// normal number (C tiny, g·C lost to underflow, or g NaN),
			// the per-pixel walk instead.
			for p := 0; p < np; p++ {
				if g := r.g[p]; g != 0 && !(math.Abs(g*r.capture[p]) >= 0x1p-1022) {
					*ls = ls0
					k.perPixel(spix, fs, acc, w, ls, pixel)
					continue chunks
				}
			}
			// ∂L/∂C = g·scale·S·P·ω, back through C (captureBack) to the
			// layer step, μ, the normal and the direction d; then g·C.
			for p := 0; p < np; p++ {
				g := r.g[p]
				if g == 0 {
					continue
				}
				cbar := g * k.scale * t0.s[p] * fr0.p[p] * fr0.omega[p]
				par := frc.par[p]
				step, mu, pbar := k.captureAdjoint(T-1, par, cbar)
				capStep += step
				capMu += mu
				d := [3]float64{tc.d[0][p], tc.d[1][p], tc.d[2][p]}
				fdet, invR := frc.fdet[p], frc.invR[p]
				for i := range 3 {
					capObs[i] += pbar * d[i]
					pb := pbar * (k.od[i] - par*d[i]) * invR // (dbar − (dbar·d)·d)/R, dbar = pbar·od
					capP[i] += pb
					capFP[i] += fdet * pb
				}
				r.g[p] = g * r.capture[p]
			}
		}
		// The backward pass, sub-pixel by sub-pixel: its sums in slots
		// partial sums (lossBackLanes), added here in a fixed order.
		for p := np; p < pad; p++ {
			r.g[p] = 0 // (lanes past the chunk's end)
		}
		for row := range R {
			x := rs[9*SM*row:][:9*SM]
			for j := row * os; j < (row+1)*os; j++ {
				sp := &r.subs[j]
				if j == 0 {
					k.lossBack(&sp.front, &sp.tl, r.g[:], dsq, hkl, n, np, pol, back)
					tots[row].add(back)
					if k.shapeLanes {
						k.shapeBack(&sp.front, sh, r.g[:], np, back)
						for i := range shapeTot[:ns] {
							shapeTot[i] += slotSum(back[slots*i:])
						}
					}
				} else {
					// ω and the polarization are the first sub-pixel's.
					copy(sp.front.p[:pad], fr0.p[:pad])
					copy(sp.front.omega[:pad], fr0.omega[:pad])
					k.lossBackSub(&sp.front, &sp.tl, r.g[:], dsq[j*S*rowChunk:], hkl[3*SM*j*n:], n, np, back)
					tots[row].addDirection(back)
				}
				for i := range x {
					x[i] += slotSum(back[slots*(lossBackSums+i):])
				}
			}
		}
	}
	// The row sums in their unit (termUnits).
	hu, nu, du := k.termUnits()
	for i := range rs {
		rs[i] *= hu
	}
	lamDot := 0.0
	for row := range R {
		t, sdet := &tots[row], r.sdet[row%os]
		layer := row / os
		odet := float64(layer) * k.thickStep
		// ∂L/∂p summed over the row of sub-pixels, plain and times fdet:
		// a·d, the polarization's d̄/R, then (below) the part through q.
		var pSum, fpSum [3]float64
		for j := 0; j < 3; j++ {
			pSum[j] = t.pa*sr0.inc[j] + t.pb*sr0.ein[j] + t.pc*sr0.bin[j] + t.ad[j]
			fpSum[j] = t.fpa*sr0.inc[j] + t.fpb*sr0.ein[j] + t.fpc*sr0.bin[j] + t.fad[j]
		}
		if c.Thick && row == jc/os {
			for j := range 3 {
				pSum[j] += capP[j]
				fpSum[j] += capFP[j]
			}
		}
		// The orientation adjoints Σ u_i·q_j, their contraction with the
		// orientations (Σ u·(h, k, l), for λ0), and the part of ∂L/∂p
		// through q.
		var p0 [3]float64
		for j := range p0 {
			p0[j] = k.pix0[j] + sdet*k.sd[j]
			if layer != 0 {
				p0[j] += odet * k.od[j]
			}
		}
		for si := range k.src {
			sr := &k.src[si]
			// q = (d⊥ + (d·inc − 1)·inc)/λ with d⊥ = (P₀⊥ + fdet·f⊥)/R (⊥:
			// the part across inc) and d·inc − 1 = −|d − inc|²/2: the part
			// along the beam from its own row sum, free of the
			// cancellation between d·inc and 1 at small angles.
			p0i, fi := dot(p0, sr.inc), dot(k.fd, sr.inc)
			var p0p, fp [3]float64
			for j := range p0p {
				p0p[j], fp[j] = p0[j]-p0i*sr.inc[j], k.fd[j]-fi*sr.inc[j]
			}
			for oi := range k.orient {
				o := &k.orient[oi]
				at0 := 9 * (SM*row + si*M + oi)
				x := rs[at0 : at0+9]
				at := acc[NParams+9*oi : NParams+9*oi+9]
				for i := 0; i < 3; i++ {
					sw, sv, sfv := x[i], x[3+i], x[6+i]
					for j := 0; j < 3; j++ {
						da := sr.invLambda * (sv*p0p[j] + sfv*fp[j] - 0.5*sw*sr.inc[j])
						at[3*i+j] += da
						lamDot += o[i][j] * da
					}
				}
				for j := 0; j < 3; j++ {
					pSum[j] += sr.invLambda * (o[0][j]*x[3] + o[1][j]*x[4] + o[2][j]*x[5])
					fpSum[j] += sr.invLambda * (o[0][j]*x[6] + o[1][j]*x[7] + o[2][j]*x[8])
				}
			}
		}
		for j := 0; j < 3; j++ {
			acc[PPix0+j] += pSum[j]
			acc[PFdet+j] += fpSum[j]
			acc[PSdet+j] += sdet * pSum[j]
		}
		// Σ (p̄·f)·fdet = f·Σ fdet·p̄, and the same for s.
		acc[PPixel] += (dot(fpSum, k.fd) + dot(pSum, k.sd)*sdet) * k.invPitch
		if layer != 0 {
			for j := range 3 {
				acc[PObs+j] += odet * pSum[j]
			}
			acc[PThickStep] += dot(pSum, k.od) * float64(layer)
		}
	}
	// The sums of the factors and of the pixels' sums: the first row of
	// sub-pixels' (lossBackLanes), N's and the default F's in their
	// units (termUnits).
	t := &tots[0]
	t.na, t.nb, t.nc, t.ddef = nu*t.na, nu*t.nb, nu*t.nc, du*t.ddef
	if !c.HasHKL && k.ibg == 0 {
		// Every term is F²·F_latt² with the one F: ∂S/∂F = 2S/F, and
		// Σ ∂L/∂S·S = scale·flu.
		t.ddef = 0 * t.ibg // 0, or NaN where a pixel's ∂L/∂S is not finite
		if k.defaultF != 0 {
			t.ddef = 2 * k.scale * t.flu / k.defaultF
		}
	}
	_ = acc[NParams-1]
	acc[PNa] += t.na
	acc[PNb] += t.nb
	acc[PNc] += t.nc
	acc[PDefaultF] += t.ddef
	acc[PLambda] -= lamDot * k.invLambda0 // ∂q/∂λ0 = −q/λ0
	acc[PIbg] += t.ibg
	acc[PFluence] += t.flu * k.perFluence
	acc[PKahn] += t.kahn
	if !c.PointPixel {
		acc[PPixel] += t.cd * 2 * k.closeD / k.pitch
		for j := 0; j < 3; j++ {
			acc[PPix0+j] += t.cd * k.od[j]
			acc[PObs+j] += t.cd * k.pix0[j]
		}
	}
	if k.shapeLanes {
		acc[PFudge] += shapeTot[0]
		for i := range 9 {
			acc[PAStar+i] += shapeTot[1+i]
		}
	}
	if c.Thick {
		acc[PThickStep] += capStep
		acc[PMu] += capMu
		for j := range 3 {
			acc[PObs+j] += capObs[j]
		}
	}
}

// perPixel adds the loss terms of row spix's pixels fs, in order, to
// ls and their gradients to acc through pixel (LossGradient's
// per-pixel walk): lossRow's way out for a chunk it does not take.
func (k *kernel) perPixel(spix int, fs []int, acc []float64, w *gradWork, ls *lossSum,
	pixel func(i, f, s int, m interpMode, u int, acc []float64, w *gradWork) float64) {
	// An interpolating row (w.interp) is before the switch-off point's:
	// interpOn interpolates every term there.
	m := interpNone
	if w.interp {
		m = interpOn
	}
	for j, f := range fs {
		ls.add(j, pixel(spix*k.c.FPixels+f, f, spix, m, 0, acc, w))
	}
}

// hklBudget bounds the ∂S/∂(h, k, l) a loss row keeps per chunk (3 per
// pixel, sub-pixel, source and orientation) in chunks of rowChunk: chunks
// shrink when there are more (lossChunk; down to one pixel with one
// sub-pixel; with several, lossRows leaves structures whose chunks would
// fall below minLossChunk to the per-pixel walk).
const hklBudget = 1 << 14

// hklCap and minVecChunk: with more sources × orientations × sub-pixels
// than hklBudget holds in chunks of minVecChunk pixels, the chunks keep
// that many pixels (or as many as hklCap values, 1 MB, within the second
// level cache, hold). Each chunk adds a fixed cost per source and
// orientation (the orientations' incident parts, nine row sums each):
// with 100 domains × 10 sources at 256² the gradient took 4.0 s in
// chunks of 5 pixels (one lane), 0.86 s in chunks of 40 (cap 2¹⁷,
// minVecChunk 64; 2¹⁸ or 128: within noise); 600 of them with 2×2
// sub-pixels 10 s on the per-pixel walk, 2.2 s.
const (
	hklCap      = 1 << 17
	minVecChunk = 64
)

// maxLossSubs and minLossChunk bound the structures with several
// sub-pixels (layers × Oversample²) that the loss rows take
// (lossRows): their records take ~46 kB per sub-pixel and gradient
// worker (23 arrays of rowChunk values; 12 MB at maxLossSubs), and with
// chunks of fewer pixels the per-pixel walk was faster
// (measured by an independent review: 1 and 2 pixels 1.3–1.8× slower than
// walkSimple, 3 about even, 6 1.5× faster).
const (
	maxLossSubs  = 256
	minLossChunk = 4
)

// lossRows reports whether LossGradient runs the loss rows (lossRow) for
// every row: for the structures lossRowStructure takes, without
// interpolation.
func (k *kernel) lossRows() bool {
	c := k.c
	return k.lossRowStructure() && !(c.Interpolate && c.HasHKL)
}

// lossRowStructure reports whether the loss rows take the structure's
// rows that do not interpolate (with interpolation, those after the
// reference's switch-off point, and with kernel.interpLanes those before
// its row, interpolating: kernel.reduce): the structures
// kernel.simple covers, the spot shapes' (shapeLanes) and -dmin's
// (dminLanes), always with one sub-pixel in one layer, with more within
// maxLossSubs and minLossChunk.
func (k *kernel) lossRowStructure() bool {
	c := k.c
	if !k.lossLanes() {
		return false
	}
	J := c.ThickSteps * c.Oversample * c.Oversample
	if J == 1 {
		return true
	}
	return J <= maxLossSubs && lossChunk(3*len(k.src)*len(k.orient)*J) >= minLossChunk
}

// dminPolar fits a loss-row chunk's polarization (np pixels) to -dmin.
// The general loops take a pixel's from the first sub-pixel and source,
// in their order, whose terms are within the limit, and leave it 0 where
// there is none; the loss rows take the first sub-pixel's and source's.
// Where that one is beyond the limit and every other is too, dminPolar
// sets the polarization and its derivatives' coefficients to 0; where
// another is not, it reports false, leaving the chunk to the per-pixel
// walk.
func (k *kernel) dminPolar(r *lossRecs, J, np int) bool {
	beyond := func(t *termLanes, si, p int) bool {
		sr := &k.src[si]
		qx, qy, qz := (t.d[0][p]-sr.inc[0])*sr.invLambda, (t.d[1][p]-sr.inc[1])*sr.invLambda, (t.d[2][p]-sr.inc[2])*sr.invLambda
		return dminSkipLanes(k.lr, qx, qy, qz) // (on one lane)
	}
	fr := &r.subs[0].front
	for p := 0; p < np; p++ {
		if !beyond(&r.subs[0].tl, 0, p) {
			continue
		}
		for j := 0; j < J; j++ {
			for si := range k.src {
				if !beyond(&r.subs[j].tl, si, p) {
					return false
				}
			}
		}
		fr.p[p], fr.dkahn[p], fr.alpha[p], fr.beta[p], fr.gamma[p], fr.dd[p] = 0, 0, 0, 0, 0, 0
	}
	return true
}

// termUnits are the units of the sums the loss rows' terms kernels
// leave per pixel, which their consumers multiply by: of ∂S/∂(h, k, l)
// and σ, of ∂S/∂N and of ∂S/∂(default F). Those kernels leave out
// the factor 2 of ∂(F²·F_latt²)/∂F_latt and of ∂S/∂F, and sincg's
// derivatives −π and π (sincgGradLanes), so that a term has eight
// multiplications fewer: −2π, 2π and 2. The spot shapes' (shapeLanes)
// keep all but the default F's 2.
func (k *kernel) termUnits() (hkl, n, def float64) {
	if k.shapeLanes {
		return 1, 1, 2
	}
	return -2 * math.Pi, 2 * math.Pi, 2
}

// lossChunk is the number of pixels in a loss row's chunks for per
// values of ∂S/∂(h, k, l) a pixel (3 per sub-pixel, source and
// orientation): rowChunk while hklBudget holds them; with more, at least
// minVecChunk while hklCap does, else as many as it does; whole vectors
// (maxLanes) where there are that many.
func lossChunk(per int) int {
	n := min(rowChunk, max(1, hklBudget/per))
	if n < minVecChunk {
		n = max(n, min(minVecChunk, hklCap/per))
	}
	if n >= maxLanes {
		n = n / maxLanes * maxLanes
	}
	return n
}

// lossRecs are one chunk's per-pixel records in lossRow, and its
// row's per row of sub-pixels.
type lossRecs struct {
	idx     [rowChunk]int      // the chunk's pixels where chunkPixels lists them (not for a run: columns)
	js      [rowChunk]int      // their indices in the loss's values (PixelLoss.indices)
	g       *[rowChunk]float64 // I, then ∂L/∂I
	capture *[rowChunk]float64 // the capture fraction (with a sensor thickness)
	subs    []lossSub          // per sub-pixel, (t·Oversample + subS)·Oversample + subF
	tot     []lossTotals       // per row of sub-pixels (t·Oversample + subS)
	sdet    []float64          // per subS
	sdetRep [][3]laneVal       // sdet times the slow axis, repeated
	shape   *shapeSums         // the spot shapes' per-pixel sums (kernel.shapeLanes)
	scratch *lossScratch       // the loss terms' (PixelLoss.terms)
}

// shapeSums are a loss-row chunk's per-pixel sums, over its sub-pixels,
// sources and orientations, of the spot shapes' ∂S/∂fudge and (the
// Gaussian's) ∂S/∂(a*, b*, c*), a*'s three first.
type shapeSums struct {
	fu [rowChunk]float64
	st [9][rowChunk]float64
}

// shapeSumCount is the number of shapeSums' sums the spot shape has: the
// fudge's, and the Gaussian's nine by a*, b*, c*.
func (k *kernel) shapeSumCount() int {
	if k.c.Shape == Gauss {
		return 10
	}
	return 1
}

// lossSub are a loss-row chunk's records of one sub-pixel: its front and
// terms. The first sub-pixel's hold the pixels' ω and polarization, and
// (after the terms) their sums S, ∂S/∂N and ∂S/∂F.
type lossSub struct {
	front lossFront
	tl    termLanes
}

// setF sets f of the pixels fs (f·os + subF, whole numbers: exact, as
// the forward rows have them) and repeats the last up to pad (the lanes
// past the chunk's end). (Not inlined: in lossRow's loop, with lossRow's
// many live values, its index lived on the stack.)
//
//go:noinline
func (fr *lossFront) setF(fs []int, os, subF, pad int) {
	g := fr.f[:]
	if n := len(fs); n > 0 && fs[n-1]-fs[0] == n-1 {
		// A run of pixels (fs rises).
		steps(g[:pad], n, float64(fs[0]*os+subF), float64(os))
	} else {
		for p, f := range fs {
			g[p] = float64(f*os + subF)
		}
	}
	for p := len(fs); p < pad; p++ {
		g[p] = g[len(fs)-1]
	}
}

// lossFront are a loss-row chunk's per-pixel values before the terms
// (lossFrontLanes): float64(f·Oversample + subF), fdet, 1/R, ω, and the
// polarization P with
// ∂P/∂K, α, β, γ (∂P/∂d = α·inc + β·ein + γ·bin; β and γ only from
// polarizationCoefLanes, not at K = 0 with an E-B plane) and (∂P/∂d)·d.
type lossFront struct {
	f, fdet, invR, omega             [rowChunk]float64
	p, dkahn, alpha, beta, gamma, dd [rowChunk]float64
	par                              [rowChunk]float64
	ra, rb, rc                       [rowChunk]float64 // the row sums' factors (lossRowSumsLanes)
}

// lossTotals are a loss row's sums (∂L/∂N and ∂L/∂F in the units of
// termUnits until lossRow takes them): of ∂L/∂N, ∂L/∂F, ∂L/∂(water seed),
// Σ g·P·ω·S (∂L/∂fluence over perFluence), ∂L/∂K and ∂L/∂(close
// distance), of a·d and
// fdet·a·d (a: the pixel's coefficient of d in ∂L/∂p), and of the
// polarization's ∂L/∂p/R along inc, ein, bin (p) and times fdet (fp).
type lossTotals struct {
	na, nb, nc, ddef, ibg, flu, kahn, cd float64
	ad, fad                              [3]float64
	pa, pb, pc, fpa, fpb, fpc            float64
}

// lossBackSums is the number of lossTotals' sums, lossBackAd the index of
// ad's first (then ad's others and fad's, lossBackSubLanes' six),
// lossBackIbg and lossBackFlu those of ibg and flu (the ones the crystal's
// gradient keeps).
const (
	lossBackSums = 20
	lossBackAd   = 8
	lossBackIbg  = 4
	lossBackFlu  = 5
)

// addDirection adds to t the sums of a·d and fdet·a·d whose slots
// lossBackSubLanes stored in b.
func (t *lossTotals) addDirection(b []float64) {
	for i, v := range [6]*float64{&t.ad[0], &t.ad[1], &t.ad[2], &t.fad[0], &t.fad[1], &t.fad[2]} {
		*v += slotSum(b[slots*(lossBackAd+i):])
	}
}

// add adds to t the sums whose slots lossBackLanes stored in b, in
// lossTotals' order.
func (t *lossTotals) add(b []float64) {
	for i, v := range [lossBackSums]*float64{&t.na, &t.nb, &t.nc, &t.ddef, &t.ibg, &t.flu, &t.kahn, &t.cd,
		&t.ad[0], &t.ad[1], &t.ad[2], &t.fad[0], &t.fad[1], &t.fad[2], &t.pa, &t.pb, &t.pc, &t.fpa, &t.fpb, &t.fpc} {
		*v += slotSum(b[slots*i:])
	}
}

// terms returns w's termLanes, allocating them on first use.
func (w *gradWork) terms() *termLanes {
	return &w.recs(1, 1).subs[0].tl
}

// carry copies to t the sums of the first n pixels that the terms of a
// pixel's sub-pixels add to, one after another: S and its derivatives by
// Na, Nb, Nc and the default F, from u (σ is each sub-pixel's own).
func (t *termLanes) carry(u *termLanes, n int) {
	copy(t.s[:n], u.s[:n])
	copy(t.na[:n], u.na[:n])
	copy(t.nb[:n], u.nb[:n])
	copy(t.nc[:n], u.nc[:n])
	copy(t.def[:n], u.def[:n])
}

// orientScratch returns w's scratch space for termsGradLanes' (o_i·inc)/λ
// of m orientations.
func (w *gradWork) orientScratch(m int) [][3]laneVal {
	if len(w.oinc) < m {
		w.oinc = alignedMake[[3]laneVal](m)
	}
	return w.oinc[:m]
}

// rowScratch makes room in w for lossRow's scratch, for J sub-pixels per
// pixel, chunks of n pixels, R rows of sub-pixels, S sources and SM
// sources × orientations: ∂S/∂(h, k, l) (hkl), the row sums, |d − inc|²
// (dsq), the backward pass's partial sums, and where the rows need them
// the spot shapes' sums (in r) and the interpolation's scratch. What the
// lanes read and write starts at a 64-byte boundary (align.go).
func (w *gradWork) rowScratch(k *kernel, r *lossRecs, J, n, R, S, SM int) {
	if len(w.hkl) < J*n*3*SM+rowChunk {
		w.hkl = alignedMake[float64](J*n*3*SM + rowChunk) // (the backward pass reads rowChunk from each start)
	}
	if len(w.rowSums) < R*9*SM {
		w.rowSums = make([]float64, R*9*SM)
	}
	if len(w.dsq) < J*rowChunk*S {
		w.dsq = alignedMake[float64](J * rowChunk * S)
	}
	if len(w.back) < slots*(lossBackSums+9*SM) {
		w.back = alignedMake[float64](slots * (lossBackSums + 9*SM))
	}
	if k.shapeLanes && r.shape == nil {
		r.shape = &alignedMake[shapeSums](1)[0]
	}
	if w.interp && w.cube == nil {
		w.cube = alignedMake[float64](2 * cubeLen)
	}
}

// recs returns w's loss-row records, with room for os² sub-pixels in each
// of layers sensor layers.
func (w *gradWork) recs(os, layers int) *lossRecs {
	if w.lr == nil {
		w.lr = &lossRecs{g: &alignedMake[[rowChunk]float64](1)[0], capture: &alignedMake[[rowChunk]float64](1)[0],
			scratch: &alignedMake[lossScratch](1)[0]}
	}
	r := w.lr
	if len(r.sdet) < os {
		r.sdet, r.sdetRep = make([]float64, os), alignedMake[[3]laneVal](os)
	}
	if len(r.tot) < layers*os {
		r.tot = make([]lossTotals, layers*os)
	}
	if len(r.subs) < layers*os*os {
		r.subs = alignedMake[lossSub](layers * os * os)
	}
	return r
}
