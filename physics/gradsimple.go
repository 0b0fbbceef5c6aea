package physics

import "math"

// sincgGrad3 returns sincg(x, n) for x = h, k, l (whole 1 < n ≤
// maxChebyshevN, |x| < 2⁵¹), their derivatives by x and by n (n taken as
// continuous), from c = cos πx and s = sin πx:
//
//	sincg = U_{n−1}(c),  ∂/∂x = π·(n·T_n(c) − c·U_{n−1}(c))/s,  ∂/∂n = πx·T_n(c)/s,
//
// with T_n = c·U_{n−1} − U_{n−2} and |s| = √((1 − c)(1 + c)) for the reduced
// cos πd ≥ 0: 1 − cos πd is exact for cos πd ≥ ½, so this is within a few
// 1e-14 of the series where it is used, and a square root is cheaper.
// Within closedFormMin of an integer sincgNearPeak takes over. The three
// are evaluated side by side so that their chains of dependent operations
// overlap.
func sincgGrad3(h, kk, l float64, n int) (sa, sb, sc, ha, hb, hc, na, nb, nc float64) {
	th, tk, tl := h+roundMagic, kk+roundMagic, l+roundMagic
	dh, dk, dl := h-(th-roundMagic), kk-(tk-roundMagic), l-(tl-roundMagic)
	fh, fk, fl := math.Float64bits(th)<<63, math.Float64bits(tk)<<63, math.Float64bits(tl)<<63
	crh, crk, crl := cosPiReduced(dh), cosPiReduced(dk), cosPiReduced(dl) // in [0, 1]
	ch := math.Float64frombits(math.Float64bits(crh) ^ fh)
	ck := math.Float64frombits(math.Float64bits(crk) ^ fk)
	cl := math.Float64frombits(math.Float64bits(crl) ^ fl)
	ch2, ck2, cl2 := 2*ch, 2*ck, 2*cl
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
	sh := math.Float64frombits(math.Float64bits(math.Copysign(math.Sqrt((1-crh)*(1+crh)), dh)) ^ fh)
	sk := math.Float64frombits(math.Float64bits(math.Copysign(math.Sqrt((1-crk)*(1+crk)), dk)) ^ fk)
	sl := math.Float64frombits(math.Float64bits(math.Copysign(math.Sqrt((1-crl)*(1+crl)), dl)) ^ fl)
	rh, rk, rl := math.Pi/sh, math.Pi/sk, math.Pi/sl
	ha = ((fn-1)*ch*uh1 - fn*uh0) * rh
	hb = ((fn-1)*ck*uk1 - fn*uk0) * rk
	hc = ((fn-1)*cl*ul1 - fn*ul0) * rl
	na = h * (ch*uh1 - uh0) * rh
	nb = kk * (ck*uk1 - uk0) * rk
	nc = l * (cl*ul1 - ul0) * rl
	// Near a peak the closed form cancels (or divides by zero): replaced.
	if math.Abs(dh) < closedFormMin {
		ha, na = sincgNearPeak(h, dh, ch, fh, uh0, uh1, n)
	}
	if math.Abs(dk) < closedFormMin {
		hb, nb = sincgNearPeak(kk, dk, ck, fk, uk0, uk1, n)
	}
	if math.Abs(dl) < closedFormMin {
		hc, nc = sincgNearPeak(l, dl, cl, fl, ul0, ul1, n)
	}
	return uh1, uk1, ul1, ha, hb, hc, na, nb, nc
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
// x ≠ 0 the derivative by n diverges (±∞, as sincgGrad's); at x = 0 it
// is 1.
func sincgNearPeak(x, d, c float64, flip uint64, um2, um1 float64, n int) (dx, dn float64) {
	s := math.Float64frombits(math.Float64bits(sinPiReduced(d)) ^ flip)
	tn := c*um1 - um2 // T_n
	c2 := 2 * c
	u0, u1, p0, p1 := 1.0, c2, 0.0, 2.0 // U_0, U_1, U′_0, U′_1
	for j := 2; j < n; j++ {
		u0, u1, p0, p1 = u1, c2*u1-u0, p1, 2*u1+c2*p1-p0
	}
	dx = -math.Pi * s * p1
	switch {
	case d != 0:
		dn = math.Pi * x * tn / s
	case x == 0:
		dn = 1
	default:
		dn = math.Copysign(math.Inf(1), u1)
	}
	return
}

// polarizationGradScalar is Polarization for source sr with its
// derivatives by the Kahn factor and by the diffracted direction (d and the
// gradient as components). cos2ψ is formed also at K = 0, where
// Polarization skips it: the derivative by K needs it.
func (k *kernel) polarizationGradScalar(sr *source, dx, dy, dz float64) (p, dkahn, ddx, ddy, ddz float64) {
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
	dc2 := c2 * (1 + k.kahn*cos2psi)
	dcos := -0.5 * k.kahn * s2sq
	ddx = dc2*sr.inc[0] + dcos*(de*sr.ein[0]+db*sr.bin[0])
	ddy = dc2*sr.inc[1] + dcos*(de*sr.ein[1]+db*sr.bin[1])
	ddz = dc2*sr.inc[2] + dcos*(de*sr.ein[2]+db*sr.bin[2])
	return
}

// sourceTermsGrad walks the terms of one sub-pixel and source sr with
// scattering vector q for the structures pixelSimple covers: it adds their
// sum and its derivatives by the diffracted direction d (through q), by
// Na, Nb, Nc, the default F and λ0 to t, and writes the derivatives by
// each orientation's h, k, l to hkl (3 per orientation; those by its a, b,
// c vectors are these times q, which addOrientation forms).
func (k *kernel) sourceTermsGrad(sr *source, qx, qy, qz float64, hkl []float64, t *termSums) {
	c := k.c
	var s, qbx, qby, qbz, na, nb, nc, ddef float64
	n := k.nn[0]
	for oi := range k.orient {
		o := &k.orient[oi]
		h := o[0][0]*qx + o[0][1]*qy + o[0][2]*qz
		kk := o[1][0]*qx + o[1][1]*qy + o[1][2]*qz
		l := o[2][0]*qx + o[2][1]*qy + o[2][2]*qz
		var sa, sb, sc, ha, hb, hc, nda, ndb, ndc float64
		if math.Abs(h) < 1<<51 && math.Abs(kk) < 1<<51 && math.Abs(l) < 1<<51 {
			sa, sb, sc, ha, hb, hc, nda, ndb, ndc = sincgGrad3(h, kk, l, n)
		} else {
			// Beyond the Chebyshev form's range (no physical input).
			sa, ha, nda = sincgGrad(h, k.na)
			sb, hb, ndb = sincgGrad(kk, k.nb)
			sc, hc, ndc = sincgGrad(l, k.nc)
		}
		fl := sa * sb * sc
		b := hkl[3*oi : 3*oi+3]
		if fl == 0 && !c.Water {
			b[0], b[1], b[2] = 0, 0, 0
			continue
		}
		fc := k.defaultF
		if c.HasHKL {
			var fd float64
			fc, fd = k.cellFGrad(h, kk, l)
			ddef += 2 * fc * fl * fl * fd
		}
		s += fc * fc * fl * fl
		tfl := 2 * fc * fc * fl
		sbc, sac, sab := sb*sc, sa*sc, sa*sb
		hbar, kbar, lbar := tfl*ha*sbc, tfl*hb*sac, tfl*hc*sab
		b[0], b[1], b[2] = hbar, kbar, lbar
		qbx += hbar*o[0][0] + kbar*o[1][0] + lbar*o[2][0]
		qby += hbar*o[0][1] + kbar*o[1][1] + lbar*o[2][1]
		qbz += hbar*o[0][2] + kbar*o[1][2] + lbar*o[2][2]
		na, nb, nc = na+tfl*nda*sbc, nb+tfl*ndb*sac, nc+tfl*ndc*sab
	}
	if !c.HasHKL && k.defaultF != 0 {
		// Every term is F²·F_latt² with the one F: ∂s/∂F = 2s/F.
		ddef = 2 * s / k.defaultF
	}
	t.s += s
	t.na, t.nb, t.nc, t.def = t.na+na, t.nb+nb, t.nc+nc, t.def+ddef
	// Back through q = (d − incident)/λ.
	t.dbx, t.dby, t.dbz = t.dbx+qbx*sr.invLambda, t.dby+qby*sr.invLambda, t.dbz+qbz*sr.invLambda
	t.lam -= (qbx*qx + qby*qy + qbz*qz) * k.invLambda0
}

// termSums are one sub-pixel's (or pixel's) sums over its terms: S and
// its derivatives by the diffracted direction d, by Na, Nb, Nc, the
// default F and λ0. Passed by pointer, they stay in memory while the terms
// are walked (Go keeps no register across a call).
type termSums struct {
	s, dbx, dby, dbz, na, nb, nc, def, lam float64
}

// addOrientation adds w·(∂S/∂h, ∂S/∂k, ∂S/∂l)⊗q, the derivatives by
// every orientation's a, b, c vectors (9 per orientation in ob), from the
// derivatives by h, k, l that sourceTermsGrad wrote to hkl.
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
	ts := termSums{s: k.ibg} // ∂S/∂d is per sub-pixel, the rest per pixel
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
				ts.dbx, ts.dby, ts.dbz = 0, 0, 0
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
					k.sourceTermsGrad(sr, qx, qy, qz, w.hkl, &ts)
					addOrientation(tmp[NParams:], w.hkl, qx, qy, qz, 1)
				}
				dbar := [3]float64{ts.dbx, ts.dby, ts.dbz}
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
	tmp[PDefaultF] += ts.def
	tmp[PLambda] += ts.lam
	return ts.s
}

// lossRowSingle is the fused loss-and-gradient walk of the rendered
// pixels of row spix for the structures pixelSimple covers with one
// sub-pixel and one sensor layer without thickness: the geometry of the
// pixels the loss keeps computed ahead in chunks (as rowSingle), forward
// and backward in scalars, the factors' derivatives taken where they are
// computed, and the geometry's adjoints summed over the row before they
// reach acc (they are linear in the row's per-pixel adjoints). It adds
// g·∂I/∂P to acc (orientation adjoints after NParams: the derivatives by
// h, k, l wait in w.hkl, or with several sources those by a, b, c in
// w.tmp, until the pixel's loss derivative g is known) and each pixel's
// loss term to the compensated sum (sum, comp).
func (k *kernel) lossRowSingle(spix int, mask []float64, loss *PixelLoss, acc []float64, w *gradWork, sum, comp *float64) {
	c := k.c
	sdet := k.sub*float64(spix) + k.sub/2
	at, tt, hkl := acc[NParams:], w.tmp[NParams:len(acc)], w.hkl
	at = at[:len(tt)]
	oneSource := len(k.src) == 1 // orientation adjoints straight from hkl
	// Row sums of the adjoints that reach acc linearly.
	var pSumX, pSumY, pSumZ float64 // ∂L/∂p (p: the pixel's lab position)
	var fpX, fpY, fpZ float64       // fdet·∂L/∂p
	var cdSum float64               // ∂L/∂(close distance) from ω
	var na, nb, nc, ddef, lam, ibg, flu, kahn float64
	var geo [rowChunk][4]float64
	var idx [rowChunk]int
	last := min(c.ROIFMax, c.FPixels-1)
	if spix < c.ROISMin || spix > c.ROISMax {
		last = -1
	}
	for f0 := max(c.ROIFMin, 0); f0 <= last; {
		var fs []int
		fs, f0 = chunkPixels(c, spix, f0, mask, loss, &idx)
		k.chunkGeometry(spix, fs, &geo)
		for p, fpix := range fs {
			i := spix*c.FPixels + fpix
			fdet := k.sub*float64(fpix) + k.sub/2
			invR, dx, dy, dz := geo[p][0], geo[p][1], geo[p][2], geo[p][3]
			omega := k.omega(invR)
			polar := 0.0
			if c.NoPolar {
				polar = 1
			}
			var pk, pdx, pdy, pdz float64
			ts := termSums{s: k.ibg}
			for si := range k.src {
				sr := &k.src[si]
				qx, qy, qz := (dx-sr.inc[0])*sr.invLambda, (dy-sr.inc[1])*sr.invLambda, (dz-sr.inc[2])*sr.invLambda
				if polar == 0 {
					if k.kahn == 0 {
						// polarizationGradScalar at K = 0, inline: only the
						// derivative by K needs the azimuth.
						c2 := sr.inc[0]*dx + sr.inc[1]*dy + sr.inc[2]*dz
						c2sq := c2 * c2
						e := dx*sr.ein[0] + dy*sr.ein[1] + dz*sr.ein[2]
						b := dx*sr.bin[0] + dy*sr.bin[1] + dz*sr.bin[2]
						cos2psi := 1.0
						if den := e*e + b*b; den > 0 {
							cos2psi = (e*e - b*b) / den
						}
						polar = 0.5 * (1 + c2sq)
						pk = -0.5 * cos2psi * (1 - c2sq)
						pdx, pdy, pdz = c2*sr.inc[0], c2*sr.inc[1], c2*sr.inc[2]
					} else {
						polar, pk, pdx, pdy, pdz = k.polarizationGradScalar(sr, dx, dy, dz)
					}
				}
				k.sourceTermsGrad(sr, qx, qy, qz, hkl, &ts)
				if !oneSource {
					addOrientation(tt, hkl, qx, qy, qz, 1)
				}
			}
			s, dbx, dby, dbz := ts.s, ts.dbx, ts.dby, ts.dbz
			spo := s * polar * omega
			l, g := loss.Term(i, k.scale*s*polar*omega) // Render's grouping: the same bits
			neumaier(sum, comp, l)
			if g == 0 {
				if !oneSource {
					clear(tt)
				}
				continue
			}
			sbar := g * k.scale * polar * omega // ∂L/∂S
			if oneSource {
				sr := &k.src[0]
				addOrientation(at, hkl, (dx-sr.inc[0])*sr.invLambda, (dy-sr.inc[1])*sr.invLambda, (dz-sr.inc[2])*sr.invLambda, sbar)
			} else {
				for j, u := range tt {
					at[j] += sbar * u
					tt[j] = 0
				}
			}
			na, nb, nc = na+sbar*ts.na, nb+sbar*ts.nb, nc+sbar*ts.nc
			ddef += sbar * ts.def
			lam += sbar * ts.lam
			ibg += sbar
			flu += g * spo
			// The factors: ∂L/∂P = g·scale·S·ω, ∂L/∂ω = g·scale·S·P.
			gs := g * k.scale * s
			dbx, dby, dbz = sbar*dbx, sbar*dby, sbar*dbz
			if !c.NoPolar {
				pbar := gs * omega
				kahn += pbar * pk
				dbx, dby, dbz = dbx+pbar*pdx, dby+pbar*pdy, dbz+pbar*pdz
			}
			wbar := gs * polar
			inv3 := invR * invR * invR
			var rbar float64
			if c.PointPixel {
				rbar = -2 * wbar * inv3
			} else {
				cd := wbar * k.pitch * k.pitch * inv3 // ∂L/∂(close distance)
				cdSum += cd
				rbar = -3 * cd * k.closeD * invR
			}
			// Back through d = p/R, R = |p|, p = fdet·f + sdet·s + pix0.
			//	p̄ = (d̄ − (d̄·d)d)/R + r̄·d = d̄/R + (r̄ − (d̄·d)/R)·d
			a := rbar - (dbx*dx+dby*dy+dbz*dz)*invR
			px, py, pz := dbx*invR+a*dx, dby*invR+a*dy, dbz*invR+a*dz
			pSumX, pSumY, pSumZ = pSumX+px, pSumY+py, pSumZ+pz
			fpX, fpY, fpZ = fpX+fdet*px, fpY+fdet*py, fpZ+fdet*pz
		}
	}
	_ = acc[NParams-1]
	acc[PNa] += na
	acc[PNb] += nb
	acc[PNc] += nc
	acc[PDefaultF] += ddef
	acc[PLambda] += lam
	acc[PIbg] += ibg
	acc[PFluence] += flu * k.perFluence
	acc[PKahn] += kahn
	acc[PPix0] += pSumX
	acc[PPix0+1] += pSumY
	acc[PPix0+2] += pSumZ
	acc[PFdet] += fpX
	acc[PFdet+1] += fpY
	acc[PFdet+2] += fpZ
	acc[PSdet] += sdet * pSumX
	acc[PSdet+1] += sdet * pSumY
	acc[PSdet+2] += sdet * pSumZ
	// Σ (p̄·f)·fdet = f·Σ fdet·p̄, and the same for s.
	acc[PPixel] += (fpX*k.fd[0] + fpY*k.fd[1] + fpZ*k.fd[2] + (pSumX*k.sd[0]+pSumY*k.sd[1]+pSumZ*k.sd[2])*sdet) * k.invPitch
	if !c.PointPixel {
		acc[PPixel] += cdSum * 2 * k.closeD / k.pitch
		for j := 0; j < 3; j++ {
			acc[PPix0+j] += cdSum * k.od[j]
			acc[PObs+j] += cdSum * k.pix0[j]
		}
	}
}
