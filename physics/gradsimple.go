package physics

import "math"

// sincgGrad3 returns sincg(x, n) for x = h, k, l (whole 1 < n ≤
// maxChebyshevN, |x| < 2⁵¹), their derivatives by x and by n (n taken as
// continuous), from c = cos πx and s = sin πx:
//
//	sincg = U_{n−1}(c),  ∂/∂x = π·(n·T_n(c) − c·U_{n−1}(c))/s,  ∂/∂n = πd·T_n(c)/s,
//
// (d = x − m, m the nearest integer: the derivative by n of Sincg's
// continuation to non-whole n),
// with T_n = c·U_{n−1} − U_{n−2} and |s| = √((1 − c)(1 + c)) for the reduced
// cos πd ≥ 0: 1 − cos πd is exact for cos πd ≥ ½, so this is within a few
// 1e-14 of the series where it is used, and a square root is cheaper.
// When an index is within closedFormMin of an integer, sincgGrad1 takes
// over for all three (in about one call in eleven); otherwise the three
// are evaluated side by side so that their chains of dependent operations
// overlap, without calls, so that nothing is spilled around them.
func sincgGrad3(h, kk, l float64, n int) (sa, sb, sc, ha, hb, hc, na, nb, nc float64) {
	th, tk, tl := h+roundMagic, kk+roundMagic, l+roundMagic
	dh, dk, dl := h-(th-roundMagic), kk-(tk-roundMagic), l-(tl-roundMagic)
	if dh*dh < closedFormMin*closedFormMin || dk*dk < closedFormMin*closedFormMin || dl*dl < closedFormMin*closedFormMin {
		// (d² as cosPiReduced forms it; closedFormMin² is exact.)
		sa, ha, na = sincgGrad1(h, n)
		sb, hb, nb = sincgGrad1(kk, n)
		sc, hc, nc = sincgGrad1(l, n)
		return
	}
	fh, fk, fl := math.Float64bits(th)<<63, math.Float64bits(tk)<<63, math.Float64bits(tl)<<63
	crh, crk, crl := cosPiReduced(dh), cosPiReduced(dk), cosPiReduced(dl) // in [0, 1]
	// π/s before the recurrence: what it leaves live then fits in
	// registers.
	// s: √((1 − cr)(1 + cr)) ≥ 0 with the sign of d, flipped for odd m.
	const sign = 1 << 63
	rh := math.Pi / math.Float64frombits(math.Float64bits(math.Sqrt((1-crh)*(1+crh)))|(math.Float64bits(dh)^fh)&sign)
	rk := math.Pi / math.Float64frombits(math.Float64bits(math.Sqrt((1-crk)*(1+crk)))|(math.Float64bits(dk)^fk)&sign)
	rl := math.Pi / math.Float64frombits(math.Float64bits(math.Sqrt((1-crl)*(1+crl)))|(math.Float64bits(dl)^fl)&sign)
	ch2 := 2 * math.Float64frombits(math.Float64bits(crh)^fh)
	ck2 := 2 * math.Float64frombits(math.Float64bits(crk)^fk)
	cl2 := 2 * math.Float64frombits(math.Float64bits(crl)^fl)
	// U_{j+1} = 2c·U_j − U_{j−1} two steps at a time, the two registers
	// taking turns (no moves): before each pair u0 = U_{j−2}, u1 = U_{j−1}.
	uh0, uh1 := 1.0, ch2
	uk0, uk1 := 1.0, ck2
	ul0, ul1 := 1.0, cl2
	j := 2
	for ; j+1 < n; j += 2 {
		uh0, uk0, ul0 = ch2*uh1-uh0, ck2*uk1-uk0, cl2*ul1-ul0
		uh1, uk1, ul1 = ch2*uh0-uh1, ck2*uk0-uk1, cl2*ul0-ul1
	}
	if j < n {
		uh0, uh1 = uh1, ch2*uh1-uh0
		uk0, uk1 = uk1, ck2*uk1-uk0
		ul0, ul1 = ul1, cl2*ul1-ul0
	}
	fn := float64(n)
	cuh, cuk, cul := 0.5*ch2*uh1, 0.5*ck2*uk1, 0.5*cl2*ul1
	tnh, tnk, tnl := cuh-uh0, cuk-uk0, cul-ul0 // T_n
	return uh1, uk1, ul1, (fn*tnh - cuh) * rh, (fn*tnk - cuk) * rk, (fn*tnl - cul) * rl,
		dh * tnh * rh, dk * tnk * rk, dl * tnl * rl
}

// sincgGrad1 is sincgGrad3 for one index x, with sincgNearPeak within
// closedFormMin of an integer.
func sincgGrad1(x float64, n int) (u1, dx, dn float64) {
	t := x + roundMagic
	d := x - (t - roundMagic)
	flip := math.Float64bits(t) << 63 // the parity of the integer
	cr := cosPiReduced(d)             // in [0, 1]
	c := math.Float64frombits(math.Float64bits(cr) ^ flip)
	u0, u1 := chebyshevU2(2*c, n)
	if math.Abs(d) < closedFormMin {
		dx, dn = sincgNearPeak(x, d, c, flip, u0, u1, n)
		return u1, dx, dn
	}
	r := math.Pi / math.Float64frombits(math.Float64bits(math.Copysign(math.Sqrt((1-cr)*(1+cr)), d))^flip)
	cu := c * u1
	tn := cu - u0 // T_n
	return u1, (float64(n)*tn - cu) * r, d * tn * r
}

// chebyshevU2 returns U_{n−2}(c) and U_{n−1}(c) (n ≥ 2) from c2 = 2c by
// U_{j+1} = 2c·U_j − U_{j−1}.
func chebyshevU2(c2 float64, n int) (u0, u1 float64) {
	u0, u1 = 1, c2
	for j := 2; j < n; j++ {
		u0, u1 = u1, c2*u1-u0
	}
	return u0, u1
}

// closedFormMin is the distance from the nearest integer below which
// sincgGrad3 leaves the closed form of ∂sincg/∂x: its numerator
// n·T_n − c·U_{n−1} vanishes like d² at the peaks, and its relative
// error grows like 1e-17/d² (measured against 200-bit arithmetic for
// whole 2 ≤ n ≤ 32: ≤ 2.5e-13 from d = 0.01 on).
const closedFormMin = 1.0 / 64

// sincgNearPeak returns the derivatives of sincg(x, n) = U_{n−1}(c) by x
// and by n near an integer, without cancellation, given the offset d of x
// from its nearest integer, c = cos πx, the sign bit flip of that integer's
// parity, U_{n−2}(c) and U_{n−1}(c): ∂/∂x = −π·s·U′_{n−1}(c), with s from
// its series and U′ from U′_{j+1} = 2U_j + 2c·U′_j − U′_{j−1}. At integer
// x the derivative by n is the sign of the peak (1 at x = 0), the limit of
// πd·T_n/s.
func sincgNearPeak(x, d, c float64, flip uint64, um2, um1 float64, n int) (dx, dn float64) {
	s := math.Float64frombits(math.Float64bits(sinPiReduced(d)) ^ flip)
	tn := c*um1 - um2 // T_n
	c2 := 2 * c
	u0, u1, p0, p1 := 1.0, c2, 0.0, 2.0 // U_0, U_1, U′_0, U′_1
	for j := 2; j < n; j++ {
		u0, u1, p0, p1 = u1, c2*u1-u0, p1, 2*u1+c2*p1-p0
	}
	dx = -math.Pi * s * p1
	if d != 0 {
		dn = math.Pi * d * tn / s
	} else {
		dn = math.Copysign(1, u1)
	}
	return
}

// polarizationCoef is Polarization for source sr and diffracted
// direction d with its derivatives: by the Kahn factor, and by d as the
// coefficients of ∂P/∂d = α·inc + β·ein + γ·bin (the source's fixed
// directions), and (∂P/∂d)·d. cos2ψ is formed also at K = 0, where
// Polarization skips it: the derivative by K needs it. P has
// Polarization's bits.
func (k *kernel) polarizationCoef(sr *source, dx, dy, dz float64) (p, dkahn, alpha, beta, gamma, dd float64) {
	c2 := sr.inc[0]*dx + sr.inc[1]*dy + sr.inc[2]*dz
	c2sq := c2 * c2
	s2sq := 1 - c2sq
	cos2psi := 1.0
	var de, db float64
	e := dx*sr.ein[0] + dy*sr.ein[1] + dz*sr.ein[2]
	b := dx*sr.bin[0] + dy*sr.bin[1] + dz*sr.bin[2]
	if den := e*e + b*b; den > 0 {
		inv := 1 / den
		cos2psi = (e*e - b*b) * inv
		if k.kahn != 0 {
			de, db = 4*e*b*b*inv*inv, -4*b*e*e*inv*inv
		}
	}
	p = 0.5 * (1 + c2sq - k.kahn*cos2psi*s2sq)
	dkahn = -0.5 * cos2psi * s2sq
	dcos := -0.5 * k.kahn * s2sq
	alpha, beta, gamma = c2*(1+k.kahn*cos2psi), dcos*de, dcos*db
	return p, dkahn, alpha, beta, gamma, alpha*c2 + beta*e + gamma*b
}

// termsGrad walks the terms of one source for the sub-pixels with
// scattering vectors q (one per sub-pixel, and one sum in ts each) for the
// structures pixelSimple covers: it adds their sum S, its derivatives by
// Na, Nb, Nc and (with a structure-factor table or a water background) by
// the default F, and σ to ts[p], and writes ∂S/∂(h, k, l) of each
// orientation to hkl[p·stride + 3·orientation:] (the derivatives by its a,
// b, c vectors are these times q). σ is Σ ∂S/∂(h, k, l)·(h, k, l)_d over
// the orientations, the indices of the diffracted direction,
// (o_i·d)/λ = h_i + (o_i·inc)/λ: the q-path's ∂S/∂d·d. ci is the
// source's k.oincBySource (walkSimple does not use σ; forming it there
// costs less than a test on the hot path). Each sub-pixel's terms are
// added in Render's order; the sub-pixels are taken together, orientation
// by orientation, so that what the orientation loop loads and keeps is
// shared.
func (k *kernel) termsGrad(ci [][3]float64, q [][3]float64, hkl []float64, stride int, ts []termSums) {
	c := k.c
	n := k.nn[0]
	ts = ts[:len(q)]
	for oi := range k.orient {
		o := &k.orient[oi]
		e := ci[oi]
		off := 3 * oi // hkl[off:] for sub-pixel p
		for p := range q {
			qx, qy, qz := q[p][0], q[p][1], q[p][2]
			h := o[0][0]*qx + o[0][1]*qy + o[0][2]*qz
			kk := o[1][0]*qx + o[1][1]*qy + o[1][2]*qz
			l := o[2][0]*qx + o[2][1]*qy + o[2][2]*qz
			var sa, sb, sc, ha, hb, hc, nda, ndb, ndc float64
			if k.hklSmall || (math.Abs(h) < 1<<51 && math.Abs(kk) < 1<<51 && math.Abs(l) < 1<<51) {
				sa, sb, sc, ha, hb, hc, nda, ndb, ndc = sincgGrad3(h, kk, l, n)
			} else {
				// Beyond the Chebyshev form's range (no physical input).
				sa, ha, nda = sincgGrad(h, k.na)
				sb, hb, ndb = sincgGrad(kk, k.nb)
				sc, hc, ndc = sincgGrad(l, k.nc)
			}
			fl := sa * sb * sc
			b := hkl[off : off+3]
			off += stride
			if fl == 0 && !c.Water {
				b[0], b[1], b[2] = 0, 0, 0
				continue
			}
			fc, fd := k.defaultF, 1.0
			if c.HasHKL {
				fc, fd = k.cellFGrad(h, kk, l)
			}
			t := &ts[p]
			ffl := fc * fc * fl
			t.s += ffl * fl // Render's (F·F·F_latt)·F_latt
			if k.perDef {
				t.def += 2 * fc * fl * fl * fd
			}
			// ∂(F²·F_latt²)/∂(h, k, l) and /∂N: 2F²·F_latt times the other
			// two lattice factors times sincg's derivatives.
			tfl := 2 * ffl
			xa, xb, xc := tfl*(sb*sc), tfl*(sa*sc), tfl*(sa*sb)
			hbar, kbar, lbar := xa*ha, xb*hb, xc*hc
			b[0], b[1], b[2] = hbar, kbar, lbar
			t.sig += hbar*(h+e[0]) + kbar*(kk+e[1]) + lbar*(l+e[2])
			t.na, t.nb, t.nc = t.na+xa*nda, t.nb+xb*ndb, t.nc+xc*ndc
		}
	}
}

// termSums are one pixel's sums over its terms (termsGrad): S, its
// derivatives by Na, Nb, Nc and the default F, and σ.
type termSums struct {
	s, na, nb, nc, def, sig float64
}

// orientIncidence sets what termsGrad reads besides the terms:
// k.oincBySource, per source and orientation (o_i·inc)/λ for its a, b, c
// vectors o_i, and k.perDef.
func (k *kernel) orientIncidence() {
	k.perDef = k.c.HasHKL || k.ibg != 0
	k.oincBySource = make([][][3]float64, len(k.src))
	for si := range k.src {
		sr := &k.src[si]
		ci := make([][3]float64, len(k.orient))
		for oi := range k.orient {
			for i := 0; i < 3; i++ {
				ci[oi][i] = dot(k.orient[oi][i], sr.inc) * sr.invLambda
			}
		}
		k.oincBySource[si] = ci
	}
}

// addOrientation adds w·(∂S/∂h, ∂S/∂k, ∂S/∂l)⊗q, the derivatives by
// every orientation's a, b, c vectors (9 per orientation in ob), from the
// derivatives by h, k, l that termsGrad wrote to hkl.
func addOrientation(ob, hkl []float64, qx, qy, qz, w float64) {
	for oi := 0; oi < len(hkl)/3; oi++ {
		b, v := ob[9*oi:9*oi+9], hkl[3*oi:3*oi+3]
		hbar, kbar, lbar := w*v[0], w*v[1], w*v[2]
		b[0], b[1], b[2] = b[0]+hbar*qx, b[1]+hbar*qy, b[2]+hbar*qz
		b[3], b[4], b[5] = b[3]+kbar*qx, b[4]+kbar*qy, b[5]+kbar*qz
		b[6], b[7], b[8] = b[6]+lbar*qx, b[7]+lbar*qy, b[8]+lbar*qz
	}
}

// walkSimple is walk for the structures pixelSimple covers (no
// -oversample_* running-sum rules, flat detector, the parallelepiped with
// one whole N ≤ maxChebyshevN, nearest reflections, no resolution cut):
// the same bookkeeping in w, with the lattice factors and their
// derivatives by sincgGrad3 and the per-term work on scalars.
func (k *kernel) walkSimple(fpix, spix int, tmp []float64, w *gradWork) float64 {
	c := k.c
	var tss [1]termSums
	ts := &tss[0]
	*ts = termSums{s: k.ibg}
	var lam float64
	M := len(k.orient)
	hkl := w.hkl[:3*M]
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
					k.termsGrad(k.oincBySource[si], [][3]float64{{qx, qy, qz}}, hkl, 0, tss[:])
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
	tmp[PNa] += ts.na
	tmp[PNb] += ts.nb
	tmp[PNc] += ts.nc
	if !c.HasHKL && k.ibg == 0 {
		// Every term is F²·F_latt² with the one F: ∂S/∂F = 2S/F.
		ts.def = 0
		if k.defaultF != 0 {
			ts.def = 2 * ts.s / k.defaultF
		}
	}
	tmp[PDefaultF] += ts.def
	tmp[PLambda] += lam
	return ts.s
}

// lossRowSingle is the fused loss-and-gradient walk of the rendered
// pixels of row spix for the structures pixelSimple covers with one
// sub-pixel and one sensor layer without thickness. It adds g·∂I/∂P to
// acc (orientation adjoints after NParams; g: the pixel's loss
// derivative) and each pixel's loss term to the compensated sum (sum,
// comp).
//
// The pixels are taken in chunks (chunkPixels), each in three passes:
// the terms (termsGrad: S, ∂S/∂N, ∂S/∂(h, k, l) per source and
// orientation, and σ, their contraction with d), the loss terms, then
// the backward pass without calls, so that its running sums stay in
// registers. The backward pass sums over the row only what the adjoints
// are linear in: along a row the lab position is p = P₀ + fdet·f, so
//
//	Σ u_i·q_j = λ⁻¹·(Σ u_i/R·P₀⊥_j + Σ fdet·u_i/R·f⊥_j − ½·Σ u_i·|d − inc|²·inc_j)
//
// (⊥: the part across inc; the part along it from |d − inc|², which
// does not cancel at small angles) gives the orientation adjoints
// (u = ∂L/∂(h, k, l)), and the part of
// ∂L/∂p that comes through q, (I − d⊗d)·λ⁻¹·Σ_i u_i·o_i/R, is
// λ⁻¹·Σ_i o_i·Σ u_i/R less a multiple of d per pixel (σ). Per pixel
// that is three row sums of 3-vectors per source and orientation instead
// of two 3×3 products.
func (k *kernel) lossRowSingle(spix int, mask []float64, loss *PixelLoss, acc []float64, w *gradWork, sum, comp *float64) {
	c := k.c
	r := w.recs()
	S, M := len(k.src), len(k.orient)
	SM := S * M
	n := min(rowChunk, max(1, hklBudget/(3*SM)))
	if len(w.hkl) < n*3*SM {
		w.hkl = make([]float64, n*3*SM)
	}
	if len(w.rowSums) < 9*SM {
		w.rowSums = make([]float64, 9*SM)
	}
	if len(w.dsq) < rowChunk*S {
		w.dsq = make([]float64, rowChunk*S)
	}
	hkl, rs, dsq := w.hkl, w.rowSums[:9*SM], w.dsq
	clear(rs)
	sr0 := &k.src[0]
	// The K = 0 shortcut needs an E-B plane: with the polarization axis
	// along the beam ein = bin = 0 and cos2ψ = 1 (polarizationCoef).
	kahn0 := k.kahn == 0 && sr0.bin != [3]float64{}
	sdet := k.sub*float64(spix) + k.sub/2
	pitch2 := k.pitch * k.pitch
	// Row sums: of u·|d − inc|², u/R, fdet·u/R per source and orientation
	// (in rs), and the rest (lossTotals; in memory: kept in registers they
	// would be spilled around every call of every chunk).
	t := &r.tot
	*t = lossTotals{}
	last := min(c.ROIFMax, c.FPixels-1)
	if spix < c.ROISMin || spix > c.ROISMax {
		last = -1
	}
	for f0 := max(c.ROIFMin, 0); f0 <= last; {
		var fs []int
		fs, f0 = chunkPixels(c, spix, f0, mask, loss, &r.idx, n)
		k.chunkGeometry(spix, fs, &r.geo)
		np := len(r.geo[:len(fs)]) // ≤ rowChunk, as the compiler sees
		// The terms: the factors, then source by source the scattering
		// vectors and the terms.
		for p := 0; p < np; p++ {
			invR, dx, dy, dz := r.geo[p][0], r.geo[p][1], r.geo[p][2], r.geo[p][3]
			fc := &r.fac[p]
			fc[0] = k.omega(invR)
			switch {
			case c.NoPolar:
				fc[1], fc[2], fc[3], fc[4] = 1, 0, 0, 0
			case kahn0:
				// polarizationCoef at K = 0, where ∂P/∂K = −½·cos2ψ·sin²2θ
				// = −½·(e² − b²) = ½·(1 − c2²) − e² (d unit; inc, ein, bin
				// orthonormal, so e² + b² = 1 − c2²).
				c2 := sr0.inc[0]*dx + sr0.inc[1]*dy + sr0.inc[2]*dz
				e := dx*sr0.ein[0] + dy*sr0.ein[1] + dz*sr0.ein[2]
				c2sq := c2 * c2
				fc[1], fc[2], fc[3], fc[4] = 0.5*(1+c2sq), 0.5*(1-c2sq)-e*e, c2, c2sq
			default:
				var be, ga float64
				fc[1], fc[2], fc[3], be, ga, fc[4] = k.polarizationCoef(sr0, dx, dy, dz)
				r.pol[p] = [2]float64{be, ga}
			}
			r.ts[p] = termSums{s: k.ibg}
		}
		for si, ci := range k.oincBySource {
			sr := &k.src[si]
			ds := dsq[si*rowChunk:][:rowChunk]
			for p := 0; p < np; p++ {
				x, y, z := r.geo[p][1]-sr.inc[0], r.geo[p][2]-sr.inc[1], r.geo[p][3]-sr.inc[2]
				r.q[p] = [3]float64{x * sr.invLambda, y * sr.invLambda, z * sr.invLambda}
				ds[p] = x*x + y*y + z*z // |d − inc|²
			}
			k.termsGrad(ci, r.q[:np], hkl[3*M*si:], 3*SM, r.ts[:])
		}
		// The loss terms; the backward pass takes the pixels with g ≠ 0.
		for p := 0; p < np; p++ {
			fc := &r.fac[p]
			r.g[p] = k.scale * r.ts[p].s * fc[1] * fc[0] // Render's grouping: the same bits
			r.fdet[p] = k.sub*float64(fs[p]) + k.sub/2
		}
		loss.terms(spix*c.FPixels, fs, r.g[:np], sum, comp)
		// The pixels with g ≠ 0, and their ∂L/∂S.
		nl := 0
		for p := 0; p < np; p++ {
			if r.g[p] != 0 {
				r.live[nl] = p
				r.sb[p] = r.g[p] * k.scale * r.fac[p][1] * r.fac[p][0]
				nl++
			}
		}
		live := r.live[:nl]
		// ∂L/∂(h, k, l) into the orientation row sums, source and
		// orientation at a time (the sums in registers).
		for j := 0; j < SM; j++ {
			ds := dsq[j/M*rowChunk:][:rowChunk]
			var w0, w1, w2, v0, v1, v2, fv0, fv1, fv2 float64
			for _, p := range live {
				p &= rowChunk - 1 // (p < rowChunk: no bounds checks)
				sb, invR, fdet, ds := r.sb[p], r.geo[p][0], r.fdet[p], ds[p]
				h := hkl[3*(p*SM+j) : 3*(p*SM+j)+3]
				x0, x1, x2 := sb*h[0], sb*h[1], sb*h[2]
				w0, w1, w2 = w0+ds*x0, w1+ds*x1, w2+ds*x2
				x0, x1, x2 = x0*invR, x1*invR, x2*invR
				v0, v1, v2 = v0+x0, v1+x1, v2+x2
				fv0, fv1, fv2 = fv0+fdet*x0, fv1+fdet*x1, fv2+fdet*x2
			}
			x := rs[9*j : 9*j+9]
			x[0], x[1], x[2] = x[0]+w0, x[1]+w1, x[2]+w2
			x[3], x[4], x[5] = x[3]+v0, x[4]+v1, x[5]+v2
			x[6], x[7], x[8] = x[6]+fv0, x[7]+fv1, x[8]+fv2
		}
		// The rest of the backward pass, in three loops whose running
		// sums (per chunk) fit in registers. The factors' adjoints:
		// ∂L/∂P = g·scale·S·ω, ∂L/∂ω = g·scale·S·P.
		var cna, cnb, cnc, cdef, cibg, cflu, ckahn, cpa, cfpa float64
		for _, p := range live {
			p &= rowChunk - 1 // (p < rowChunk: no bounds checks)
			g, sb, fc, ts := r.g[p], r.sb[p], &r.fac[p], &r.ts[p]
			cna, cnb, cnc = cna+sb*ts.na, cnb+sb*ts.nb, cnc+sb*ts.nc
			if k.perDef {
				cdef += sb * ts.def
			}
			cibg += sb
			cflu += g * fc[1] * fc[0] * ts.s
			if !c.NoPolar {
				pbar := g * k.scale * ts.s * fc[0]
				ckahn += pbar * fc[2]
				x := pbar * r.geo[p][0] * fc[3]
				cpa, cfpa = cpa+x, cfpa+r.fdet[p]*x
			}
		}
		t.na, t.nb, t.nc, t.ddef, t.ibg, t.flu, t.kahn, t.pa, t.fpa = t.na+cna, t.nb+cnb, t.nc+cnc, t.ddef+cdef, t.ibg+cibg, t.flu+cflu, t.kahn+ckahn, t.pa+cpa, t.fpa+cfpa
		if !c.NoPolar && !kahn0 { // (β, γ from polarizationCoef)
			var cpb, cfpb, cpc, cfpc float64
			for _, p := range live {
				p &= rowChunk - 1 // (p < rowChunk: no bounds checks)
				pr := r.g[p] * k.scale * r.ts[p].s * r.fac[p][0] * r.geo[p][0]
				y, z := pr*r.pol[p][0], pr*r.pol[p][1]
				cpb, cfpb = cpb+y, cfpb+r.fdet[p]*y
				cpc, cfpc = cpc+z, cfpc+r.fdet[p]*z
			}
			t.pb, t.fpb, t.pc, t.fpc = t.pb+cpb, t.fpb+cfpb, t.pc+cpc, t.fpc+cfpc
		}
		// Back through d = p/R, R = |p|: ∂L/∂p = d̄/R + a·d with
		// a = r̄ − (d̄·d)/R; d̄/R is summed apart (above and in the row
		// sums).
		var ccd, cadX, cadY, cadZ, cfadX, cfadY, cfadZ float64
		for _, p := range live {
			p &= rowChunk - 1 // (p < rowChunk: no bounds checks)
			fc := &r.fac[p]
			invR, dx, dy, dz := r.geo[p][0], r.geo[p][1], r.geo[p][2], r.geo[p][3]
			gs := r.g[p] * k.scale * r.ts[p].s
			ddot := r.sb[p] * r.ts[p].sig // d·∂L/∂d
			if !c.NoPolar {
				ddot += gs * fc[0] * fc[4]
			}
			wbar := gs * fc[1]
			inv3 := invR * invR * invR
			var rbar float64
			if c.PointPixel {
				rbar = -2 * wbar * inv3
			} else {
				cd := wbar * pitch2 * inv3 // ∂L/∂(close distance)
				ccd += cd
				rbar = -3 * cd * k.closeD * invR
			}
			a := rbar - ddot*invR
			cadX, cadY, cadZ = cadX+a*dx, cadY+a*dy, cadZ+a*dz
			fa := r.fdet[p] * a
			cfadX, cfadY, cfadZ = cfadX+fa*dx, cfadY+fa*dy, cfadZ+fa*dz
		}
		t.cd, t.ad[0], t.ad[1], t.ad[2], t.fad[0], t.fad[1], t.fad[2] = t.cd+ccd, t.ad[0]+cadX, t.ad[1]+cadY, t.ad[2]+cadZ, t.fad[0]+cfadX, t.fad[1]+cfadY, t.fad[2]+cfadZ
	}
	// ∂L/∂p summed over the row, plain and times fdet: a·d, the
	// polarization's d̄/R, then (below) the part through q.
	var pSum, fpSum [3]float64
	for j := 0; j < 3; j++ {
		pSum[j] = t.pa*sr0.inc[j] + t.pb*sr0.ein[j] + t.pc*sr0.bin[j] + t.ad[j]
		fpSum[j] = t.fpa*sr0.inc[j] + t.fpb*sr0.ein[j] + t.fpc*sr0.bin[j] + t.fad[j]
	}
	// The orientation adjoints Σ u_i·q_j, their contraction with the
	// orientations (Σ u·(h, k, l), for λ0), and the part of ∂L/∂p through q.
	var p0 [3]float64
	for j := range p0 {
		p0[j] = k.pix0[j] + sdet*k.sd[j]
	}
	lamDot := 0.0
	for si := range k.src {
		sr := &k.src[si]
		// q = (d⊥ + (d·inc − 1)·inc)/λ with d⊥ = (P₀⊥ + fdet·f⊥)/R (⊥: the
		// part across inc) and d·inc − 1 = −|d − inc|²/2: the part along
		// the beam from its own row sum, free of the cancellation between
		// d·inc and 1 at small angles.
		p0i, fi := dot(p0, sr.inc), dot(k.fd, sr.inc)
		var p0p, fp [3]float64
		for j := range p0p {
			p0p[j], fp[j] = p0[j]-p0i*sr.inc[j], k.fd[j]-fi*sr.inc[j]
		}
		for oi := range k.orient {
			o := &k.orient[oi]
			x := rs[9*(si*M+oi) : 9*(si*M+oi)+9]
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
	for j := 0; j < 3; j++ {
		acc[PPix0+j] += pSum[j]
		acc[PFdet+j] += fpSum[j]
		acc[PSdet+j] += sdet * pSum[j]
	}
	// Σ (p̄·f)·fdet = f·Σ fdet·p̄, and the same for s.
	acc[PPixel] += (dot(fpSum, k.fd) + dot(pSum, k.sd)*sdet) * k.invPitch
	if !c.PointPixel {
		acc[PPixel] += t.cd * 2 * k.closeD / k.pitch
		for j := 0; j < 3; j++ {
			acc[PPix0+j] += t.cd * k.od[j]
			acc[PObs+j] += t.cd * k.pix0[j]
		}
	}
}

// hklBudget bounds the ∂S/∂(h, k, l) a loss row keeps per chunk (3 per
// pixel, source and orientation): chunks shrink when there are many.
const hklBudget = 1 << 14

// lossRecs are one chunk's per-pixel records in lossRowSingle.
type lossRecs struct {
	idx, live [rowChunk]int
	geo       [rowChunk][4]float64 // 1/R, d
	fac       [rowChunk][5]float64 // ω, P, ∂P/∂K, α, (∂P/∂d)·d
	pol       [rowChunk][2]float64 // β, γ (K ≠ 0)
	ts        [rowChunk]termSums
	q         [rowChunk][3]float64 // one source's scattering vectors
	g         [rowChunk]float64    // I, then ∂L/∂I
	sb        [rowChunk]float64    // ∂L/∂S
	fdet      [rowChunk]float64
	tot       lossTotals
}

// lossTotals are a loss row's sums: of ∂L/∂N, ∂L/∂F, ∂L/∂(water seed),
// Σ g·P·ω·S (∂L/∂fluence over perFluence), ∂L/∂K and ∂L/∂(close
// distance), of a·d and
// fdet·a·d (a: the pixel's coefficient of d in ∂L/∂p), and of the
// polarization's ∂L/∂p/R along inc, ein, bin (p) and times fdet (fp).
type lossTotals struct {
	na, nb, nc, ddef, ibg, flu, kahn, cd float64
	ad, fad                              [3]float64
	pa, pb, pc, fpa, fpb, fpc            float64
}

// recs returns w's loss-row records, allocating them on first use.
func (w *gradWork) recs() *lossRecs {
	if w.lr == nil {
		w.lr = new(lossRecs)
	}
	return w.lr
}
