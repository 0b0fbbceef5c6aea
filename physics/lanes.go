//go:build lanegen

package physics

// The lane kernels: the one source of the arithmetic that the usual
// structure (see kernel.simple) runs through, written once on lanes pixels
// at a time. This file is not compiled itself: go generate
// (internal/lanegen) writes its copies, with the calls of the functions
// marked //lanegen:inline replaced by their bodies and the lane vocabulary
// spelled out per target: with one lane in float64 operators (and
// lanes_scalar.go's helpers) it is the scalar kernel (lanes_gen.go); with
// every name suffixed, on 4 lanes of simd/archsimd's Float64x4, the AVX2
// kernel (lanes_avx2_gen.go), and on 8 lanes of its Float64x8 the AVX-512
// kernel (lanes_avx512_gen.go; both again for Go 1.27, whose
// simd/archsimd names its loads and stores differently:
// *_go127_gen.go); dispatch.go picks the copy the CPU runs.
// Each lane does exactly the scalar operations in the scalar order (no fused multiply-add, no
// reassociation): the copies give the scalar kernel's bits, which
// TestLanesBits (images) and TestLanesGradientBits (losses and gradients)
// check on every golden case. The scalar helpers the general loops use
// (cosPiReduced, sincg3, polarization and its derivatives, the flat
// detector, ω, cellF) are these functions on one lane, so that a formula
// is written once.
//
// The kernels: the forward rows (pixelsLanes), and the loss rows' front
// (lossFrontLanes: geometry, ω, polarization coefficients), terms
// (termsGradLanes: S and its derivatives by N, F and h, k, l) and
// backward pass (lossBackLanes); the Poisson loss's terms and
// derivatives (poissonLanes) and the loss value's sums (lossSumsLanes);
// the sums of simulate's image statistics (imageSumsLanes,
// imageDevLanes); and the float32 store of a row (rowF32Lanes). Sums
// across pixels are left to scalar code that takes the lanes' results
// in pixel order (the image's solid angle), kept as lossSlots
// compensated sums, pixel p of a chunk in sum p mod lossSlots (the loss
// value: lossSum, lossSumsLanes), or, in the backward pass, kept as
// slots partial sums (four; eight in the Go 1.27 vector build), pixel p
// in sum p mod slots, in slot vectors (vs: the partial sums on lanes,
// min(lanes, slots) of them) that vslotadd adds a vector of pixels to in
// pixel order (with four slots on eight lanes the low four, then the
// high four): the same sums for one lane, four or eight.
//
// The vector kernels run a whole row with no scalar floating-point
// instruction: every value they need that is not a lane value is read,
// repeated, from laneReps (built by scalar code beforehand), and they
// leave what needs scalar arithmetic (the capture fraction's exp, the
// final product) to scalar code after them. Go compiles scalar float64
// arithmetic to SSE instructions without the VEX prefix, and on this
// machine (AMD EPYC, 2 vCPUs) every switch between those and 256-bit AVX
// costs 0.1–0.35 µs: one inside a group of pixels made the AVX2 kernel
// slower than the scalar one.

// cosPiLanes is cos πd for |d| ≤ ½: the minimax polynomial (trig.go) in
// y = d² (cosPiVLanes).
//
//lanegen:inline
func cosPiLanes(d vf) vf {
	c, _ := cosPiVLanes(d)
	return c
}

// cosPiVLanes is cos πd for |d| ≤ ½, the minimax polynomial (trig.go) in
// y = d² evaluated in independent pieces (Estrin's scheme, which shortens
// the chain of dependent operations), and v = cos πd − 1, the same
// pieces without the constant term: to a few ulp where cos πd is near 1
// (sincgGradLanes' sine). cos πd is 1 + v, v summed with its largest
// piece last (within 2.1e-16 of cos πd; adding the pieces to 1 in turn
// gave 2.3e-16), so that the sine's v costs no additions of its own.
//
//lanegen:inline
func cosPiVLanes(d vf) (vf, vf) {
	y := d.Mul(d)
	y2 := y.Mul(y)
	y4 := y2.Mul(y2)
	a := vk(cp2).Mul(y)
	b := vk(cp4).Add(vk(cp6).Mul(y)).Mul(y2)
	p1 := vk(cp8).Add(vk(cp10).Mul(y)).Add(vk(cp12).Add(vk(cp14).Mul(y)).Mul(y2)).Mul(y4)
	p2 := vk(cp16).Mul(y4.Mul(y4))
	v := a.Add(b.Add(p1).Add(p2))
	return vk(cp0).Add(v), v
}

// sinPiLanes is sin πd for |d| ≤ ½: the Taylor series (trig.go) in
// y = d², evaluated as cosPiVLanes evaluates its polynomial.
//
//lanegen:inline
func sinPiLanes(d vf) vf {
	y := d.Mul(d)
	y2 := y.Mul(y)
	y4 := y2.Mul(y2)
	p0 := vk(sp1).Add(vk(sp3).Mul(y)).Add(vk(sp5).Add(vk(sp7).Mul(y)).Mul(y2))
	p1 := vk(sp9).Add(vk(sp11).Mul(y)).Add(vk(sp13).Add(vk(sp15).Mul(y)).Mul(y2)).Mul(y4)
	p2 := vk(sp17).Add(vk(sp19).Mul(y)).Add(vk(sp21).Mul(y2)).Mul(y4.Mul(y4))
	return d.Mul(p0.Add(p1).Add(p2))
}

// flipOdd returns c with its sign flipped where t, a number held with unit
// spacing (x + roundMagic), is odd: (−1)^m·c for the integer m that t holds.
//
//lanegen:inline
func flipOdd(c, t vf) vf {
	return vfloat(vxor(vbits(c), vshl(vbits(t), 63)))
}

// logLanes is math.Log as Go's amd64 assembly computes it (archLog),
// operation for operation, so that it has its bits for every x there
// (TestLogLanes): x = 2^k·f1 with f1 in [½, 1) from x's mantissa bits
// under ½'s exponent and k from its exponent bits less 1022 (a
// subnormal x as the assembly takes it), f1 doubled and k less 1 where
// f1 ≤ √2/2; then with f = f1 − 1, s = f/(2 + f) and fdlibm's polynomial
// R in s², ln x = k·ln2Hi − ((f²/2 − (s·(f²/2 + R) + k·ln2Lo)) − f).
// As the assembly: ±0 gives −Inf, a sign bit (a negative x, −Inf, a NaN
// with it) Go's NaN 0x7FF8000000000001, +Inf and other NaNs x itself.
//
//lanegen:inline
func logLanes(x vf) vf {
	b := vbits(x)
	f1 := vfloat(vor(vand(b, vbits(vk(logMant))), vbits(vk(0.5))))
	// The exponent field as a float64, exactly: its 11 bits under 2⁵²'s
	// exponent are 2⁵² + e.
	k := vfloat(vor(vand(vshrv(b, vbits(vk(logShift52))), vbits(vk(logExp))), vbits(vk(twoP52)))).Sub(vk(twoP52)).Sub(vk(1022))
	d := vk(0).Merge(vk(1), vk(logHSqrt2).Less(f1)) // 1 where f1 ≤ √2/2 (or unordered)
	k = k.Sub(d)
	f := f1.Mul(d.Add(vk(1))).Sub(vk(1))
	s := f.Div(vk(2).Add(f))
	s2 := s.Mul(s)
	s4 := s2.Mul(s2)
	t1 := s2.Mul(vk(logL7).Mul(s4).Add(vk(logL5)).Mul(s4).Add(vk(logL3)).Mul(s4).Add(vk(logL1)))
	t2 := s4.Mul(vk(logL6).Mul(s4).Add(vk(logL4)).Mul(s4).Add(vk(logL2)))
	hfsq := vk(0.5).Mul(f).Mul(f)
	lg := k.Mul(vk(ln2Hi)).Sub(hfsq.Sub(s.Mul(t1.Add(t2).Add(hfsq)).Add(k.Mul(vk(ln2Lo)))).Sub(f))
	lg = x.Merge(lg, x.Greater(vk(maxF64)).Or(x.NotEqual(x)))
	lg = vrep(&logNaNRep).Merge(lg, vshrv(b, vbits(vk(logShift63))).Equal(vbits(vk(logSign))))
	return vrep(&negInfRep).Merge(lg, x.Equal(vk(0)))
}

// poissonTermLanes is the Poisson loss term w·(x − o·ln x) of intensity x
// (with its background), count o and weight w, and its derivative
// w·(1 − o/x), where x > 0; w·x and w where o = 0 (and x is not +Inf);
// else +Inf and −Inf. Its one-lane copy is poissonTerm's. Without counts
// at a finite positive intensity (most of a sparse image's pixels) it is
// w·x and w with neither the logarithm nor the division: o·ln x and o/x
// are ±0 there, the same bits (TestPoissonTermNoCounts); a vector takes
// them where any lane needs them.
//
//lanegen:inline
func poissonTermLanes(x, o, w vf) (vf, vf) {
	zero := vk(0)
	t, g := w.Mul(x), w
	if vany(o.NotEqual(zero).Or(x.LessEqual(zero)).Or(x.Greater(vk(maxF64))).Or(x.NotEqual(x))) {
		lg := logLanes(x)
		none, pos := o.Equal(zero), x.Greater(zero)
		tt, gg := t.Merge(vrep(&posInfRep), none), w.Merge(vrep(&negInfRep), none)
		tt = w.Mul(x.Sub(o.Mul(lg))).Merge(tt, pos)
		gg = w.Mul(vk(1).Sub(o.Div(x))).Merge(gg, pos)
		finite := none.And(pos).And(x.LessEqual(vk(maxF64)))
		t, g = t.Merge(tt, finite), w.Merge(gg, finite)
	}
	return t, g
}

// poissonLanes stores in t and g the Poisson loss terms and their
// derivatives (poissonTermLanes) of the first n values (a whole number
// of lanes) of the intensities v, with the background b added where bg
// is set, the counts o and the weights w.
func poissonLanes(v, b, o, w, t, g []float64, n int, bg bool) {
	for p0 := 0; p0 < n; p0 += lanes {
		x := vloadSlice(v[p0:])
		if bg {
			x = x.Add(vloadSlice(b[p0:]))
		}
		tt, gg := poissonTermLanes(x, vloadSlice(o[p0:]), vloadSlice(w[p0:]))
		tt.StoreSlice(t[p0:])
		gg.StoreSlice(g[p0:])
	}
	vzeroupper()
}

// lossSumsLanes adds the first n values of t (a whole number of
// maxLanes) to a gradient tile's sums a, value p to sum p mod lossSlots
// (lossSum.add's bits: Neumaier's step on every lane, neumaierLanes), and
// with ones set replaces them by 1 (the summed-image loss's
// derivatives).
func lossSumsLanes(t []float64, n int, ones bool, a *lossSum) {
	const m = lossSlots / lanes
	var s, c [m]vf
	for q := range m {
		s[q], c[q] = vloadSlice(a.s[q*lanes:]), vloadSlice(a.c[q*lanes:])
	}
	one := vk(1)
	for p := 0; p < n; p += lanes {
		q := p / lanes % m
		s[q], c[q] = neumaierLanes(s[q], c[q], vloadSlice(t[p:]))
		if ones {
			one.StoreSlice(t[p:])
		}
	}
	for q := range m {
		s[q].StoreSlice(a.s[q*lanes:])
		c[q].StoreSlice(a.c[q*lanes:])
	}
	vzeroupper()
}

// neumaierLanes is neumaier on every lane: x added to the sum s with
// compensation c, the branch's two forms both computed and the one it
// takes kept.
//
//lanegen:inline
func neumaierLanes(s, c, x vf) (vf, vf) {
	y := s.Add(x)
	abs := vbits(vrep(&absRep))
	big := vfloat(vand(vbits(s), abs)).GreaterEqual(vfloat(vand(vbits(x), abs)))
	return y, c.Add(s.Sub(y).Add(x).Merge(x.Sub(y).Add(s), big))
}

// sincg3Lanes is sincg(h, n)·sincg(k, n)·sincg(l, n) for whole 1 < n ≤
// maxChebyshevN and |h|, |k|, |l| < 2⁵¹ (callers check: beyond, the
// Chebyshev form is not used): U_{n−1}(cos πx) for each, cos πx from the
// offset to the nearest integer (trig.go). The three are evaluated side by
// side so that their chains of dependent operations overlap. (r is not
// read: sincgAxesLanes stands in its place in termsAxesLanes.)
//
//lanegen:inline
func sincg3Lanes(r *laneReps, h, kk, l vf, n int) vf {
	magic := vk(roundMagic)
	th, tk, tl := h.Add(magic), kk.Add(magic), l.Add(magic)
	ch := flipOdd(cosPiLanes(h.Sub(th.Sub(magic))), th)
	ck := flipOdd(cosPiLanes(kk.Sub(tk.Sub(magic))), tk)
	cl := flipOdd(cosPiLanes(l.Sub(tl.Sub(magic))), tl)
	// U_0 = 1, U_1 = 2c, U_{j+1} = 2c·U_j − U_{j−1}, for the three at
	// once, two steps at a time, the two registers taking turns (no
	// moves): before each pair u0 = U_{j−2}, u1 = U_{j−1}.
	two := vk(2)
	ch, ck, cl = two.Mul(ch), two.Mul(ck), two.Mul(cl)
	h0, k0, l0 := vk(1), vk(1), vk(1)
	h1, k1, l1 := ch, ck, cl
	j := 2
	for ; j+1 < n; j += 2 {
		h0, k0, l0 = ch.Mul(h1).Sub(h0), ck.Mul(k1).Sub(k0), cl.Mul(l1).Sub(l0)
		h1, k1, l1 = ch.Mul(h0).Sub(h1), ck.Mul(k0).Sub(k1), cl.Mul(l0).Sub(l1)
	}
	if j < n {
		h1 = ch.Mul(h1).Sub(h0)
		k1 = ck.Mul(k1).Sub(k0)
		l1 = cl.Mul(l1).Sub(l0)
	}
	return h1.Mul(k1).Mul(l1)
}

// expLanes is e^x: x = k·ln 2 + r with k the integer nearest x·log₂e and
// |r| ≤ ½ln 2 (Cody and Waite's two-part ln 2, whose high part's
// trailing zeros keep k·ln2Hi exact), e^r by its Taylor polynomial to
// r¹³ (the next term is below 5e-18 of it), evaluated as 1 + (r + r²·q)
// with q in pieces as cosPiLanes evaluates its polynomial, then 2^k
// put in by its bit pattern. k + 1023 comes with k: x·log₂e + expMagic
// holds it in its low bits, which a shift moves into the exponent field.
// Near the ends of its range (k < −1000 or k > 1000, a margin on where
// 2^k stops being a normal number) it is put in as 2^(k±600)·2^∓600, so that results down to the subnormals and up to
// the overflow come out as their products round; x is first clamped to
// [−746, 710], beyond which e^x is 0 or +∞ in float64 (a NaN stays a
// NaN). TestExpLanes measures it against math.Exp: ≤ 2 ulp apart, 85 %
// of points the same bits.
//
//lanegen:inline
func expLanes(x vf) vf {
	x = vk(expMax).Merge(x, x.Greater(vk(expMax)))
	x = vk(expMin).Merge(x, x.Less(vk(expMin)))
	t := x.Mul(vk(log2E)).Add(vk(expMagic))
	kf := t.Sub(vk(expMagic))
	r := x.Sub(kf.Mul(vk(ln2Hi))).Sub(kf.Mul(vk(ln2Lo)))
	r2 := r.Mul(r)
	r4 := r2.Mul(r2)
	q0 := vk(ec2).Add(vk(ec3).Mul(r)).Add(vk(ec4).Add(vk(ec5).Mul(r)).Mul(r2))
	q1 := vk(ec6).Add(vk(ec7).Mul(r)).Add(vk(ec8).Add(vk(ec9).Mul(r)).Mul(r2)).Mul(r4)
	q2 := vk(ec10).Add(vk(ec11).Mul(r)).Add(vk(ec12).Add(vk(ec13).Mul(r)).Mul(r2)).Mul(r4.Mul(r4))
	p := vk(1).Add(r.Add(r2.Mul(q0.Add(q1).Add(q2))))
	small, big := kf.Less(vk(-1000)), kf.Greater(vk(1000))
	off := vk(600).Merge(vk(0), small)
	off = vk(-600).Merge(off, big)
	c := vk(twoM600).Merge(vk(1), small)
	c = vk(twoP600).Merge(c, big)
	return p.Mul(vfloat(vshl(vbits(t.Add(off)), 52))).Mul(c)
}

// shapeLatticeLanes is F_latt of the round, Gaussian and top-hat spot
// shapes (laneReps.shape), as the reference has them, from the offset
// of (h, k, l) from the nearest reflection (round half down): for the
// round shape Na·Nb·Nc·0.7236…·sinc3 of hr·fudge, hr the offset's
// squared length in units of 1/N per axis; for the others its squared
// length in Å⁻¹ along the unrotated reciprocal axes times (Na·Nb·Nc)²,
// r², and then Na·Nb·Nc·e^(−r²/0.63·fudge), or Na·Nb·Nc where r²·fudge <
// 0.3969 and 0 elsewhere. (n is not read: the arguments are
// sincg3Lanes', whose place it takes.)
//
//lanegen:inline
func shapeLatticeLanes(r *laneReps, h, kk, l vf, n int) vf {
	dh, dk, dl := shapeOffsetLanes(h, kk, l)
	nabc := vrep(&r.nabc)
	var fl vf
	if r.shape == Round {
		hr := roundRadiusLanes(r, dh, dk, dl)
		fl = nabc.Mul(vk(roundScale)).Mul(sinc3Lanes(hr.Mul(vrep(&r.fudge))))
	} else {
		v0, v1, v2, r2 := gaussRadiusLanes(r, dh, dk, dl)
		_, _, _ = v0, v1, v2
		if r.shape == Gauss {
			fl = nabc.Mul(expLanes(gaussArgLanes(r, r2)))
		} else {
			fl = nabc.Merge(vk(0), r2.Mul(vrep(&r.fudge)).Less(vk(tophatR2)))
		}
	}
	return fl
}

// shapeOffsetLanes is the offset of (h, k, l) from the nearest
// reflection, rounding halves down, as the reference finds it for the
// spot shapes.
//
//lanegen:inline
func shapeOffsetLanes(h, kk, l vf) (vf, vf, vf) {
	half := vk(0.5)
	return h.Sub(h.Sub(half).Ceil()), kk.Sub(kk.Sub(half).Ceil()), l.Sub(l.Sub(half).Ceil())
}

// roundRadiusLanes is the round shape's squared offset in units of 1/N
// per axis, Σ (Δh_i·N_i)² as the reference groups it.
//
//lanegen:inline
func roundRadiusLanes(r *laneReps, dh, dk, dl vf) vf {
	na, nb, nc := vrep(&r.nv[0]), vrep(&r.nv[1]), vrep(&r.nv[2])
	return dh.Mul(dh).Mul(na).Mul(na).Add(dk.Mul(dk).Mul(nb).Mul(nb)).Add(dl.Mul(dl).Mul(nc).Mul(nc))
}

// gaussRadiusLanes is the offset along the unrotated reciprocal axes, v =
// Δh·a* + Δk·b* + Δl·c* (Å⁻¹), and r² = |v|²·(Na·Nb·Nc)², of the Gaussian
// and top-hat shapes.
//
//lanegen:inline
func gaussRadiusLanes(r *laneReps, dh, dk, dl vf) (vf, vf, vf, vf) {
	nabc := vrep(&r.nabc)
	v0 := dh.Mul(vrep(&r.astar[0])).Add(dk.Mul(vrep(&r.bstar[0]))).Add(dl.Mul(vrep(&r.cstar[0])))
	v1 := dh.Mul(vrep(&r.astar[1])).Add(dk.Mul(vrep(&r.bstar[1]))).Add(dl.Mul(vrep(&r.cstar[1])))
	v2 := dh.Mul(vrep(&r.astar[2])).Add(dk.Mul(vrep(&r.bstar[2]))).Add(dl.Mul(vrep(&r.cstar[2])))
	return v0, v1, v2, v0.Mul(v0).Add(v1.Mul(v1)).Add(v2.Mul(v2)).Mul(nabc).Mul(nabc)
}

// gaussArgLanes is the Gaussian's exponent −(r²/0.63·fudge).
//
//lanegen:inline
func gaussArgLanes(r *laneReps, r2 vf) vf {
	return vfloat(vxor(vbits(r2.Div(vk(gaussWidth)).Mul(vrep(&r.fudge))), vbits(vrep(&r.negZero))))
}

// sinCosPiLanes is sin πx and cos πx from the polynomials on x's offset
// from its nearest integer (ties to even), the signs flipped where that
// integer is odd: sinCosPi on lanes (whose rounding of ties away from
// zero gives the same bits: at a tie the offsets are ±½ and the flips
// opposite). |x| < 2⁵¹.
//
//lanegen:inline
func sinCosPiLanes(x vf) (vf, vf) {
	magic := vk(roundMagic)
	t := x.Add(magic)
	d := x.Sub(t.Sub(magic))
	s, c := flipOdd(sinPiLanes(d), t), flipOdd(cosPiLanes(d), t)
	return s, c
}

// sinc3Lanes is the round shape's 3(sin x/x − cos x)/x² at x = π√u, as
// the reference writes it (1 at x = 0), with sin x and cos x those of
// π·y, y = √u (sinCosPiLanes): no reduction of x by π in float64.
//
//lanegen:inline
func sinc3Lanes(u vf) vf {
	y := u.Sqrt()
	s, c := sinCosPiLanes(y)
	x := vk(piC).Mul(y)
	return vk(1).Merge(vk(3).Mul(s.Div(x).Sub(c)).Div(x.Mul(x)), x.Equal(vk(0)))
}

// bendKeepLanes is the forward rows' step after a sub-pixel's position
// on the flat detector: it keeps it. (The arguments are bendLanes',
// whose place it takes on the curved detector.)
//
//lanegen:inline
func bendKeepLanes(r *laneReps, x, y, z vf) (vf, vf, vf) {
	return x, y, z
}

// bendLanes moves a flat position onto the curved detector as the
// reference does (kernel.bend): the lab y and z components, read as arc
// lengths at the distance, become rotations of distance·beam about the
// slow, then the fast axis (rotateAxisLanes).
//
//lanegen:inline
func bendLanes(r *laneReps, x, y, z vf) (vf, vf, vf) {
	dist := vrep(&r.distance)
	v0, v1, v2 := rotateAxisLanes(r, &r.sd, vrep(&r.beamD[0]), vrep(&r.beamD[1]), vrep(&r.beamD[2]), y.Div(dist))
	w0, w1, w2 := rotateAxisLanes(r, &r.fd, v0, v1, v2, z.Div(dist))
	return w0, w1, w2
}

// rotateAxisLanes rotates v by the angle phi (radians) about the unit
// axis a, in rotateAxis' arithmetic (Rodrigues' formula), with cos φ and
// sin φ those of π·(φ/π) (sinCosPiLanes).
//
//lanegen:inline
func rotateAxisLanes(r *laneReps, a *[3]laneVal, v0, v1, v2, phi vf) (vf, vf, vf) {
	s, c := sinCosPiLanes(phi.Mul(vk(invPi)))
	neg := vbits(vrep(&r.negZero))
	a0, a1, a2 := vrep(&a[0]), vrep(&a[1]), vrep(&a[2])
	d := a0.Mul(v0).Add(a1.Mul(v1)).Add(a2.Mul(v2)).Mul(vk(1).Sub(c))
	w0 := a0.Mul(d).Add(v0.Mul(c)).Add(vfloat(vxor(vbits(a2), neg)).Mul(v1).Add(a1.Mul(v2)).Mul(s))
	w1 := a1.Mul(d).Add(v1.Mul(c)).Add(a2.Mul(v0).Sub(a0.Mul(v2)).Mul(s))
	w2 := a2.Mul(d).Add(v2.Mul(c)).Add(vfloat(vxor(vbits(a1), neg)).Mul(v0).Add(a0.Mul(v1)).Mul(s))
	return w0, w1, w2
}

// flatAxis is one component of the position on the flat detector at
// detector coordinate fdet along the fast axis, with that component f of
// the fast axis, s and o those of sdet·(slow axis) and odet·(normal), p
// that of the origin: fdet·f + s + o + p.
//
//lanegen:inline
func flatAxis(fdet, f, s, o, p vf) vf {
	return fdet.Mul(f).Add(s).Add(o).Add(p)
}

// omegaLanes is the solid angle of a sub-pixel at distance r = 1/invR:
// num·(1/R)³ (num = pixel²·close distance: (pixel/R)²·cosine of the
// obliquity), or 1/R² for point pixels.
//
//lanegen:inline
func omegaLanes(invR, num vf, point bool) vf {
	w := invR.Mul(invR)
	if !point {
		w = num.Mul(w.Mul(invR))
	}
	return w
}

// polarizationLanes is the Kahn polarization factor (see Polarization) of
// diffracted direction d for source s (kahn its factor K, zero whether
// K is 0).
//
//lanegen:inline
func polarizationLanes(zero bool, kahn *laneVal, s *laneSrc, dx, dy, dz vf) vf {
	c2 := vrep(&s.inc[0]).Mul(dx).Add(vrep(&s.inc[1]).Mul(dy)).Add(vrep(&s.inc[2]).Mul(dz))
	c2sq := c2.Mul(c2)
	cos2psi := vk(0)
	if !zero {
		e := dx.Mul(vrep(&s.ein[0])).Add(dy.Mul(vrep(&s.ein[1]))).Add(dz.Mul(vrep(&s.ein[2])))
		b := dx.Mul(vrep(&s.bin[0])).Add(dy.Mul(vrep(&s.bin[1]))).Add(dz.Mul(vrep(&s.bin[2])))
		ee, bb := e.Mul(e), b.Mul(b)
		den := ee.Add(bb)
		// ψ = −atan2(0, 0) = 0 in the reference where den is 0.
		cos2psi = ee.Sub(bb).Div(den).Merge(vk(1), den.Greater(vk(0)))
	}
	one := vk(1)
	return vk(0.5).Mul(one.Add(c2sq).Sub(vrep(kahn).Mul(cos2psi).Mul(one.Sub(c2sq))))
}

// cellIndexLanes finds the table cells of the nearest reflections (round
// half down, as the reference's ceil(h−0.5)) and stores their indices in
// ia (0 outside the table); it returns where they are inside it. The
// indices are whole numbers in float64, exact.
//
//lanegen:inline
func cellIndexLanes(r *laneReps, ia *[lanes]int32, h, kk, l vf) vm {
	half := vk(0.5)
	hc, kc, lc := h.Sub(half).Ceil(), kk.Sub(half).Ceil(), l.Sub(half).Ceil()
	hmin, kmin, lmin := vrep(&r.hmin), vrep(&r.kmin), vrep(&r.lmin)
	in := hc.GreaterEqual(hmin).And(hc.LessEqual(vrep(&r.hmax))).
		And(kc.GreaterEqual(kmin)).And(kc.LessEqual(vrep(&r.kmax))).
		And(lc.GreaterEqual(lmin)).And(lc.LessEqual(vrep(&r.lmax)))
	idx := hc.Sub(hmin).Mul(vrep(&r.hstride)).Add(kc.Sub(kmin).Mul(vrep(&r.kstride))).Add(lc.Sub(lmin))
	vint32(idx.Merge(vk(0), in), ia)
	return in
}

// cellFLanes is the nearest-reflection structure factor of a table
// (c.HasHKL; bits its values' bit patterns), the default F outside it.
// ia is scratch space for the cells' indices, which vgather reads.
//
//lanegen:inline
func cellFLanes(r *laneReps, bits []uint64, ia *[lanes]int32, h, kk, l vf) vf {
	in := cellIndexLanes(r, ia, h, kk, l)
	return vfloat(vgatherIn(bits, ia)).Merge(vrep(&r.defaultF), in)
}

// cellFGradLanes is cellFLanes with its derivative by the default F: 1
// outside the table and in its cells without data (miss: the bit
// patterns of 1 there and 0 elsewhere; nil when every cell has data), 0
// in the others.
//
//lanegen:inline
func cellFGradLanes(r *laneReps, bits, miss []uint64, ia *[lanes]int32, h, kk, l vf) (vf, vf) {
	in := cellIndexLanes(r, ia, h, kk, l)
	f := vfloat(vgather(bits, ia)).Merge(vrep(&r.defaultF), in)
	fd := vk(0)
	if miss != nil {
		fd = vfloat(vgather(miss, ia))
	}
	return f, fd.Merge(vk(1), in)
}

// cellFKeepLanes is termsLanes' structure factor: cellFLanes (cube is
// not read: the arguments are interpFLanes', which takes its place in
// termsAxesInterpLanes).
//
//lanegen:inline
func cellFKeepLanes(r *laneReps, bits []uint64, ia *[lanes]int32, cube []float64, h, kk, l vf) vf {
	return cellFLanes(r, bits, ia, h, kk, l)
}

// interpFLanes is the reference's tricubic interpolation of the structure
// factors (bits: the table's bit patterns) at (h, k, l), which the general
// loops call on one lane: 4-point Lagrange polynomials through the values
// at floor(x)−1 … floor(x)+2 (lagrangeLanes, polintLanes), along l, then
// k, then h (its polin3, polin2, polint). A lane whose 4×4×4
// neighbourhood is not inside the table (the reference's test on the
// fractional indices; a NaN index fails it too) has the value NaN: the
// reference switches interpolation off there, and the forward rows leave
// a NaN pixel to the general loops (rowLanes). ia and cube are scratch
// space: the neighbourhoods' first cells, and their 64 values, which
// vgatherCube loads lane by lane (cube[((4i + j)·4 + m)·lanes + lane] for
// cell (h0−1+i, k0−1+j, l0−1+m)).
//
//lanegen:inline
func interpFLanes(r *laneReps, bits []uint64, ia *[lanes]int32, cube []float64, h, kk, l vf) vf {
	in := interpInLanes(r, h, kk, l)
	f := vrep(&r.nan)
	if vany(in) {
		h0, k0, l0 := interpCubeLanes(r, bits, ia, cube, in, h, kk, l)
		f = interpValueLanes(cube, h, kk, l, h0, k0, l0).Merge(f, in)
	}
	return f
}

// interpInLanes is the reference's test that the 4×4×4 neighbourhood of
// (h, k, l) is inside the table, on the fractional indices (false for NaN
// ones).
//
//lanegen:inline
func interpInLanes(r *laneReps, h, kk, l vf) vm {
	two, three := vk(2), vk(3)
	hmin, kmin, lmin := vrep(&r.hmin), vrep(&r.kmin), vrep(&r.lmin)
	return h.Sub(hmin).Add(three).LessEqual(vrep(&r.span[0])).And(h.Sub(two).GreaterEqual(hmin)).
		And(kk.Sub(kmin).Add(three).LessEqual(vrep(&r.span[1]))).And(kk.Sub(two).GreaterEqual(kmin)).
		And(l.Sub(lmin).Add(three).LessEqual(vrep(&r.span[2]))).And(l.Sub(two).GreaterEqual(lmin))
}

// interpCubeLanes loads the 4×4×4 neighbourhoods (of bits, a table's bit
// patterns) of (h, k, l) into cube (vgatherCube's layout) and returns
// floor(h), floor(k), floor(l). Where in is not set the table's first
// cells are loaded (their values are not used).
//
//lanegen:inline
func interpCubeLanes(r *laneReps, bits []uint64, ia *[lanes]int32, cube []float64, in vm, h, kk, l vf) (vf, vf, vf) {
	one := vk(1)
	h0, k0, l0 := h.Floor(), kk.Floor(), l.Floor()
	// The first cell, (h0−1, k0−1, l0−1), as the general loops index the
	// table (whole numbers, exact).
	at := h0.Sub(one).Sub(vrep(&r.hmin)).Mul(vrep(&r.hstride)).Add(k0.Sub(one).Sub(vrep(&r.kmin)).Mul(vrep(&r.kstride))).Add(l0.Sub(one).Sub(vrep(&r.lmin)))
	vint32(at.Merge(vk(0), in), ia)
	vgatherCube(bits, ia, r.hs, r.ks, cube)
	return h0, k0, l0
}

// interpValueLanes is the tricubic interpolation from a neighbourhood in
// cube (interpCubeLanes), floor(h), floor(k), floor(l) in h0, k0, l0: the
// reference's polint along l for each of the 16 rows, along k for each of
// the 4 planes, then along h.
//
//lanegen:inline
func interpValueLanes(cube []float64, h, kk, l, h0, k0, l0 vf) vf {
	ph0, ph1, ph2, ph3 := lagrangeLanes(h, h0)
	pk0, pk1, pk2, pk3 := lagrangeLanes(kk, k0)
	pl0, pl1, pl2, pl3 := lagrangeLanes(l, l0)
	var alongH [4]vf
	for i := 0; i < 4; i++ {
		var alongK [4]vf
		for j := 0; j < 4; j++ {
			c0 := cube[(4*i+j)*4*lanes:]
			c1 := c0[lanes:]
			c2 := c1[lanes:]
			c3 := c2[lanes:]
			alongK[j] = polintLanes(pl0, pl1, pl2, pl3, vloadSlice(c0), vloadSlice(c1), vloadSlice(c2), vloadSlice(c3))
		}
		alongH[i] = polintLanes(pk0, pk1, pk2, pk3, alongK[0], alongK[1], alongK[2], alongK[3])
	}
	return polintLanes(ph0, ph1, ph2, ph3, alongH[0], alongH[1], alongH[2], alongH[3])
}

// interpGradLanes is interpFLanes with its derivatives: by the default F
// (through table cells without data: miss holds the bit patterns of 1
// there and 0 elsewhere, nil when every cell has data) and by h, k, l,
// from the Lagrange weights and their derivatives (lagrangeWeightsLanes),
// summed along l, then over the k and h planes. A lane out of the table
// has the value 0 and no derivatives: the loss rows take the rows before
// the switch-off point's, where such a lane's lattice factor is 0 and
// its term leaves the sums as they were. cube is scratch space for two
// neighbourhoods (vgatherCube's): the values', and miss's.
//
//lanegen:inline
func interpGradLanes(r *laneReps, bits, miss []uint64, ia *[lanes]int32, cube []float64, h, kk, l vf) (vf, vf, vf, vf, vf) {
	mcube := cube[64*lanes:]
	in := interpInLanes(r, h, kk, l)
	zero := vk(0)
	f, fd, dh, dk, dl := zero, zero, zero, zero, zero
	if vany(in) {
		h0, k0, l0 := interpCubeLanes(r, bits, ia, cube, in, h, kk, l)
		f = interpValueLanes(cube, h, kk, l, h0, k0, l0)
		if miss != nil {
			vgatherCube(miss, ia, r.hs, r.ks, mcube)
		}
		var wh, dwh, wk, dwk, wl, dwl [4]vf
		wh[0], wh[1], wh[2], wh[3], dwh[0], dwh[1], dwh[2], dwh[3] = lagrangeWeightsLanes(r, h.Sub(h0))
		wk[0], wk[1], wk[2], wk[3], dwk[0], dwk[1], dwk[2], dwk[3] = lagrangeWeightsLanes(r, kk.Sub(k0))
		wl[0], wl[1], wl[2], wl[3], dwl[0], dwl[1], dwl[2], dwl[3] = lagrangeWeightsLanes(r, l.Sub(l0))
		for i := 0; i < 4; i++ {
			for j := 0; j < 4; j++ {
				at := (4*i + j) * 4 * lanes
				sv, sl, sd := zero, zero, zero
				for m := 0; m < 4; m++ {
					v := vloadSlice(cube[at+m*lanes:])
					sv = sv.Add(wl[m].Mul(v))
					sl = sl.Add(dwl[m].Mul(v))
					if miss != nil {
						sd = sd.Add(wl[m].Mul(vloadSlice(mcube[at+m*lanes:])))
					}
				}
				dh = dh.Add(dwh[i].Mul(wk[j]).Mul(sv))
				dk = dk.Add(wh[i].Mul(dwk[j]).Mul(sv))
				dl = dl.Add(wh[i].Mul(wk[j]).Mul(sl))
				fd = fd.Add(wh[i].Mul(wk[j]).Mul(sd))
			}
		}
		f, fd, dh, dk, dl = f.Merge(zero, in), fd.Merge(zero, in), dh.Merge(zero, in), dk.Merge(zero, in), dl.Merge(zero, in)
	}
	return f, fd, dh, dk, dl
}

// lagrangeWeightsLanes returns the four Lagrange basis polynomials through
// the points −1, 0, 1, 2 at t (the offset of x from floor(x)) and their
// derivatives.
//
//lanegen:inline
func lagrangeWeightsLanes(r *laneReps, t vf) (vf, vf, vf, vf, vf, vf, vf, vf) {
	one, two, half, sixth := vk(1), vk(2), vk(0.5), vk(oneSixth)
	sign := vbits(vrep(&r.negZero))
	a, b, c, d := t.Add(one), t, t.Sub(one), t.Sub(two)
	nb := vfloat(vxor(vbits(b), sign)) // −b
	// (×⅙ for ÷6: these weights give derivatives only, whose bits no
	// reference fixes; 0.95× the interpolating gradient, turns. ×½ is
	// ÷2.)
	w0 := nb.Mul(c).Mul(d).Mul(sixth)
	w1 := a.Mul(c).Mul(d).Mul(half)
	w2 := vfloat(vxor(vbits(a), sign)).Mul(b).Mul(d).Mul(half)
	w3 := a.Mul(b).Mul(c).Mul(sixth)
	d0 := vfloat(vxor(vbits(c.Mul(d).Add(b.Mul(d)).Add(b.Mul(c))), sign)).Mul(sixth)
	d1 := c.Mul(d).Add(a.Mul(d)).Add(a.Mul(c)).Mul(half)
	d2 := vfloat(vxor(vbits(b.Mul(d).Add(a.Mul(d)).Add(a.Mul(b))), sign)).Mul(half)
	d3 := b.Mul(c).Add(a.Mul(c)).Add(a.Mul(b)).Mul(sixth)
	return w0, w1, w2, w3, d0, d1, d2, d3
}

// lagrangeLanes returns the products of x's differences to three of the
// four points x0−1 … x0+2 (x0 = floor(x)), the fourth left out in turn,
// multiplied in the reference's order (its polint multiplies them before
// the value, so they are the same for every polynomial at one x).
//
//lanegen:inline
func lagrangeLanes(x, x0 vf) (vf, vf, vf, vf) {
	one := vk(1)
	d0, d1, d2, d3 := x.Sub(x0.Sub(one)), x.Sub(x0), x.Sub(x0.Add(one)), x.Sub(x0.Add(vk(2)))
	return d1.Mul(d2).Mul(d3), d0.Mul(d2).Mul(d3), d0.Mul(d1).Mul(d3), d0.Mul(d1).Mul(d2)
}

// polintLanes is the 4-point Lagrange interpolating polynomial through
// the values y0 … y3 at four consecutive integers, given x's products p0
// … p3 (lagrangeLanes), term by term as the reference writes it: its
// denominators, products of differences of the points, are exactly −6,
// 2, −2 and 6, and the divisions by ±2 are the multiplications by ±½
// that give the same bits (TestPolint).
//
//lanegen:inline
func polintLanes(p0, p1, p2, p3, y0, y1, y2, y3 vf) vf {
	return p0.Mul(y0).Div(vk(-6)).Add(p1.Mul(y1).Mul(vk(0.5))).Add(p2.Mul(y2).Mul(vk(-0.5))).Add(p3.Mul(y3).Div(vk(6)))
}

// termsLanes adds the terms of one sub-pixel with diffracted direction d
// to sum and returns it, with polar set from the first source where it is
// 0: over sources and orientations, F²·F_latt² with the lattice factor of
// one whole N on all three axes. ia is cellFLanes' scratch. Its
// copies: termsAxesLanes takes N per axis (laneReps.axes),
// termsShapeLanes the spot shapes' F_latt (shapeLatticeLanes) and
// termsAxesDminLanes also leaves out a source's terms beyond -dmin
// (dminMergeLanes in dminKeepLanes' place), termsAxesRulesLanes follows
// the -oversample_* rules (polarRuleDueLanes, ruleLanes; omega and
// capture are the sub-pixel's ω and capture fraction, read there only),
// termsManyLanes and termsAxesManyLanes read the orientations from the
// compact table of more than maxRepOrient (hklManyLanes).
//
//lanegen:inline
//lanegen:variant termsAxesLanes sincg3Lanes=sincgAxesLanes
//lanegen:variant termsShapeLanes sincg3Lanes=shapeLatticeLanes
//lanegen:variant termsAxesDminLanes sincg3Lanes=sincgAxesLanes dminKeepLanes=dminMergeLanes
//lanegen:variant termsAxesRulesLanes sincg3Lanes=sincgAxesLanes polarDueLanes=polarRuleDueLanes ruleKeepLanes=ruleLanes
//lanegen:variant termsAxesInterpLanes sincg3Lanes=sincgAxesLanes cellFKeepLanes=interpFLanes
//lanegen:variant termsManyLanes hklAtLanes=hklManyLanes
//lanegen:variant termsAxesManyLanes sincg3Lanes=sincgAxesLanes hklAtLanes=hklManyLanes
func (k *kernel) termsLanes(r *laneReps, ia *[lanes]int32, cube []float64, sum, dx, dy, dz, polar, omega, capture vf) (vf, vf) {
	c := k.c
	n := k.nn[0]
	zero := vk(0)
	for si := range k.ll.src {
		sr := &k.ll.src[si]
		il := vrep(&sr.il)
		qx, qy, qz := dx.Sub(vrep(&sr.inc[0])).Mul(il), dy.Sub(vrep(&sr.inc[1])).Mul(il), dz.Sub(vrep(&sr.inc[2])).Mul(il)
		sum0, polar0 := sum, polar
		m := polarDueLanes(r, polar, zero)
		if vany(m) {
			var p vf
			if r.kahnZero {
				c2 := vrep(&sr.inc[0]).Mul(dx).Add(vrep(&sr.inc[1]).Mul(dy)).Add(vrep(&sr.inc[2]).Mul(dz))
				p = vk(0.5).Mul(vk(1).Add(c2.Mul(c2)))
			} else {
				p = polarizationLanes(false, &r.kahn, sr, dx, dy, dz)
			}
			polar = p.Merge(polar, m)
		}
		for oi := range k.orient {
			h, kk, l := hklAtLanes(k.ll, oi, qx, qy, qz)
			fl := sincg3Lanes(r, h, kk, l, n)
			fc := vrep(&r.defaultF)
			if c.HasHKL {
				fc = cellFKeepLanes(r, k.fhklBits, ia, cube, h, kk, l)
			}
			s := ruleKeepLanes(r, sum.Add(fc.Mul(fc).Mul(fl).Mul(fl)), polar, omega, capture)
			if !c.Water {
				// A zero lattice factor adds no term (the reference skips it).
				s = sum.Merge(s, fl.Equal(zero))
			}
			sum = s
		}
		sum, polar = dminKeepLanes(r, sum0, polar0, sum, polar, qx, qy, qz)
	}
	return sum, polar
}

// polarDueLanes is where termsLanes computes a source's polarization:
// where it is still 0 (zero: 0 in every lane).
//
//lanegen:inline
func polarDueLanes(r *laneReps, polar, zero vf) vm {
	return polar.Equal(zero)
}

// polarRuleDueLanes is polarDueLanes under -oversample_polar
// (laneReps.polarRule): every source, as the general loops recompute it.
//
//lanegen:inline
func polarRuleDueLanes(r *laneReps, polar, zero vf) vm {
	p := polar
	if r.polarRule {
		p = zero
	}
	return p.Equal(zero)
}

// ruleKeepLanes is termsLanes' step after a term is added to the running
// sum s: without the -oversample_* rules, nothing.
//
//lanegen:inline
func ruleKeepLanes(r *laneReps, s, polar, omega, capture vf) vf {
	return s
}

// ruleLanes is ruleKeepLanes under the -oversample_* rules
// (laneReps.thickRule, polarRule, omegaRule): the running sum, not the
// term, times the capture fraction, the polarization and then ω, as the
// reference (and the general loops) scale it after every term.
//
//lanegen:inline
func ruleLanes(r *laneReps, s, polar, omega, capture vf) vf {
	if r.thickRule {
		s = s.Mul(capture)
	}
	if r.polarRule {
		s = s.Mul(polar)
	}
	if r.omegaRule {
		s = s.Mul(omega)
	}
	return s
}

// dminKeepLanes is termsLanes' step after a source's terms without
// -dmin: it keeps them (sum, polar). (The arguments are
// dminMergeLanes', whose place it takes in termsAxesDminLanes.)
//
//lanegen:inline
func dminKeepLanes(r *laneReps, sum0, polar0, sum, polar, qx, qy, qz vf) (vf, vf) {
	return sum, polar
}

// dminMergeLanes is dminKeepLanes with -dmin: where the source's
// scattering vector q is beyond the resolution limit, sin θ/λ = ½|q| > 0
// and dmin > 1/(2 sin θ/λ), it puts back the sum and the polarization
// from before the source (sum0, polar0), as the general loops skip the
// source there (the polarization then comes from a later source).
//
//lanegen:inline
func dminMergeLanes(r *laneReps, sum0, polar0, sum, polar, qx, qy, qz vf) (vf, vf) {
	skip := dminSkipLanes(r, qx, qy, qz)
	return sum0.Merge(sum, skip), polar0.Merge(polar, skip)
}

// subpixelLanes adds the terms of one sub-pixel to sum: its position from
// fdet (lanes) and the slow-axis and depth parts s, o (repeated), its
// direction, ω and polarization where they are still 0 (every sub-pixel
// and source under their -oversample_* rules: the rules copy). With
// capture (a layer's capture fraction still to be found) it stores the
// obliquity of the direction in par. layer is the sensor layer (the
// capture fraction under -oversample_thick). It returns sum, ω and
// polarization.
//
//lanegen:inline
//lanegen:variant subpixelAxesLanes termsLanes=termsAxesLanes
//lanegen:variant subpixelShapeLanes termsLanes=termsShapeLanes
//lanegen:variant subpixelAxesDminLanes termsLanes=termsAxesDminLanes
//lanegen:variant subpixelAxesCurvedLanes termsLanes=termsAxesLanes bendKeepLanes=bendLanes
//lanegen:variant subpixelAxesRulesLanes termsLanes=termsAxesRulesLanes omegaDueLanes=omegaRuleDueLanes captureKeepLanes=captureRuleLanes
//lanegen:variant subpixelAxesInterpLanes termsLanes=termsAxesInterpLanes
//lanegen:variant subpixelManyLanes termsLanes=termsManyLanes
//lanegen:variant subpixelAxesManyLanes termsLanes=termsAxesManyLanes
func (k *kernel) subpixelLanes(r *laneReps, ia *[lanes]int32, cube []float64, fdet vf, s, o *[3]laneVal, sum, omega, polar vf, capture bool, par []float64, layer int) (vf, vf, vf) {
	c := k.c
	x := flatAxis(fdet, vrep(&r.fd[0]), vrep(&s[0]), vrep(&o[0]), vrep(&r.pix0[0]))
	y := flatAxis(fdet, vrep(&r.fd[1]), vrep(&s[1]), vrep(&o[1]), vrep(&r.pix0[1]))
	z := flatAxis(fdet, vrep(&r.fd[2]), vrep(&s[2]), vrep(&o[2]), vrep(&r.pix0[2]))
	x, y, z = bendKeepLanes(r, x, y, z)
	invR := vk(1).Div(x.Mul(x).Add(y.Mul(y)).Add(z.Mul(z)).Sqrt())
	dx, dy, dz := x.Mul(invR), y.Mul(invR), z.Mul(invR)
	m := omegaDueLanes(r, omega)
	if vany(m) {
		omega = omegaLanes(invR, vrep(&r.omegaNum), c.PointPixel).Merge(omega, m)
	}
	if capture {
		// The cosine of the oblique path through the layer.
		obliquityLanes(r, dx, dy, dz).StoreSlice(par)
	}
	cf := captureKeepLanes(k, layer, dx, dy, dz)
	sum, polar = k.termsLanes(r, ia, cube, sum, dx, dy, dz, polar, omega, cf)
	return sum, omega, polar
}

// obliquityLanes is d·(detector normal), the cosine of the diffracted
// ray's oblique path through a sensor layer (kernel.captureFrac's par).
//
//lanegen:inline
func obliquityLanes(r *laneReps, dx, dy, dz vf) vf {
	return dx.Mul(vrep(&r.od[0])).Add(dy.Mul(vrep(&r.od[1]))).Add(dz.Mul(vrep(&r.od[2])))
}

// captureKeepLanes is subpixelLanes' capture fraction for the terms: none
// without -oversample_thick (the arguments are captureRuleLanes').
//
//lanegen:inline
func captureKeepLanes(k *kernel, layer int, dx, dy, dz vf) vf {
	return vk(1)
}

// captureRuleLanes is captureKeepLanes under -oversample_thick
// (laneReps.thickRule): the sub-pixel's capture fraction in its layer,
// from its obliquity, by kernel.captureFrac on each lane (its e^x is
// math.Exp's, which the lanes do not have bit for bit).
//
//lanegen:inline
func captureRuleLanes(k *kernel, layer int, dx, dy, dz vf) vf {
	r := k.lr
	cf := vk(1)
	if r.thickRule {
		var buf [lanes]float64
		obliquityLanes(r, dx, dy, dz).StoreSlice(buf[:])
		k.captureRow(layer, buf[:])
		cf = vloadSlice(buf[:])
	}
	return cf
}

// omegaDueLanes is where subpixelLanes computes ω: where it is still 0.
//
//lanegen:inline
func omegaDueLanes(r *laneReps, omega vf) vm {
	return omega.Equal(vk(0))
}

// omegaRuleDueLanes is omegaDueLanes under -oversample_omega
// (laneReps.omegaRule): every sub-pixel.
//
//lanegen:inline
func omegaRuleDueLanes(r *laneReps, omega vf) vm {
	w := omega
	if r.omegaRule {
		w = vk(0)
	}
	return w.Equal(vk(0))
}

// pixelsLanes computes the pixels of a row for the structures
// kernel.simple covers (its copies pixelsAxesLanes, pixelsShapeLanes,
// pixelsAxesDminLanes, pixelsAxesCurvedLanes and pixelsAxesRulesLanes
// those of termsLanes' and subpixelLanes' copies: kernel.forwardLanes),
// in the general loop's order: sensor layers,
// sub-pixels, sources, orientations; ω and polarization from the first
// sub-pixel where they are not 0. The row's pixels are given by
// float64(f·Oversample) in rb.f[:n] (repeated past the last to a whole
// number of lanes), its slow-axis parts in rb.sdet. Without a sensor
// thickness it stores each pixel's value scale·S·P·ω in rb.v and its
// part of the solid-angle sum in rb.w (omegaTerms); with one, scale·S
// (rb.v), ω (rb.w), the polarization (rb.polar) and the obliquity of the
// last layer's first sub-pixel, where its capture fraction is taken
// (rb.par): the capture fraction multiplies only the pixel's value, and
// scalar code forms it and the value afterwards (laneValue). Its copy
// pixelsAxesLanes takes N per axis (laneReps.axes): a function of its
// own, so that this one compiles as it would alone (with both in one
// function the AVX-512 forward at 1024² was 7–15 % slower).
//
//lanegen:variant pixelsAxesLanes termsLanes=termsAxesLanes subpixelLanes=subpixelAxesLanes
//lanegen:variant pixelsShapeLanes termsLanes=termsShapeLanes subpixelLanes=subpixelShapeLanes
//lanegen:variant pixelsAxesDminLanes termsLanes=termsAxesDminLanes subpixelLanes=subpixelAxesDminLanes
//lanegen:variant pixelsAxesCurvedLanes termsLanes=termsAxesLanes subpixelLanes=subpixelAxesCurvedLanes bendKeepLanes=bendLanes
//lanegen:variant pixelsAxesRulesLanes termsLanes=termsAxesRulesLanes subpixelLanes=subpixelAxesRulesLanes pixelValueLanes=pixelValueRulesLanes omegaAddLanes=omegaAddRulesLanes omegaTotalLanes=omegaTotalRulesLanes noCaptureLanes=noCaptureRulesLanes
//lanegen:variant pixelsAxesInterpLanes termsLanes=termsAxesInterpLanes subpixelLanes=subpixelAxesInterpLanes
//lanegen:variant pixelsManyLanes termsLanes=termsManyLanes subpixelLanes=subpixelManyLanes
//lanegen:variant pixelsAxesManyLanes termsLanes=termsAxesManyLanes subpixelLanes=subpixelAxesManyLanes
func (k *kernel) pixelsLanes(rb *rowBuf, n int) {
	c := k.c
	r := k.lr
	os := c.Oversample
	var ia [lanes]int32
	cube := rb.cube // (interpFLanes' scratch)
	sub, half := vrep(&r.sub), vrep(&r.half)
	last := c.ThickSteps - 1
	count := vrep(&r.count)
	s0, o0 := &rb.sdet[0], &k.ll.odet[0]
	noCapture := noCaptureLanes(c)
	if os == 1 && last == 0 && noCapture {
		// One sub-pixel in one layer without a capture fraction (the
		// standard cases): the geometry of geoChunk pixels ahead of their
		// terms, so that each pixel's square root and division do not
		// hold up the next pixel's start (chiefly for the one-lane copy).
		// The row's ω terms are added to the running solid-angle sum here,
		// one pixel after another in the first lane of om (vaddseq),
		// where the additions overlap the terms' work; those of a last,
		// partial vector are left to the caller (rb.omDone).
		g := rb.geo
		om := vloadSlice(rb.om[:])
		for c0 := 0; c0 < n; c0 += geoChunk {
			c1 := min(n, c0+geoChunk)
			for p0 := c0; p0 < c1; p0 += lanes {
				q := p0 - c0
				fdet := sub.Mul(vloadSlice(rb.f[p0:])).Add(half) // (f + 0: the same bits)
				x := flatAxis(fdet, vrep(&r.fd[0]), vrep(&s0[0]), vrep(&o0[0]), vrep(&r.pix0[0]))
				y := flatAxis(fdet, vrep(&r.fd[1]), vrep(&s0[1]), vrep(&o0[1]), vrep(&r.pix0[1]))
				z := flatAxis(fdet, vrep(&r.fd[2]), vrep(&s0[2]), vrep(&o0[2]), vrep(&r.pix0[2]))
				x, y, z = bendKeepLanes(r, x, y, z)
				invR := vk(1).Div(x.Mul(x).Add(y.Mul(y)).Add(z.Mul(z)).Sqrt())
				x.Mul(invR).StoreSlice(g[0][q:])
				y.Mul(invR).StoreSlice(g[1][q:])
				z.Mul(invR).StoreSlice(g[2][q:])
				omegaLanes(invR, vrep(&r.omegaNum), c.PointPixel).StoreSlice(g[3][q:])
			}
			for p0 := c0; p0 < c1; p0 += lanes {
				q := p0 - c0
				sum, polar := vrep(&r.ibg), vk(0)
				if c.NoPolar {
					polar = vk(1)
				}
				omega := vloadSlice(g[3][q:])
				sum, polar = k.termsLanes(r, &ia, cube, sum, vloadSlice(g[0][q:]), vloadSlice(g[1][q:]), vloadSlice(g[2][q:]), polar, omega, vk(1))
				pixelValueLanes(r, sum, polar, omega).StoreSlice(rb.v[p0:])
				// (Under -oversample_omega the pixel's one ω is its ω sum:
				// count is 1.)
				w := count.Mul(omega)
				w.StoreSlice(rb.w[p0:])
				if p0+lanes <= n {
					om = vaddseq(om, w)
					rb.omDone = p0 + lanes
				}
			}
		}
		om.StoreSlice(rb.om[:])
		vzeroupper()
		return
	}
	for p0 := 0; p0 < n; p0 += lanes {
		f0 := vloadSlice(rb.f[p0:])
		sum, omega, polar := vrep(&r.ibg), vk(0), vk(0)
		wsum := vk(0) // the ω values computed (omegaAddLanes)
		if c.NoPolar {
			polar = vk(1)
		}
		if os == 1 && last == 0 {
			// One sub-pixel (f + 0: the same bits) in one layer.
			sum, omega, polar = k.subpixelLanes(r, &ia, cube, sub.Mul(f0).Add(half), s0, o0, sum, omega, polar, c.Thick, rb.par[p0:], 0)
			wsum = omegaAddLanes(r, wsum, omega)
		} else {
			for t := 0; t <= last; t++ {
				for subS := 0; subS < os; subS++ {
					for subF := 0; subF < os; subF++ {
						fdet := sub.Mul(f0.Add(vrep(&k.ll.subF[subF]))).Add(half)
						capture := c.Thick && t == last && subS == 0 && subF == 0
						sum, omega, polar = k.subpixelLanes(r, &ia, cube, fdet, &rb.sdet[subS], &k.ll.odet[t], sum, omega, polar, capture, rb.par[p0:], t)
						wsum = omegaAddLanes(r, wsum, omega)
					}
				}
			}
		}
		if c.Thick {
			vrep(&r.scale).Mul(sum).StoreSlice(rb.v[p0:])
			omegaTotalLanes(r, omega, wsum).StoreSlice(rb.w[p0:])
			polar.StoreSlice(rb.polar[p0:])
		} else {
			// The capture fraction is 1 (×1 changes no bits).
			pixelValueLanes(r, sum, polar, omega).StoreSlice(rb.v[p0:])
			omegaTotalLanes(r, count.Mul(omega), wsum).StoreSlice(rb.w[p0:])
		}
	}
	vzeroupper()
}

// noCaptureLanes reports whether the pixels have no capture fraction: no
// sensor thickness.
//
//lanegen:inline
func noCaptureLanes(c *Config) bool {
	return !c.Thick
}

// noCaptureRulesLanes is noCaptureLanes under the -oversample_* rules:
// under -oversample_thick even a sensor without thickness has one, 0
// (captureRuleLanes).
//
//lanegen:inline
func noCaptureRulesLanes(c *Config) bool {
	return !c.Thick && !c.OversampleThick
}

// pixelValueLanes is a pixel's value scale·S·P·ω without a sensor
// thickness (the capture fraction 1).
//
//lanegen:inline
func pixelValueLanes(r *laneReps, sum, polar, omega vf) vf {
	return vrep(&r.scale).Mul(sum).Mul(polar).Mul(omega)
}

// pixelValueRulesLanes is pixelValueLanes under the -oversample_polar and
// -oversample_omega rules: P and ω are in the sum already where their rule
// is set.
//
//lanegen:inline
func pixelValueRulesLanes(r *laneReps, sum, polar, omega vf) vf {
	v := vrep(&r.scale).Mul(sum)
	if !r.polarRule {
		v = v.Mul(polar)
	}
	if !r.omegaRule {
		v = v.Mul(omega)
	}
	return v
}

// omegaAddLanes is pixelsLanes' step after a sub-pixel: the sum of the ω
// values computed, which only -oversample_omega needs (omegaAddRulesLanes),
// is not kept.
//
//lanegen:inline
func omegaAddLanes(r *laneReps, wsum, omega vf) vf {
	return wsum
}

// omegaAddRulesLanes is omegaAddLanes under -oversample_omega
// (laneReps.omegaRule), where every sub-pixel computes ω: the sum of them,
// in the general loops' order.
//
//lanegen:inline
func omegaAddRulesLanes(r *laneReps, wsum, omega vf) vf {
	if r.omegaRule {
		wsum = wsum.Add(omega)
	}
	return wsum
}

// omegaTotalLanes is what pixelsLanes stores in rowBuf.w: w (ω, or the
// pixel's ω terms count·ω without a sensor thickness; omegaTerms).
//
//lanegen:inline
func omegaTotalLanes(r *laneReps, w, wsum vf) vf {
	return w
}

// omegaTotalRulesLanes is omegaTotalLanes under the rules: under
// -oversample_omega the sum of the ω values computed (omegaTerms), which
// the pixel's value does not take again (pixelValueRulesLanes,
// laneValue).
//
//lanegen:inline
func omegaTotalRulesLanes(r *laneReps, w, wsum vf) vf {
	if r.omegaRule {
		w = wsum
	}
	return w
}

// sincgAxesLanes is the parallelepiped's F_latt where N is not one
// whole number up to maxChebyshevN on all three axes (laneReps.axes):
// each axis' sincg (sincgAxisLanes) multiplied in, in the general loops'
// order (kernel.lattice, kernel.squareWhole: an axis with N ≤ 1 is a
// factor 1, which changes no bits). (n is not read: the arguments are
// sincg3Lanes', whose place it takes.)
//
//lanegen:inline
func sincgAxesLanes(r *laneReps, h, kk, l vf, n int) vf {
	sa := sincgAxisLanes(r, 0, h)
	sb := sincgAxisLanes(r, 1, kk)
	sc := sincgAxisLanes(r, 2, l)
	return sa.Mul(sb).Mul(sc)
}

// sincgAxisLanes is sincg(x, N) on axis i as the general loops evaluate
// it (Sincg): 1 for N ≤ 1, U_{N−1}(cos πx) for whole N up to
// maxChebyshevN (sincgLanes), else the continuation on the offset d
// from the nearest integer (sincgRatioLanes).
//
//lanegen:inline
func sincgAxisLanes(r *laneReps, i int, x vf) vf {
	s := vk(1)
	if r.nmode[i] == nChebyshev {
		s = sincgLanes(x, r.nn[i])
	} else if r.nmode[i] == nRatio {
		s = sincgRatioLanes(x, vrep(&r.nv[i]))
	}
	return s
}

// sincgLanes is U_{n−1}(cos πx) for one index x and whole 1 < n ≤
// maxChebyshevN: sincg3Lanes' factor. The general loops' sincgWhole is
// its one-lane copy.
//
//lanegen:inline
func sincgLanes(x vf, n int) vf {
	magic := vk(roundMagic)
	t := x.Add(magic)
	c2 := vk(2).Mul(flipOdd(cosPiLanes(x.Sub(t.Sub(magic))), t))
	// U_0 = 1, U_1 = 2c, U_{j+1} = 2c·U_j − U_{j−1}, two steps at a
	// time, the two registers taking turns: before each pair u0 = U_{j−2},
	// u1 = U_{j−1}.
	u0, u1 := vk(1), c2
	j := 2
	for ; j+1 < n; j += 2 {
		u0 = c2.Mul(u1).Sub(u0)
		u1 = c2.Mul(u0).Sub(u1)
	}
	if j < n {
		u1 = c2.Mul(u1).Sub(u0)
	}
	return u1
}

// sincgRatioLanes is Sincg's continuation to N not whole (1 < N < 2²⁰,
// |x| < 2⁵¹): sin(Nπd)/sin(πd) on the offset d of x from its nearest
// integer, N where d = 0. sin(Nπd) is reduced by the integer nearest to
// Nd, its sign flipped where that is odd (as sinCosPi does; its rounding
// of ties away from zero would give the same bits: sin is odd). The
// general loops' Sincg is its one-lane copy, and sincgGrad's for N not
// whole that of sincgRatioGradLanes.
//
//lanegen:inline
func sincgRatioLanes(x, nv vf) vf {
	magic := vk(roundMagic)
	t := x.Add(magic)
	d := x.Sub(t.Sub(magic))
	y := nv.Mul(d)
	u := y.Add(magic)
	sn := flipOdd(sinPiLanes(y.Sub(u.Sub(magic))), u)
	return nv.Merge(sn.Div(sinPiLanes(d)), d.Equal(vk(0)))
}

// sincgGradAxesLanes is sincgGrad3Lanes where laneReps.axes: per axis
// (sincgGradAxisLanes) sincg and its derivatives by x and by N. (n is
// not read: the arguments are sincgGrad3Lanes', whose place it takes.)
//
//lanegen:inline
func sincgGradAxesLanes(r *laneReps, h, kk, l vf, n int) (vf, vf, vf, vf, vf, vf, vf, vf, vf) {
	sa, ha, na := sincgGradAxisLanes(r, 0, h)
	sb, hb, nb := sincgGradAxisLanes(r, 1, kk)
	sc, hc, nc := sincgGradAxisLanes(r, 2, l)
	return sa, sb, sc, ha, hb, hc, na, nb, nc
}

// sincgGradAxisLanes is sincgAxisLanes with its derivatives by x and by
// N: 1, 0, 0 for N ≤ 1 (the general walk's squareGrad), sincgGradLanes
// for whole N, sincgRatioGradLanes else.
//
//lanegen:inline
func sincgGradAxisLanes(r *laneReps, i int, x vf) (vf, vf, vf) {
	s, dx, dn := vk(1), vk(0), vk(0)
	if r.nmode[i] == nChebyshev {
		s, dx, dn = sincgGradLanes(r, x, r.nn[i])
	} else if r.nmode[i] == nRatio {
		s, dx, dn = sincgRatioGradLanes(x, vrep(&r.nv[i]))
	}
	return s, dx, dn
}

// sincgRatioGradLanes is sincgRatioLanes with its derivatives by x and
// by N, in the general walk's formulas (sincgGrad for N not whole):
// π·(N·cos Nπd·s − sin Nπd·cos πd)/s² (where |Nπd| < 1e-3, whose
// numerator cancels, π·sincgSeriesLanes) and πd·cos Nπd/s, s = sin πd; 0
// and 1 where d = 0. As sincgGradLanes', they are left over −π and π.
//
//lanegen:inline
func sincgRatioGradLanes(x, nv vf) (vf, vf, vf) {
	magic := vk(roundMagic)
	t := x.Add(magic)
	d := x.Sub(t.Sub(magic))
	sn, cn := sinCosPiLanes(nv.Mul(d))
	s1, c1 := sinPiLanes(d), cosPiLanes(d)
	pi := vk(piC)
	at := d.Equal(vk(0))
	s := nv.Merge(sn.Div(s1), at)
	// Near the peak (|Nπd| < 1e-3) the closed form cancels: the series.
	pd := pi.Mul(d)
	npd := nv.Mul(pd)
	dx := sn.Mul(c1).Sub(nv.Mul(cn).Mul(s1)).Div(s1.Mul(s1))
	dx = vk(-1).Mul(sincgSeriesLanes(nv, pd)).Merge(dx, npd.Mul(npd).Less(vk(seriesMax2)))
	dx = vk(0).Merge(dx, at)
	dn := vk(invPi).Merge(d.Mul(cn).Div(s1), at)
	return s, dx, dn
}

// sincgSeriesLanes is d/dx of sin(nx)/sin(x) near x = 0 (n > 1, |nx| <
// 1e-3: the next term is (nx)⁴ smaller), n·(−(n²−1)·x/3 +
// (3n⁴ − 10n² + 7)·x³/90).
//
//lanegen:inline
func sincgSeriesLanes(n, x vf) vf {
	n2 := n.Mul(n)
	a := vk(0).Sub(n2.Sub(vk(1))).Mul(x).Div(vk(3))
	b := vk(3).Mul(n2).Mul(n2).Sub(vk(10).Mul(n2)).Add(vk(7)).Mul(x).Mul(x).Mul(x).Div(vk(90))
	return n.Mul(a.Add(b))
}

// sincgGrad3Lanes returns sincg(x, n) for x = h, k, l (whole 1 < n ≤
// maxChebyshevN, |x| < 2⁵¹), their derivatives by x and by n (n taken as
// continuous) without their factors −π and π (the loss rows' sums take
// those: termUnits), from c = cos πx and s = sin πx:
//
//	sincg = U_{n−1}(c),  ∂/∂x = −π·s·U′_{n−1}(c),  ∂/∂n = πd·T_n(c)/s,
//
// (d = x − m, m the nearest integer: the derivative by n of Sincg's
// continuation to non-whole n; at d = 0 its limit), with T_n = c·U_{n−1} −
// U_{n−2}, U′_{n−1} = Σ 2(j+1)·U_j over j = n − 2, n − 4, … ≥ 0 (the U_j
// the recurrence for U_{n−1} passes, no recurrence of its own) and |s| =
// √(−v(2 + v)), v = cos πd − 1 from cos πd's polynomial without its
// constant: s to a few ulp at every d, where √((1 − c)(1 + c)) loses c's
// rounding error near the peaks. One formula for every x: no branch, no
// cancellation (against 256-bit arithmetic ∂/∂x is within ~5e-15 for
// n = 5, ~5e-13 for n up to 32, relative to |∂/∂x| + n; TestSincgGrad3). The
// three are evaluated one after another (sincgGradLanes): side by side,
// their live values outnumbered the 15 vector registers Go 1.26
// allocates, and the AVX-512 kernel spilled twice as many of them to the
// stack; the processor overlaps the three chains by itself.
//
//lanegen:inline
func sincgGrad3Lanes(r *laneReps, h, kk, l vf, n int) (vf, vf, vf, vf, vf, vf, vf, vf, vf) {
	sa, ha, na := sincgGradLanes(r, h, n)
	sb, hb, nb := sincgGradLanes(r, kk, n)
	sc, hc, nc := sincgGradLanes(r, l, n)
	return sa, sb, sc, ha, hb, hc, na, nb, nc
}

// sincgGradLanes is sincgGrad3Lanes for one index x: sincg(x, n) and its
// derivatives by x and by n.
//
//lanegen:inline
func sincgGradLanes(r *laneReps, x vf, n int) (vf, vf, vf) {
	magic := vk(roundMagic)
	t := x.Add(magic)
	d := x.Sub(t.Sub(magic))
	f := vshl(vbits(t), 63) // the parity of the nearest integer, as a sign bit
	cr, v := cosPiVLanes(d) // cr in [0, 1], v = cr − 1
	// s = sin πx: √(1 − cr²) = √(−v·(2 + v)), to a few ulp for |d| ≳
	// 1e-154 (v from the polynomial without its constant; below, d² is
	// subnormal, and where it underflows s is 0), with the sign of d,
	// flipped for odd m (where s is 0, −0).
	sign, one := vbits(vrep(&r.negZero)), vk(1)
	s := vfloat(vor(vbits(v.Mul(vk(-2).Sub(v)).Sqrt()), vand(vxor(vbits(d), f), sign)))
	c := vfloat(vxor(vbits(cr), f)) // cos πx
	c2 := vk(2).Mul(c)
	// U_{j+1} = 2c·U_j − U_{j−1} two steps at a time, the two registers
	// taking turns, and U′_{n−1} = Σ 2(j+1)·U_j over j = n − 2, n − 4, …
	// ≥ 0: the U_j that u1 holds before each pair. For odd n the
	// recurrence starts at U_0 = 1, U_1 = 2c; for even n a step earlier, at
	// U_{−1} = 0, U_0 = 1 (the same operations after U_1 = 2c·1 − 0, exact).
	u0, u1 := one, c2
	j := 1
	if n&1 == 0 {
		u0, u1, j = vk(0), one, 0
	}
	p := vrep(&r.uw[j]).Mul(u1)
	for ; j+2 < n-1; j += 2 {
		u0 = c2.Mul(u1).Sub(u0)
		u1 = c2.Mul(u0).Sub(u1)
		p = p.Add(vrep(&r.uw[j+2]).Mul(u1))
	}
	u0, u1 = u1, c2.Mul(u1).Sub(u0)
	tn := c.Mul(u1).Sub(u0) // T_n
	dx := s.Mul(p)          // ∂/∂x over −π
	// ∂/∂n over π, d·T_n/s; where s is 0 (at an integer, or within
	// ~1e-162 of one) its limit, the sign of the peak over π: ±1/π with
	// the sign of U_{n−1}(±1) = n·(±1)^(n−1), + for odd n, (−1)^m for
	// even n (c is ±1 exactly there).
	peak := vk(invPi)
	if n&1 == 0 {
		peak = vfloat(vxor(vbits(peak), f))
	}
	dn := d.Mul(tn).Div(s).Merge(peak, s.NotEqual(vk(0)))
	return u1, dx, dn
}

// hklAtLanes is hklLanes for orientation oi of the lanes' repeated table
// (termsLanes; its copies for more than maxRepOrient orientations take
// hklManyLanes).
//
//lanegen:inline
func hklAtLanes(ll *laneLists, oi int, qx, qy, qz vf) (vf, vf, vf) {
	h, kk, l := hklLanes(&ll.orient[oi], qx, qy, qz)
	return h, kk, l
}

// hklManyLanes is hklAtLanes from the compact table of more than
// maxRepOrient orientations (laneLists.many): each value broadcast to
// the lanes (vbcp) instead of loaded repeated. (For the standard cases
// the forward took 2–4 % longer this way.)
//
//lanegen:inline
func hklManyLanes(ll *laneLists, oi int, qx, qy, qz vf) (vf, vf, vf) {
	o := &ll.many[oi]
	h := vbcp((*[2]float64)(o[0:])).Mul(qx).Add(vbcp((*[2]float64)(o[1:])).Mul(qy)).Add(vbcp((*[2]float64)(o[2:])).Mul(qz))
	kk := vbcp((*[2]float64)(o[3:])).Mul(qx).Add(vbcp((*[2]float64)(o[4:])).Mul(qy)).Add(vbcp((*[2]float64)(o[5:])).Mul(qz))
	l := vbcp((*[2]float64)(o[6:])).Mul(qx).Add(vbcp((*[2]float64)(o[7:])).Mul(qy)).Add(vbcp((*[2]float64)(o[8:])).Mul(qz))
	return h, kk, l
}

// hklLanes is the fractional Miller indices a·q, b·q, c·q of the
// orientation o (a, b, c in a row) for scattering vector q.
//
//lanegen:inline
func hklLanes(o *[9]laneVal, qx, qy, qz vf) (vf, vf, vf) {
	h := vrep(&o[0]).Mul(qx).Add(vrep(&o[1]).Mul(qy)).Add(vrep(&o[2]).Mul(qz))
	kk := vrep(&o[3]).Mul(qx).Add(vrep(&o[4]).Mul(qy)).Add(vrep(&o[5]).Mul(qz))
	l := vrep(&o[6]).Mul(qx).Add(vrep(&o[7]).Mul(qy)).Add(vrep(&o[8]).Mul(qz))
	return h, kk, l
}

// gradTermLanes adds one orientation's term at indices (h, k, l) to a
// vector of pixels' sums in termsGradLanes (S, its derivatives by the
// default F and by Na, Nb, Nc, and σ), given the lattice factors sa, sb,
// sc with their derivatives by the indices (ha, hb, hc) and by N (nda,
// ndb, ndc), and e = (o_i·inc)/λ; it stores the term's ∂S/∂(h, k, l) at
// hkl[at], hkl[at+stride] and hkl[at+2·stride].
//
// Its copy gradTermCrystalLanes (Config.CrystalOnly) adds neither σ nor
// the derivatives by N, gradTermNoNLanes (Config.NoN) not the derivatives
// by N, gradTermNoSigmaLanes (Config.NoGeometry) not σ.
//
//lanegen:inline
//lanegen:variant gradTermInterpLanes gradFLanes=gradFInterpLanes fGradKeepLanes=fGradAddLanes
//lanegen:variant gradTermCrystalLanes gradSigmaLanes=keepSigmaLanes gradNLanes=keepNLanes
//lanegen:variant gradTermNoNLanes gradNLanes=keepNLanes
//lanegen:variant gradTermNoSigmaLanes gradSigmaLanes=keepSigmaLanes
func gradTermLanes(k *kernel, ia *[lanes]int32, cube []float64, e *[3]laneVal, h, kk, l, sa, sb, sc, ha, hb, hc, nda, ndb, ndc, s, def, sig, sna, snb, snc vf, hkl []float64, at, stride int) (vf, vf, vf, vf, vf, vf) {
	fl := sa.Mul(sb).Mul(sc)
	ffl, s1, def1, fc, fh, fk, fkl := gradFLanes(k, ia, cube, h, kk, l, fl, s, def)
	// ∂(F²·F_latt²)/∂(h, k, l) and /∂N: 2F²·F_latt times the other
	// two lattice factors times sincg's derivatives (and, where F
	// depends on h, k, l, 2F·F_latt² times F's derivatives), in the
	// units of termUnits: the factor 2 and sincgGradLanes' −π and π are
	// left to the sums.
	xa, xb, xc := ffl.Mul(sb.Mul(sc)), ffl.Mul(sa.Mul(sc)), ffl.Mul(sa.Mul(sb))
	hbar, kbar, lbar := xa.Mul(ha), xb.Mul(hb), xc.Mul(hc)
	hbar, kbar, lbar = fGradKeepLanes(fc, fl, fh, fk, fkl, hbar, kbar, lbar)
	sig1 := gradSigmaLanes(e, h, kk, l, hbar, kbar, lbar, sig)
	na1, nb1, nc1 := gradNLanes(xa, xb, xc, nda, ndb, ndc, sna, snb, snc)
	s1 = gradStoreLanes(k, fl, hbar, kbar, lbar, s, s1, hkl, at, stride)
	return s1, def1, sig1, na1, nb1, nc1
}

// gradNLanes adds a term's derivatives by Na, Nb, Nc (x·nd: the term's
// ∂/∂(lattice factor) times the factor's by N) to their sums.
//
//lanegen:inline
func gradNLanes(xa, xb, xc, nda, ndb, ndc, sna, snb, snc vf) (vf, vf, vf) {
	return sna.Add(xa.Mul(nda)), snb.Add(xb.Mul(ndb)), snc.Add(xc.Mul(ndc))
}

// keepNLanes is gradNLanes leaving the sums as they are
// (gradTermCrystalLanes).
//
//lanegen:inline
func keepNLanes(xa, xb, xc, nda, ndb, ndc, sna, snb, snc vf) (vf, vf, vf) {
	return sna, snb, snc
}

// keepSigmaLanes is gradSigmaLanes leaving σ as it is
// (gradTermCrystalLanes).
//
//lanegen:inline
func keepSigmaLanes(e *[3]laneVal, h, kk, l, hbar, kbar, lbar, sig vf) vf {
	return sig
}

// gradFLanes is the part of a term in termsGradLanes (gradTermLanes,
// gradTermShapeLanes) up to its lattice factor's derivatives: F and its
// derivative by the default F, F²·F_latt, S with the term added, in
// Render's order, and half of ∂S/∂(default F) (k.perDef; its sums'
// unit is 2: termUnits).
//
// It also returns F and its derivatives by h, k, l: 0
// for the nearest reflection (cellFGradKeepLanes); its copy
// gradFInterpLanes interpolates (interpGradLanes; cube is its scratch).
//
//lanegen:inline
//lanegen:variant gradFInterpLanes cellFGradKeepLanes=interpGradLanes
func gradFLanes(k *kernel, ia *[lanes]int32, cube []float64, h, kk, l, fl, s, def vf) (vf, vf, vf, vf, vf, vf, vf) {
	r := k.lr
	zero := vk(0)
	fc, fd, fh, fk, fkl := vrep(&r.defaultF), vk(1), zero, zero, zero
	if k.c.HasHKL {
		fc, fd, fh, fk, fkl = cellFGradKeepLanes(r, k.fhklBits, k.missBits, ia, cube, h, kk, l)
	}
	ffl := fc.Mul(fc).Mul(fl)
	s1 := s.Add(ffl.Mul(fl)) // Render's (F·F·F_latt)·F_latt
	def1 := def
	if k.perDef {
		def1 = def.Add(fc.Mul(fl).Mul(fl).Mul(fd)) // (half of it: termUnits)
	}
	return ffl, s1, def1, fc, fh, fk, fkl
}

// cellFGradKeepLanes is gradFLanes' structure factor: cellFGradLanes, and
// 0 for its derivatives by h, k, l. (cube is not read: the arguments are
// interpGradLanes', which takes its place in gradFInterpLanes.)
//
//lanegen:inline
func cellFGradKeepLanes(r *laneReps, bits, miss []uint64, ia *[lanes]int32, cube []float64, h, kk, l vf) (vf, vf, vf, vf, vf) {
	f, fd := cellFGradLanes(r, bits, miss, ia, h, kk, l)
	zero := vk(0)
	return f, fd, zero, zero, zero
}

// fGradKeepLanes is gradTermLanes' ∂S/∂(h, k, l) where F does not depend
// on h, k, l: as they are (the arguments are fGradAddLanes'; the usual
// kernels compile as they did without this step).
//
//lanegen:inline
func fGradKeepLanes(fc, flatt, fh, fk, fl, hbar, kbar, lbar vf) (vf, vf, vf) {
	return hbar, kbar, lbar
}

// fGradAddLanes is fGradKeepLanes for an interpolated F (fc, its
// derivatives fh, fk, fl): ∂S/∂(h, k, l) plus 2F·F_latt² (flatt: F_latt)
// times F's derivatives, in the units of ∂S/∂(h, k, l) (−2π: termUnits).
//
//lanegen:inline
func fGradAddLanes(fc, flatt, fh, fk, fl, hbar, kbar, lbar vf) (vf, vf, vf) {
	g := vk(minusInvPi).Mul(fc).Mul(flatt).Mul(flatt)
	return hbar.Add(g.Mul(fh)), kbar.Add(g.Mul(fk)), lbar.Add(g.Mul(fl))
}

// gradSigmaLanes is σ with a term's part added, given its ∂S/∂(h, k,
// l) = (hbar, kbar, lbar) and e = (o_i·inc)/λ (termsGradLanes).
//
//lanegen:inline
func gradSigmaLanes(e *[3]laneVal, h, kk, l, hbar, kbar, lbar, sig vf) vf {
	return sig.Add(hbar.Mul(h.Add(vrep(&e[0]))).Add(kbar.Mul(kk.Add(vrep(&e[1])))).Add(lbar.Mul(l.Add(vrep(&e[2])))))
}

// gradStoreLanes ends a term in termsGradLanes: it returns S with the
// term (s1), or without it (s) where F_latt is 0, and stores ∂S/∂(h, k, l)
// (in the units of termUnits) at hkl[at], hkl[at+stride] and
// hkl[at+2·stride].
//
// A zero lattice factor adds no term (the reference skips it) and no
// derivative: every product then has a factor 0 and finite others (F, the
// lattice factors and their derivatives are finite), so it adds ±0, which
// leaves each derivative's sum as it was (they start at +0, so none is
// −0). S starts at the water background, which can be −0 (-water -0, a
// negative fluence): it is kept as it was. With a water background the
// reference keeps the term, and so does this.
//
//lanegen:inline
func gradStoreLanes(k *kernel, fl, hbar, kbar, lbar, s, s1 vf, hkl []float64, at, stride int) vf {
	if !k.c.Water {
		s1 = s.Merge(s1, fl.Equal(vk(0)))
	}
	hbar.StoreSlice(hkl[at:])
	kbar.StoreSlice(hkl[at+stride:])
	lbar.StoreSlice(hkl[at+2*stride:])
	return s1
}

// termsGradLanes adds, for source si and the first np pixels of t (their
// diffracted directions in t.d; a whole number of lanes are read and
// written), the terms of the structures kernel.simple covers to the
// pixels' sums: S, its derivatives by Na, Nb, Nc and (k.perDef) by the
// default F, and σ (those in the units of termUnits, as the ∂S/∂(h, k, l)
// it writes). It writes ∂S/∂(h, k, l) of each orientation o and
// pixel p to hkl[(3o + i)·stride + p] (i = 0, 1, 2 for h, k, l; the
// derivatives by its a, b, c vectors are these times q). σ is
// Σ ∂S/∂(h, k, l)·(h, k, l)_d over the orientations, the indices of the
// diffracted direction, (o_i·d)/λ = h_i + (o_i·inc)/λ: the q-path's
// ∂S/∂d·d. It stores |d − inc|² in ds. oinc is scratch space for
// (o_i·inc)/λ (one per orientation). Each pixel's terms are added in
// Render's order. Its copy termsGradAxesLanes takes N per axis
// (laneReps.axes): a function of its own, so that this one compiles as
// it would alone (as a second loop here, the 10-domain gradient was
// 3–5 % slower). termsGradCrystalLanes and termsGradAxesCrystalLanes
// (Config.CrystalOnly) leave σ and the derivatives by N at 0,
// termsGradNoNLanes and termsGradAxesNoNLanes (Config.NoN) the
// derivatives by N (without them the compiler leaves out sincg's
// derivative by N as well), termsGradNoSigmaLanes and
// termsGradAxesNoSigmaLanes (Config.NoGeometry) σ.
//
//lanegen:variant termsGradAxesLanes sincgGrad3Lanes=sincgGradAxesLanes
//lanegen:variant termsGradAxesDminLanes sincgGrad3Lanes=sincgGradAxesLanes noSkipLanes=dminSkipLanes keepLatticeLanes=dminLatticeLanes
//lanegen:variant termsGradAxesInterpLanes sincgGrad3Lanes=sincgGradAxesLanes gradTermLanes=gradTermInterpLanes
//lanegen:variant termsGradCrystalLanes gradTermLanes=gradTermCrystalLanes
//lanegen:variant termsGradAxesCrystalLanes sincgGrad3Lanes=sincgGradAxesLanes gradTermLanes=gradTermCrystalLanes
//lanegen:variant termsGradNoNLanes gradTermLanes=gradTermNoNLanes
//lanegen:variant termsGradAxesNoNLanes sincgGrad3Lanes=sincgGradAxesLanes gradTermLanes=gradTermNoNLanes
//lanegen:variant termsGradNoSigmaLanes gradTermLanes=gradTermNoSigmaLanes
//lanegen:variant termsGradAxesNoSigmaLanes sincgGrad3Lanes=sincgGradAxesLanes gradTermLanes=gradTermNoSigmaLanes
func (k *kernel) termsGradLanes(si int, oinc [][3]laneVal, t *termLanes, cube, ds, hkl []float64, stride, np int) {
	r := k.lr
	n := k.nn[0]
	var ia [lanes]int32
	k.orientIncLanes(si, oinc)
	fresh := t.fresh
	t.fresh = false
	for p0 := 0; p0 < np; p0 += lanes {
		qx, qy, qz, s, def, sig, sna, snb, snc := gradStartLanes(r, &k.ll.src[si], t, ds, p0, fresh)
		skip := noSkipLanes(r, qx, qy, qz)
		for oi := range k.ll.orient {
			h, kk, l := hklLanes(&k.ll.orient[oi], qx, qy, qz)
			sa, sb, sc, ha, hb, hc, nda, ndb, ndc := sincgGrad3Lanes(r, h, kk, l, n)
			sa = keepLatticeLanes(skip, sa)
			s, def, sig, sna, snb, snc = gradTermLanes(k, &ia, cube, &oinc[oi], h, kk, l, sa, sb, sc, ha, hb, hc, nda, ndb, ndc, s, def, sig, sna, snb, snc, hkl, 3*oi*stride+p0, stride)
		}
		gradEndLanes(t, p0, s, def, sig, sna, snb, snc)
	}
	vzeroupper()
}

// noSkipLanes is termsGradLanes' mask of the pixels whose terms of a
// source are left out: none (the arguments are dminSkipLanes').
//
//lanegen:inline
func noSkipLanes(r *laneReps, qx, qy, qz vf) vm {
	return vk(0).NotEqual(vk(0))
}

// dminSkipLanes is noSkipLanes under -dmin: where the scattering vector q
// is beyond the resolution limit, sin θ/λ = ½|q| > 0 and dmin > 1/(2 sin
// θ/λ) (the general loops' test; dminMergeLanes' and dminPolar's).
//
//lanegen:inline
func dminSkipLanes(r *laneReps, qx, qy, qz vf) vm {
	stol := vk(0.5).Mul(qx.Mul(qx).Add(qy.Mul(qy)).Add(qz.Mul(qz)).Sqrt())
	return stol.Greater(vk(0)).And(vrep(&r.dmin).Greater(vk(0.5).Div(stol)))
}

// keepLatticeLanes is termsGradLanes' step after a term's lattice
// factors: it keeps sincg(h) (dminLatticeLanes' arguments).
//
//lanegen:inline
func keepLatticeLanes(skip vm, sa vf) vf {
	return sa
}

// dminLatticeLanes is keepLatticeLanes under -dmin: sincg(h) is 0 where
// the source's terms are left out, so that F_latt is, and the term adds
// nothing to S and ±0 to its derivatives (gradTermLanes; with a water
// background, which keeps such terms, S + 0: S's value).
//
//lanegen:inline
func dminLatticeLanes(skip vm, sa vf) vf {
	return vk(0).Merge(sa, skip)
}

// sinc3GradLanes is sinc3Lanes(u) and its derivative by u: with
// x = π√u, (3·sin x/x² − 3·s/x)·π²/(2x) (sin x from the π-scaled
// polynomial) from x = 1 on, below it π²·Σ j·a_j·x^(2j−2) to j = 8
// (a_j sinc3's coefficients in x²; the next term is below 1e-16 of the
// sum there), where the closed form cancels (a relative error ~1e-16/x⁴).
//
//lanegen:inline
func sinc3GradLanes(u vf) (vf, vf) {
	s := sinc3Lanes(u)
	y := u.Sqrt()
	sn, cs := sinCosPiLanes(y)
	_ = cs
	x := vk(piC).Mul(y)
	x2 := x.Mul(x)
	p := vk(sinc3B8).Mul(x2).Add(vk(sinc3B7)).Mul(x2).Add(vk(sinc3B6)).Mul(x2).Add(vk(sinc3B5))
	p = p.Mul(x2).Add(vk(sinc3B4)).Mul(x2).Add(vk(sinc3B3)).Mul(x2).Add(vk(sinc3B2)).Mul(x2).Add(vk(sinc3B1))
	sx := vk(3).Mul(sn).Div(x2).Sub(vk(3).Mul(s).Div(x))
	du := sx.Mul(vk(halfPiSq)).Div(x)
	return s, vk(piSq).Mul(p).Merge(du, x.Less(vk(sinc3SeriesMax)))
}

// shapeGradLanes is shapeLatticeLanes (the same bits) with the
// derivatives the loss rows need (latticeGrad's formulas): F_latt; its
// derivatives by h, k, l, by Na, Nb, Nc and by the fudge; and, for the
// Gaussian, w = ∂F_latt/∂r²·2(Na·Nb·Nc)², the offset v along the
// reciprocal axes and the offset (Δh, Δk, Δl) from the nearest
// reflection, whose products w·v_j·Δ_i are the derivatives by the
// reciprocal axes' components (a*, b*, c*; 0 for the other shapes).
//
//lanegen:inline
func shapeGradLanes(r *laneReps, h, kk, l vf) (vf, vf, vf, vf, vf, vf, vf, vf, vf, vf, vf, vf, vf, vf, vf) {
	dh, dk, dl := shapeOffsetLanes(h, kk, l)
	nabc, fudge, two, zero := vrep(&r.nabc), vrep(&r.fudge), vk(2), vk(0)
	na, nb, nc := vrep(&r.nv[0]), vrep(&r.nv[1]), vrep(&r.nv[2])
	oa, ob, oc := nb.Mul(nc), na.Mul(nc), na.Mul(nb) // ∂(Na·Nb·Nc)/∂N
	fl, g0, g1, g2, n0, n1, n2, dfu, w := zero, zero, zero, zero, zero, zero, zero, zero, zero
	v0, v1, v2 := zero, zero, zero
	if r.shape == Round {
		hr := roundRadiusLanes(r, dh, dk, dl)
		s, su := sinc3GradLanes(hr.Mul(fudge))
		fl = nabc.Mul(vk(roundScale)).Mul(s)
		flu := nabc.Mul(vk(roundScale)).Mul(su) // ∂F_latt/∂u, u = hr·fudge
		ff := flu.Mul(fudge).Mul(two)
		g0, g1, g2 = ff.Mul(dh).Mul(na).Mul(na), ff.Mul(dk).Mul(nb).Mul(nb), ff.Mul(dl).Mul(nc).Mul(nc)
		ss := vk(roundScale).Mul(s)
		n0 = oa.Mul(ss).Add(ff.Mul(dh).Mul(dh).Mul(na))
		n1 = ob.Mul(ss).Add(ff.Mul(dk).Mul(dk).Mul(nb))
		n2 = oc.Mul(ss).Add(ff.Mul(dl).Mul(dl).Mul(nc))
		dfu = flu.Mul(hr)
	} else {
		var r2 vf
		v0, v1, v2, r2 = gaussRadiusLanes(r, dh, dk, dl)
		if r.shape == Gauss {
			e := expLanes(gaussArgLanes(r, r2))
			fl = nabc.Mul(e)
			fr := zero.Sub(fl).Mul(fudge).Div(vk(gaussWidth)) // ∂F_latt/∂r²
			w = fr.Mul(two).Mul(nabc).Mul(nabc)
			g0 = w.Mul(v0.Mul(vrep(&r.astar[0])).Add(v1.Mul(vrep(&r.astar[1]))).Add(v2.Mul(vrep(&r.astar[2]))))
			g1 = w.Mul(v0.Mul(vrep(&r.bstar[0])).Add(v1.Mul(vrep(&r.bstar[1]))).Add(v2.Mul(vrep(&r.bstar[2]))))
			g2 = w.Mul(v0.Mul(vrep(&r.cstar[0])).Add(v1.Mul(vrep(&r.cstar[1]))).Add(v2.Mul(vrep(&r.cstar[2]))))
			t := fr.Mul(v0.Mul(v0).Add(v1.Mul(v1)).Add(v2.Mul(v2))).Mul(two).Mul(nabc)
			n0, n1, n2 = oa.Mul(e).Add(t.Mul(oa)), ob.Mul(e).Add(t.Mul(ob)), oc.Mul(e).Add(t.Mul(oc))
			dfu = zero.Sub(fl).Mul(r2).Div(vk(gaussWidth))
		} else {
			// Inside the cap ∂F_latt/∂N is ∂(Na·Nb·Nc)/∂N; outside the term's
			// factor 2F²·F_latt is 0 (gradTermShapeLanes).
			fl = nabc.Merge(zero, r2.Mul(fudge).Less(vk(tophatR2)))
			n0, n1, n2 = oa, ob, oc
		}
	}
	return fl, g0, g1, g2, n0, n1, n2, dfu, w, v0, v1, v2, dh, dk, dl
}

// gradTermShapeLanes is gradTermLanes for the spot shapes, given
// shapeGradLanes' values: it adds the term to S and its derivatives (by
// the default F, half of it as gradFLanes adds it, Na, Nb, Nc, the
// fudge, and σ), and for the Gaussian
// ∂S/∂(a*, b*, c*) to sh's sums of pixels p0…; it stores the term's
// ∂S/∂(h, k, l) at hkl[at], hkl[at+stride] and hkl[at+2·stride].
//
//lanegen:inline
func gradTermShapeLanes(k *kernel, ia *[lanes]int32, e *[3]laneVal, sh *shapeSums, p0 int, h, kk, l, fl, g0, g1, g2, n0, n1, n2, dfu, w, v0, v1, v2, dh, dk, dl, s, def, sig, sna, snb, snc, sfu vf, hkl []float64, at, stride int) (vf, vf, vf, vf, vf, vf, vf) {
	r := k.lr
	two := vk(2)
	ffl, s1, def1, _, _, _, _ := gradFLanes(k, ia, []float64(nil), h, kk, l, fl, s, def)
	tfl := two.Mul(ffl) // ∂(F²·F_latt²)/∂F_latt
	hbar, kbar, lbar := tfl.Mul(g0), tfl.Mul(g1), tfl.Mul(g2)
	sig1 := gradSigmaLanes(e, h, kk, l, hbar, kbar, lbar, sig)
	na1, nb1, nc1 := sna.Add(tfl.Mul(n0)), snb.Add(tfl.Mul(n1)), snc.Add(tfl.Mul(n2))
	sfu1 := sfu.Add(tfl.Mul(dfu))
	if r.shape == Gauss {
		x := tfl.Mul(w)
		a0, a1, a2 := x.Mul(dh), x.Mul(dk), x.Mul(dl)
		vloadSlice(sh.st[0][p0:]).Add(a0.Mul(v0)).StoreSlice(sh.st[0][p0:])
		vloadSlice(sh.st[1][p0:]).Add(a0.Mul(v1)).StoreSlice(sh.st[1][p0:])
		vloadSlice(sh.st[2][p0:]).Add(a0.Mul(v2)).StoreSlice(sh.st[2][p0:])
		vloadSlice(sh.st[3][p0:]).Add(a1.Mul(v0)).StoreSlice(sh.st[3][p0:])
		vloadSlice(sh.st[4][p0:]).Add(a1.Mul(v1)).StoreSlice(sh.st[4][p0:])
		vloadSlice(sh.st[5][p0:]).Add(a1.Mul(v2)).StoreSlice(sh.st[5][p0:])
		vloadSlice(sh.st[6][p0:]).Add(a2.Mul(v0)).StoreSlice(sh.st[6][p0:])
		vloadSlice(sh.st[7][p0:]).Add(a2.Mul(v1)).StoreSlice(sh.st[7][p0:])
		vloadSlice(sh.st[8][p0:]).Add(a2.Mul(v2)).StoreSlice(sh.st[8][p0:])
	}
	// (A zero F_latt: tfl is 0, as in gradStoreLanes.)
	s1 = gradStoreLanes(k, fl, hbar, kbar, lbar, s, s1, hkl, at, stride)
	return s1, def1, sig1, na1, nb1, nc1, sfu1
}

// termsGradShapeLanes is termsGradLanes for the spot shapes
// (shapeGradLanes, gradTermShapeLanes), with the fudge's and the
// reciprocal axes' per-pixel sums in sh.
func (k *kernel) termsGradShapeLanes(si int, oinc [][3]laneVal, t *termLanes, sh *shapeSums, ds, hkl []float64, stride, np int) {
	r := k.lr
	var ia [lanes]int32
	k.orientIncLanes(si, oinc)
	fresh := t.fresh
	t.fresh = false
	for p0 := 0; p0 < np; p0 += lanes {
		qx, qy, qz, s, def, sig, sna, snb, snc := gradStartLanes(r, &k.ll.src[si], t, ds, p0, fresh)
		sfu := vloadSlice(sh.fu[p0:])
		for oi := range k.ll.orient {
			h, kk, l := hklLanes(&k.ll.orient[oi], qx, qy, qz)
			fl, g0, g1, g2, n0, n1, n2, dfu, w, v0, v1, v2, dh, dk, dl := shapeGradLanes(r, h, kk, l)
			s, def, sig, sna, snb, snc, sfu = gradTermShapeLanes(k, &ia, &oinc[oi], sh, p0, h, kk, l, fl, g0, g1, g2, n0, n1, n2, dfu, w, v0, v1, v2, dh, dk, dl, s, def, sig, sna, snb, snc, sfu, hkl, 3*oi*stride+p0, stride)
		}
		gradEndLanes(t, p0, s, def, sig, sna, snb, snc)
		sfu.StoreSlice(sh.fu[p0:])
	}
	vzeroupper()
}

// shapeBackLanes stores in out the partial sums (slots each, pixel p in
// slot p mod slots, as lossBackLanes) over the first np pixels of a
// loss-row chunk of g·scale·P·ω (g its ∂L/∂I, P and ω in fr: the first
// sub-pixel's) times sh's sums: the fudge's, then for the Gaussian the
// nine of a*, b*, c*.
func (k *kernel) shapeBackLanes(fr *lossFront, sh *shapeSums, g []float64, np int, out []float64) {
	r := k.lr
	scale := vrep(&r.scale)
	const sl = min(lanes, slots)
	const m = slots / sl
	ns := k.shapeSumCount()
	for i := 0; i < ns; i++ {
		x := sh.fu[:]
		if i > 0 {
			x = sh.st[i-1][:]
		}
		var acc [m]vs
		for p := 0; p < np; p += lanes {
			q := p / lanes % m
			sb := adjSLanes(vloadSlice(g[p:]), scale, vloadSlice(fr.p[p:]), vloadSlice(fr.omega[p:]))
			acc[q] = vslotadd(acc[q], sb.Mul(vloadSlice(x[p:])))
		}
		for q := 0; q < m; q++ {
			acc[q].StoreSlice(out[i*slots+q*sl:])
		}
	}
	vzeroupper()
}

// orientIncLanes stores (o_i·inc)/λ of source si for every orientation
// in oinc (termsGradLanes).
func (k *kernel) orientIncLanes(si int, oinc [][3]laneVal) {
	sr := &k.ll.src[si]
	il := vrep(&sr.il)
	for oi := range k.ll.orient {
		e := &oinc[oi]
		a, b, c := hklLanes(&k.ll.orient[oi], vrep(&sr.inc[0]), vrep(&sr.inc[1]), vrep(&sr.inc[2]))
		a.Mul(il).StoreSlice(e[0][:])
		b.Mul(il).StoreSlice(e[1][:])
		c.Mul(il).StoreSlice(e[2][:])
	}
	vzeroupper()
}

// gradStartLanes begins a vector of pixels in termsGradLanes: from
// their directions in t.d it stores |d − inc|² in ds and returns the
// scattering vector for source sr and the sums the terms add to (S, ∂S/∂
// the default F, σ, ∂S/∂Na, Nb, Nc), loaded from t, or where fresh (the
// sums not started: termLanes) S at the water background and the others
// 0.
//
//lanegen:inline
func gradStartLanes(r *laneReps, sr *laneSrc, t *termLanes, ds []float64, p0 int, fresh bool) (vf, vf, vf, vf, vf, vf, vf, vf, vf) {
	il := vrep(&sr.il)
	x, y, z := vloadSlice(t.d[0][p0:]).Sub(vrep(&sr.inc[0])), vloadSlice(t.d[1][p0:]).Sub(vrep(&sr.inc[1])), vloadSlice(t.d[2][p0:]).Sub(vrep(&sr.inc[2]))
	x.Mul(x).Add(y.Mul(y)).Add(z.Mul(z)).StoreSlice(ds[p0:])
	zero := vk(0)
	s, def, sig, na, nb, nc := vrep(&r.ibg), zero, zero, zero, zero, zero
	if !fresh {
		s, def, sig = vloadSlice(t.s[p0:]), vloadSlice(t.def[p0:]), vloadSlice(t.sig[p0:])
		na, nb, nc = vloadSlice(t.na[p0:]), vloadSlice(t.nb[p0:]), vloadSlice(t.nc[p0:])
	}
	return x.Mul(il), y.Mul(il), z.Mul(il), s, def, sig, na, nb, nc
}

// gradEndLanes ends a vector of pixels in termsGradLanes (and
// termsGradShapeLanes): it stores the sums gradStartLanes loaded.
//
//lanegen:inline
func gradEndLanes(t *termLanes, p0 int, s, def, sig, sna, snb, snc vf) {
	s.StoreSlice(t.s[p0:])
	def.StoreSlice(t.def[p0:])
	sig.StoreSlice(t.sig[p0:])
	sna.StoreSlice(t.na[p0:])
	snb.StoreSlice(t.nb[p0:])
	snc.StoreSlice(t.nc[p0:])
}

// lossGeomLanes computes the geometry of lanes pixels from p0 of a
// loss-row chunk's sub-pixel (lossFrontLanes, lossFrontSubLanes): from
// float64(f·Oversample + subF) in fr.f and the slow-axis and depth parts
// sdet and o of the sub-pixel row it stores fdet, 1/R, the diffracted
// direction (t.d) and, with a sensor thickness, its obliquity
// d·(detector normal) (fr.par), and returns d and 1/R.
//
//lanegen:inline
func lossGeomLanes(k *kernel, sdet, o *[3]laneVal, fr *lossFront, t *termLanes, p0 int) (vf, vf, vf, vf) {
	r := k.lr
	fdet := vrep(&r.sub).Mul(vloadSlice(fr.f[p0:])).Add(vrep(&r.half))
	x := flatAxis(fdet, vrep(&r.fd[0]), vrep(&sdet[0]), vrep(&o[0]), vrep(&r.pix0[0]))
	y := flatAxis(fdet, vrep(&r.fd[1]), vrep(&sdet[1]), vrep(&o[1]), vrep(&r.pix0[1]))
	z := flatAxis(fdet, vrep(&r.fd[2]), vrep(&sdet[2]), vrep(&o[2]), vrep(&r.pix0[2]))
	invR := vk(1).Div(x.Mul(x).Add(y.Mul(y)).Add(z.Mul(z)).Sqrt())
	dx, dy, dz := x.Mul(invR), y.Mul(invR), z.Mul(invR)
	fdet.StoreSlice(fr.fdet[p0:])
	invR.StoreSlice(fr.invR[p0:])
	dx.StoreSlice(t.d[0][p0:])
	dy.StoreSlice(t.d[1][p0:])
	dz.StoreSlice(t.d[2][p0:])
	if k.c.Thick {
		obliquityLanes(r, dx, dy, dz).StoreSlice(fr.par[p0:])
	}
	return dx, dy, dz, invR
}

// lossFrontLanes computes what a loss-row chunk needs of its first np
// pixels' first sub-pixel before their terms (a whole number of lanes is
// computed): the geometry (lossGeomLanes), ω, and the polarization with
// what its derivatives need (polarizationCoef's values, in pol: 0 none
// (-nopolar), 1 the K = 0 shortcut with an E-B plane, 2 in general, 3
// the factor alone: Config.CrystalOnly, whose adjoints do not take its
// derivatives; polarizationLanes, the forward rows' bits), and it marks
// the pixels' sums in t fresh (the terms start them: termLanes). Those of
// ω and the polarization are the pixels' (the first sub-pixel's, as the
// forward rows take them); lossFrontSubLanes is the later sub-pixels'.
//
// The polarization is a loop of its own, from the directions the first
// stored: in one loop, each vector's chain of dependent operations (a
// square root and a division for 1/R, then the polarization's two) was
// longer than the processor could overlap with the next vector's, and
// the front took 1.3× as long (perf samples, cubic 1024² gradient, Go
// 1.27 build).
func (k *kernel) lossFrontLanes(sdet, o *[3]laneVal, fr *lossFront, t *termLanes, np, pol int) {
	c := k.c
	r := k.lr
	sr := &k.ll.src[0]
	one, half, zero := vk(1), vk(0.5), vk(0)
	for p0 := 0; p0 < np; p0 += lanes {
		_, _, _, invR := lossGeomLanes(k, sdet, o, fr, t, p0)
		omegaLanes(invR, vrep(&r.omegaNum), c.PointPixel).StoreSlice(fr.omega[p0:])
	}
	t.fresh = true // (the terms start the sums)
	for p0 := 0; p0 < np; p0 += lanes {
		dx, dy, dz := vloadSlice(t.d[0][p0:]), vloadSlice(t.d[1][p0:]), vloadSlice(t.d[2][p0:])
		switch pol {
		case 3:
			polarizationLanes(r.kahnZero, &r.kahn, sr, dx, dy, dz).StoreSlice(fr.p[p0:])
		case 0:
			one.StoreSlice(fr.p[p0:])
			zero.StoreSlice(fr.dkahn[p0:])
			zero.StoreSlice(fr.alpha[p0:])
			zero.StoreSlice(fr.dd[p0:])
		case 1:
			// At K = 0 ∂P/∂K = −½·cos2ψ·sin²2θ = −½·(e² − b²) = ½·(1 − c2²) − e²
			// (d unit; inc, ein, bin orthonormal, so e² + b² = 1 − c2²).
			c2 := vrep(&sr.inc[0]).Mul(dx).Add(vrep(&sr.inc[1]).Mul(dy)).Add(vrep(&sr.inc[2]).Mul(dz))
			e := dx.Mul(vrep(&sr.ein[0])).Add(dy.Mul(vrep(&sr.ein[1]))).Add(dz.Mul(vrep(&sr.ein[2])))
			c2sq := c2.Mul(c2)
			half.Mul(one.Add(c2sq)).StoreSlice(fr.p[p0:])
			half.Mul(one.Sub(c2sq)).Sub(e.Mul(e)).StoreSlice(fr.dkahn[p0:])
			c2.StoreSlice(fr.alpha[p0:])
			c2sq.StoreSlice(fr.dd[p0:])
		default:
			p, dkahn, alpha, beta, gamma, dd := polarizationCoefLanes(r, sr, dx, dy, dz)
			p.StoreSlice(fr.p[p0:])
			dkahn.StoreSlice(fr.dkahn[p0:])
			alpha.StoreSlice(fr.alpha[p0:])
			beta.StoreSlice(fr.beta[p0:])
			gamma.StoreSlice(fr.gamma[p0:])
			dd.StoreSlice(fr.dd[p0:])
		}
	}
	vzeroupper()
}

// lossValueLanes stores the intensities scale·S·P·ω of a loss-row chunk's
// first np pixels (a whole number of lanes; without a sensor thickness)
// in g: Render's grouping, the same bits as its scalar form.
func (k *kernel) lossValueLanes(fr *lossFront, t *termLanes, g []float64, np int) {
	scale := vrep(&k.lr.scale)
	for p0 := 0; p0 < np; p0 += lanes {
		scale.Mul(vloadSlice(t.s[p0:])).Mul(vloadSlice(fr.p[p0:])).Mul(vloadSlice(fr.omega[p0:])).StoreSlice(g[p0:])
	}
	vzeroupper()
}

// lossFrontSubLanes is lossFrontLanes for a sub-pixel after a pixel's
// first: its geometry (lossGeomLanes), and σ (t.sig) started at 0; its
// terms add to the sums the previous sub-pixel's left.
func (k *kernel) lossFrontSubLanes(sdet, o *[3]laneVal, fr *lossFront, t *termLanes, np int) {
	zero := vk(0)
	for p0 := 0; p0 < np; p0 += lanes {
		dx, dy, dz, invR := lossGeomLanes(k, sdet, o, fr, t, p0)
		_, _, _, _ = dx, dy, dz, invR
		zero.StoreSlice(t.sig[p0:])
	}
	vzeroupper()
}

// polarizationCoefLanes returns the Kahn polarization factor P for source
// s and diffracted direction d (Polarization's bits) with its
// derivatives: by the Kahn factor, and by d as the coefficients α, β, γ
// of ∂P/∂d = α·inc + β·ein + γ·bin (the source's fixed directions), and
// (∂P/∂d)·d. cos2ψ is formed also at K = 0, where Polarization skips it:
// the derivative by K needs it.
//
//lanegen:inline
func polarizationCoefLanes(r *laneReps, s *laneSrc, dx, dy, dz vf) (vf, vf, vf, vf, vf, vf) {
	one, zero, kahn := vk(1), vk(0), vrep(&r.kahn)
	c2 := vrep(&s.inc[0]).Mul(dx).Add(vrep(&s.inc[1]).Mul(dy)).Add(vrep(&s.inc[2]).Mul(dz))
	c2sq := c2.Mul(c2)
	s2sq := one.Sub(c2sq)
	e := dx.Mul(vrep(&s.ein[0])).Add(dy.Mul(vrep(&s.ein[1]))).Add(dz.Mul(vrep(&s.ein[2])))
	b := dx.Mul(vrep(&s.bin[0])).Add(dy.Mul(vrep(&s.bin[1]))).Add(dz.Mul(vrep(&s.bin[2])))
	ee, bb := e.Mul(e), b.Mul(b)
	den := ee.Add(bb)
	plane := den.Greater(zero)
	inv := one.Div(den)
	cos2psi := ee.Sub(bb).Div(den).Merge(one, plane) // (polarizationLanes' bits)
	de, db := zero, zero
	if !r.kahnZero {
		de = vk(4).Mul(e).Mul(b).Mul(b).Mul(inv).Mul(inv).Merge(zero, plane)
		db = vk(-4).Mul(b).Mul(e).Mul(e).Mul(inv).Mul(inv).Merge(zero, plane)
	}
	p := vk(0.5).Mul(one.Add(c2sq).Sub(kahn.Mul(cos2psi).Mul(s2sq)))
	dkahn := vk(-0.5).Mul(cos2psi).Mul(s2sq)
	dcos := vk(-0.5).Mul(kahn).Mul(s2sq)
	alpha, beta, gamma := c2.Mul(one.Add(kahn.Mul(cos2psi))), dcos.Mul(de), dcos.Mul(db)
	return p, dkahn, alpha, beta, gamma, alpha.Mul(c2).Add(beta.Mul(e)).Add(gamma.Mul(b))
}

// lossBackLanes is the backward pass of a loss-row chunk (see
// lossRow) over its first np pixels, whose ∂L/∂I is in g (0 for the
// pixels the loss leaves out; g is read, and must be 0, up to a whole
// number of maxLanes): it sums what the adjoints need over the pixels
// (each sum in slots partial sums, pixel p in slot p mod slots, in
// pixel order: the same sums for any number of lanes) and stores the
// partial sums in out, slots per sum: the lossTotals sums (lossBackSums
// of them, in lossTotals' order) and then, for each source and
// orientation j, the row sums of u·|d − inc|², u/R and fdet·u/R (u its
// ∂L/∂(h, k, l) in the units of termUnits, 3 each), from ∂S/∂(h, k, l)
// in hkl (as termsGradLanes writes it) and |d − inc|² in dsq (rowChunk
// per source). Every term
// has g for a factor, so a pixel with g = 0 adds ±0 to every sum, which
// leaves it as it was (the sums start at +0, and a sum of them is never
// −0), as long as its other factors are finite: they are for finite
// inputs of ordinary range (S, F, the lattice factors and their
// derivatives, 1/R, the polarization's), and a pixel where one is not
// has a loss derivative that is not 0 (a NaN or an infinite intensity
// gives one), which makes the gradient not finite anyway. The lanes past
// np that are read (up to a whole vector) hold the values
// of an earlier pixel of the same gradient run or zeros (the records
// are each run's own: reduce's gradWork), so the same holds for them.
// (Selecting the pixels with g ≠ 0 instead, a blend per term, cost the
// gradient ~5 % at cubic 256² and 1024² and 1–3 % with 10 mosaic domains
// in the AVX-512 build, 8–11 % in the default one.) With several
// sub-pixels it is the first sub-pixel's, whose ω and polarization are
// the pixel's (and its t holds the pixel's sums S, ∂S/∂N and ∂S/∂F);
// lossBackSubLanes is the later sub-pixels'.
func (k *kernel) lossBackLanes(fr *lossFront, t *termLanes, g, dsq, hkl []float64, stride, np, pol int, out []float64) {
	lossRowSumsLanes(k, fr, g, dsq, hkl, stride, np, out)
	// The rest, in loops whose running sums fit in registers, each a
	// function of its own (rowSumsLanes).
	ga := (*[rowChunk]float64)(g)
	np = wholeVectorsLanes(np)
	k.backFactorsLanes(fr, t, ga, np, pol, out)
	k.backGeometryLanes(fr, t, ga, np, out)
	vzeroupper()
}

// backFactorsLanes stores lossBackLanes' sums of the factors' adjoints
// (np a whole number of vectors): ∂L/∂P = g·scale·S·ω, ∂L/∂ω =
// g·scale·S·P. Without the detector's and the beam's parameters
// (noGeometry; pol is then 3, the polarization's factor alone) the sums
// of N (not without N: noN), the default F (perDef), ∂L/∂(scale·S) and
// ∂L/∂I_bg alone; the others are 0.
func (k *kernel) backFactorsLanes(fr *lossFront, t *termLanes, g *[rowChunk]float64, np, pol int, out []float64) {
	r := k.lr
	scale := vrep(&r.scale)
	const sl = min(lanes, slots)
	const m = slots / sl
	withN := !k.c.noN()
	var na, nb, nc, def, ibg, flu, kahn, pa, fpa [m]vs
	for p := 0; p+lanes <= np; p += lanes {
		q := p / lanes % m
		gp := vload((*[lanes]float64)(g[p:]))
		s, pp, om := vload((*[lanes]float64)(t.s[p:])), vload((*[lanes]float64)(fr.p[p:])), vload((*[lanes]float64)(fr.omega[p:]))
		sb, fl := scaleTermsLanes(gp, scale, s, pp, om)
		if withN {
			na[q], nb[q], nc[q] = vslotadd(na[q], sb.Mul(vload((*[lanes]float64)(t.na[p:])))), vslotadd(nb[q], sb.Mul(vload((*[lanes]float64)(t.nb[p:])))), vslotadd(nc[q], sb.Mul(vload((*[lanes]float64)(t.nc[p:]))))
		}
		if k.perDef {
			def[q] = vslotadd(def[q], sb.Mul(vload((*[lanes]float64)(t.def[p:]))))
		}
		ibg[q] = vslotadd(ibg[q], sb)
		flu[q] = vslotadd(flu[q], fl)
		if pol == 1 || pol == 2 {
			pbar := gp.Mul(scale).Mul(s).Mul(om)
			kahn[q] = vslotadd(kahn[q], pbar.Mul(vload((*[lanes]float64)(fr.dkahn[p:]))))
			x := pbar.Mul(vload((*[lanes]float64)(fr.invR[p:]))).Mul(vload((*[lanes]float64)(fr.alpha[p:])))
			pa[q], fpa[q] = vslotadd(pa[q], x), vslotadd(fpa[q], vload((*[lanes]float64)(fr.fdet[p:])).Mul(x))
		}
	}
	var pb, fpb, pc, fpc [m]vs
	if pol == 2 { // (β, γ from polarizationCoefLanes)
		for p := 0; p+lanes <= np; p += lanes {
			q := p / lanes % m
			gp := vload((*[lanes]float64)(g[p:]))
			pr := gp.Mul(scale).Mul(vload((*[lanes]float64)(t.s[p:]))).Mul(vload((*[lanes]float64)(fr.omega[p:]))).Mul(vload((*[lanes]float64)(fr.invR[p:])))
			fdet := vload((*[lanes]float64)(fr.fdet[p:]))
			y, z := pr.Mul(vload((*[lanes]float64)(fr.beta[p:]))), pr.Mul(vload((*[lanes]float64)(fr.gamma[p:])))
			pb[q], fpb[q] = vslotadd(pb[q], y), vslotadd(fpb[q], fdet.Mul(y))
			pc[q], fpc[q] = vslotadd(pc[q], z), vslotadd(fpc[q], fdet.Mul(z))
		}
	}
	for q := 0; q < m; q++ {
		i := q * sl
		// (lossTotals' order: ibg at lossBackIbg, flu at lossBackFlu, pa
		// from lossBackAd + 6.)
		for n, v := range [...]vs{na[q], nb[q], nc[q], def[q], ibg[q], flu[q], kahn[q]} {
			v.StoreSlice(out[n*slots+i:])
		}
		for n, v := range [...]vs{pa[q], pb[q], pc[q], fpa[q], fpb[q], fpc[q]} {
			v.StoreSlice(out[(lossBackAd+6+n)*slots+i:])
		}
	}
}

// backGeometryLanes stores lossBackLanes' sums back through d = p/R,
// R = |p| (np a whole number of vectors): ∂L/∂p = d̄/R + a·d with a = r̄ −
// (d̄·d)/R (d̄/R is summed apart, in backFactorsLanes and the row sums),
// a·d and fdet·a·d, and ∂L/∂(close distance); 0 without the detector's
// and the beam's parameters (noGeometry).
func (k *kernel) backGeometryLanes(fr *lossFront, t *termLanes, g *[rowChunk]float64, np int, out []float64) {
	c := k.c
	r := k.lr
	scale := vrep(&r.scale)
	const sl = min(lanes, slots)
	const m = slots / sl
	if c.noGeometry() {
		np = 0
	}
	var cd, adX, adY, adZ, fadX, fadY, fadZ [m]vs
	for p := 0; p+lanes <= np; p += lanes {
		q := p / lanes % m
		gp := vload((*[lanes]float64)(g[p:]))
		invR, om := vload((*[lanes]float64)(fr.invR[p:])), vload((*[lanes]float64)(fr.omega[p:]))
		dx, dy, dz := vload((*[lanes]float64)(t.d[0][p:])), vload((*[lanes]float64)(t.d[1][p:])), vload((*[lanes]float64)(t.d[2][p:]))
		sb := adjSLanes(gp, scale, vload((*[lanes]float64)(fr.p[p:])), om)
		gs := gp.Mul(scale).Mul(vload((*[lanes]float64)(t.s[p:])))
		ddot := sb.Mul(vrep(&r.hklUnit)).Mul(vload((*[lanes]float64)(t.sig[p:]))) // d·∂L/∂d (σ in its unit: termUnits)
		if !c.NoPolar {
			ddot = ddot.Add(gs.Mul(om).Mul(vload((*[lanes]float64)(fr.dd[p:]))))
		}
		wbar := gs.Mul(vload((*[lanes]float64)(fr.p[p:])))
		inv3 := invR.Mul(invR).Mul(invR)
		var rbar vf
		if c.PointPixel {
			rbar = vk(-2).Mul(wbar).Mul(inv3)
		} else {
			cdp := wbar.Mul(vrep(&r.pitch2)).Mul(inv3) // ∂L/∂(close distance)
			cd[q] = vslotadd(cd[q], cdp)
			rbar = vk(-3).Mul(cdp).Mul(vrep(&r.closeD)).Mul(invR)
		}
		a := rbar.Sub(ddot.Mul(invR))
		adX[q], adY[q], adZ[q], fadX[q], fadY[q], fadZ[q] = dirSumsLanes(a, vload((*[lanes]float64)(fr.fdet[p:])), dx, dy, dz, adX[q], adY[q], adZ[q], fadX[q], fadY[q], fadZ[q])
	}
	for q := 0; q < m; q++ {
		i := q * sl
		// (lossTotals' order: cd before ad, ad from lossBackAd.)
		cd[q].StoreSlice(out[(lossBackAd-1)*slots+i:])
		for n, v := range [...]vs{adX[q], adY[q], adZ[q], fadX[q], fadY[q], fadZ[q]} {
			v.StoreSlice(out[(lossBackAd+n)*slots+i:])
		}
	}
}

// lossRowSumsLanes stores the row sums of lossBackLanes (and
// lossBackSubLanes) in out: for each source and orientation j, after the
// lossBackSums sums' slots, those of u·|d − inc|², u/R and fdet·u/R (u its
// ∂L/∂(h, k, l) in the units of termUnits), summed source and
// orientation at a time, the sums in registers. Each pixel's factors of
// u, a = sb·|d − inc|², b = sb/R and c = b·fdet (sb = ∂L/∂S), are formed
// with a source's first orientation (rowSumsFirstLanes) and, where
// there are more, kept in fr (ra, rb, rc) for the others (rowSumsLanes):
// a term then costs three multiplications and additions per row sum and
// index instead of five. g holds rowChunk values.
//
//lanegen:inline
func lossRowSumsLanes(k *kernel, fr *lossFront, g, dsq, hkl []float64, stride, np int, out []float64) {
	M := len(k.ll.orient)
	SM := len(k.ll.src) * M
	ga := (*[rowChunk]float64)(g)
	for j := 0; j < SM; j++ {
		hj, kj, lj := (*[rowChunk]float64)(hkl[3*j*stride:]), (*[rowChunk]float64)(hkl[(3*j+1)*stride:]), (*[rowChunk]float64)(hkl[(3*j+2)*stride:])
		o := out[slots*(lossBackSums+9*j):]
		if j%M == 0 {
			rowSumsFirstLanes(&k.lr.scale, ga, (*[rowChunk]float64)(dsq[j/M*rowChunk:]), fr, hj, kj, lj, M > 1, np, o)
		} else {
			rowSumsLanes(&fr.ra, &fr.rb, &fr.rc, hj, kj, lj, np, o)
		}
	}
}

// rowSumsFirstLanes is rowSumsLanes for a source's first orientation:
// it forms the pixels' factors a, b, c from ∂L/∂I (g), |d − inc|² (ds)
// and fr's polarization, ω, 1/R and fdet, and with keep stores them in
// fr's ra, rb and rc.
func rowSumsFirstLanes(scale *laneVal, g, ds *[rowChunk]float64, fr *lossFront, h, kk, l *[rowChunk]float64, keep bool, np int, o []float64) {
	const sl = min(lanes, slots)
	const m = slots / sl
	sc := vrep(scale)
	np = wholeVectorsLanes(np)
	var w0, w1, w2, v0, v1, v2, fv0, fv1, fv2 [m]vs
	for p := 0; p+lanes <= np; p += lanes {
		q := p / lanes % m
		sb := adjSLanes(vload((*[lanes]float64)(g[p:])), sc, vload((*[lanes]float64)(fr.p[p:])), vload((*[lanes]float64)(fr.omega[p:])))
		a, b := sb.Mul(vload((*[lanes]float64)(ds[p:]))), sb.Mul(vload((*[lanes]float64)(fr.invR[p:])))
		c := b.Mul(vload((*[lanes]float64)(fr.fdet[p:])))
		if keep {
			a.StoreSlice(fr.ra[p:])
			b.StoreSlice(fr.rb[p:])
			c.StoreSlice(fr.rc[p:])
		}
		x0, x1, x2 := vload((*[lanes]float64)(h[p:])), vload((*[lanes]float64)(kk[p:])), vload((*[lanes]float64)(l[p:]))
		w0[q], w1[q], w2[q], v0[q], v1[q], v2[q], fv0[q], fv1[q], fv2[q] = rowTermLanes(a, b, c, x0, x1, x2, w0[q], w1[q], w2[q], v0[q], v1[q], v2[q], fv0[q], fv1[q], fv2[q])
	}
	rowStoreLanes(o, w0, w1, w2, v0, v1, v2, fv0, fv1, fv2)
}

// rowSumsLanes stores in o lossRowSumsLanes' nine row sums of one source
// and orientation after its first, from the pixels' factors a, b, c and
// its ∂L/∂(h, k, l) in h, kk, l. The row sums are functions of their
// own, whose few live values stay in registers (inside lossBackLanes,
// with its many slices, the loop's addresses and counter were kept on
// the stack: 91 instructions a vector of pixels instead of ~50), over
// arrays of rowChunk values, which need no bounds check per load.
func rowSumsLanes(a, b, c, h, kk, l *[rowChunk]float64, np int, o []float64) {
	const sl = min(lanes, slots)
	const m = slots / sl
	np = wholeVectorsLanes(np)
	var w0, w1, w2, v0, v1, v2, fv0, fv1, fv2 [m]vs
	for p := 0; p+lanes <= np; p += lanes {
		q := p / lanes % m
		x0, x1, x2 := vload((*[lanes]float64)(h[p:])), vload((*[lanes]float64)(kk[p:])), vload((*[lanes]float64)(l[p:]))
		w0[q], w1[q], w2[q], v0[q], v1[q], v2[q], fv0[q], fv1[q], fv2[q] = rowTermLanes(vload((*[lanes]float64)(a[p:])), vload((*[lanes]float64)(b[p:])), vload((*[lanes]float64)(c[p:])), x0, x1, x2, w0[q], w1[q], w2[q], v0[q], v1[q], v2[q], fv0[q], fv1[q], fv2[q])
	}
	rowStoreLanes(o, w0, w1, w2, v0, v1, v2, fv0, fv1, fv2)
}

// wholeVectorsLanes is np pixels of a loss-row chunk rounded up to whole
// vectors, at most rowChunk (a loop to it, p+lanes ≤ np, then needs no
// bounds check for loads from arrays of rowChunk past the first).
//
//lanegen:inline
func wholeVectorsLanes(np int) int {
	return min((np+lanes-1)/lanes*lanes, rowChunk)
}

// rowStoreLanes stores the nine row sums' slots in o.
//
//lanegen:inline
func rowStoreLanes(o []float64, w0, w1, w2, v0, v1, v2, fv0, fv1, fv2 [slots / min(lanes, slots)]vs) {
	const sl = min(lanes, slots)
	const m = slots / sl
	for q := 0; q < m; q++ {
		w0[q].StoreSlice(o[q*sl:])
		w1[q].StoreSlice(o[slots+q*sl:])
		w2[q].StoreSlice(o[2*slots+q*sl:])
		v0[q].StoreSlice(o[3*slots+q*sl:])
		v1[q].StoreSlice(o[4*slots+q*sl:])
		v2[q].StoreSlice(o[5*slots+q*sl:])
		fv0[q].StoreSlice(o[6*slots+q*sl:])
		fv1[q].StoreSlice(o[7*slots+q*sl:])
		fv2[q].StoreSlice(o[8*slots+q*sl:])
	}
}

// rowTermLanes adds a vector of pixels' terms to lossRowSumsLanes' nine
// running sums: u = (x0, x1, x2) times each factor a, b, c.
//
//lanegen:inline
func rowTermLanes(a, b, c, x0, x1, x2 vf, w0, w1, w2, v0, v1, v2, fv0, fv1, fv2 vs) (vs, vs, vs, vs, vs, vs, vs, vs, vs) {
	w0, w1, w2 = vslotadd(w0, a.Mul(x0)), vslotadd(w1, a.Mul(x1)), vslotadd(w2, a.Mul(x2))
	v0, v1, v2 = vslotadd(v0, b.Mul(x0)), vslotadd(v1, b.Mul(x1)), vslotadd(v2, b.Mul(x2))
	fv0, fv1, fv2 = vslotadd(fv0, c.Mul(x0)), vslotadd(fv1, c.Mul(x1)), vslotadd(fv2, c.Mul(x2))
	return w0, w1, w2, v0, v1, v2, fv0, fv1, fv2
}

// lossBackSubLanes is lossBackLanes for a sub-pixel after a pixel's first
// (lossRow): with that sub-pixel's geometry in fr (fdet, 1/R; ω and the
// polarization, fr.p and fr.omega, are the first sub-pixel's) and t (d,
// σ), and its dsq and hkl, it stores the row sums and the sums of ∂L/∂p
// through its own direction, a·d and fdet·a·d with a = −(d̄·d)/R (in
// lossTotals' slots ad, fad; the others are the first sub-pixel's and
// are not written).
func (k *kernel) lossBackSubLanes(fr *lossFront, t *termLanes, g, dsq, hkl []float64, stride, np int, out []float64) {
	r := k.lr
	zero := vk(0)
	scale := vrep(&r.scale)
	const sl = min(lanes, slots)
	const m = slots / sl
	lossRowSumsLanes(k, fr, g, dsq, hkl, stride, np, out)
	if k.c.noGeometry() {
		clear(out[lossBackAd*slots : (lossBackAd+6)*slots])
		vzeroupper()
		return
	}
	var adX, adY, adZ, fadX, fadY, fadZ [m]vs
	for p := 0; p < np; p += lanes {
		q := p / lanes % m
		gp := vloadSlice(g[p:])
		dx, dy, dz := vloadSlice(t.d[0][p:]), vloadSlice(t.d[1][p:]), vloadSlice(t.d[2][p:])
		sb := adjSLanes(gp, scale, vloadSlice(fr.p[p:]), vloadSlice(fr.omega[p:]))
		a := zero.Sub(sb.Mul(vrep(&r.hklUnit)).Mul(vloadSlice(t.sig[p:])).Mul(vloadSlice(fr.invR[p:])))
		adX[q], adY[q], adZ[q], fadX[q], fadY[q], fadZ[q] = dirSumsLanes(a, vloadSlice(fr.fdet[p:]), dx, dy, dz, adX[q], adY[q], adZ[q], fadX[q], fadY[q], fadZ[q])
	}
	for q := 0; q < m; q++ {
		i := q * sl
		for n, v := range [...]vs{adX[q], adY[q], adZ[q], fadX[q], fadY[q], fadZ[q]} {
			v.StoreSlice(out[(lossBackAd+n)*slots+i:])
		}
	}
	vzeroupper()
}

// imageSumsLanes adds the first n values of row (n a multiple of
// max(lanes, slots)) and their squares to the slot sums of the image
// statistics (RowSums.Set): value p to slot p mod slots, the sums of
// the values in s[:slots] and of their squares in s[slots:], each slot's
// additions in order, as lossBackLanes' sums. It keeps the smallest and
// the largest value in lo and hi, per lane of each of its vectors (the
// first max(lanes, slots) values of lo and hi; a NaN leaves them as they
// were).
func imageSumsLanes(row []float32, n int, s *[2 * slots]float64, lo, hi *laneVal) {
	const sl = min(lanes, slots)
	const m = slots / sl
	const step = max(lanes, slots)
	var a, q [m]vs
	var lv, hv [m]vf
	for k := 0; k < m; k++ {
		lv[k], hv[k] = vloadSlice(lo[k*lanes:]), vloadSlice(hi[k*lanes:])
	}
	for p0 := 0; p0 < n; p0 += step {
		for k := 0; k < m; k++ {
			x := vloadF32Slice(row[p0+k*lanes:])
			a[k] = vslotadd(a[k], x)
			q[k] = vslotadd(q[k], x.Mul(x))
			lv[k] = x.Merge(lv[k], x.Less(lv[k]))
			hv[k] = x.Merge(hv[k], x.Greater(hv[k]))
		}
	}
	for k := 0; k < m; k++ {
		a[k].StoreSlice(s[k*sl:])
		q[k].StoreSlice(s[slots+k*sl:])
		lv[k].StoreSlice(lo[k*lanes:])
		hv[k].StoreSlice(hi[k*lanes:])
	}
	vzeroupper()
}

// imageDevLanes stores in s the slot sums (as imageSumsLanes) of the
// deviations x − mean of the first n values x of row (s[:slots]) and of
// their squares (s[slots:]).
func imageDevLanes(row []float32, n int, mean *laneVal, s *[2 * slots]float64) {
	const sl = min(lanes, slots)
	const m = slots / sl
	const step = max(lanes, slots)
	var e, q [m]vs
	mv := vrep(mean)
	for p0 := 0; p0 < n; p0 += step {
		for k := 0; k < m; k++ {
			t := vloadF32Slice(row[p0+k*lanes:]).Sub(mv)
			e[k] = vslotadd(e[k], t)
			q[k] = vslotadd(q[k], t.Mul(t))
		}
	}
	for k := 0; k < m; k++ {
		e[k].StoreSlice(s[k*sl:])
		q[k].StoreSlice(s[slots+k*sl:])
	}
	vzeroupper()
}

// stepsLanes stores v + p·d in g[p] for p from 0 up to n rounded up to
// whole vectors, v = a[0] and d = a[2] (a[1] and a[3] are not read: each
// value is broadcast from the first of a pair, vbcp; from a float64
// argument the vector kernels would take it through a legacy SSE
// register). For whole numbers v and d (the pixel coordinates
// f·Oversample + subF of lanesRow and the loss rows' setF) the values
// are exact while below 2⁵³, whatever the order of the additions.
func stepsLanes(g []float64, n int, a *[4]float64) {
	d := vbcp((*[2]float64)(a[2:]))
	x := vbcp((*[2]float64)(a[0:])).Add(vloadSlice(laneSteps[:]).Mul(d))
	step := vk(lanes).Mul(d)
	for p := 0; p < n; p += lanes {
		x.StoreSlice(g[p:])
		x = x.Add(step)
	}
	vzeroupper()
}

// rowF32Lanes stores the first n values of v (n a multiple of lanes)
// rounded to float32 in row (rowLanes' float32 rows: Go's conversion,
// rounding to nearest, as VCVTPD2PS does).
func rowF32Lanes(v []float64, row []float32, n int) {
	for p := 0; p < n; p += lanes {
		vstoreF32Slice(vloadSlice(v[p:]), row[p:])
	}
	vzeroupper()
}

// dirSumsLanes adds a vector of pixels' parts of ∂L/∂p along d to their
// sums (lossBackLanes, lossBackSubLanes): a·d and fdet·a·d, a the
// coefficient of d.
//
//lanegen:inline
func dirSumsLanes(a, fdet, dx, dy, dz vf, adX, adY, adZ, fadX, fadY, fadZ vs) (vs, vs, vs, vs, vs, vs) {
	fa := fdet.Mul(a)
	return vslotadd(adX, a.Mul(dx)), vslotadd(adY, a.Mul(dy)), vslotadd(adZ, a.Mul(dz)), vslotadd(fadX, fa.Mul(dx)), vslotadd(fadY, fa.Mul(dy)), vslotadd(fadZ, fa.Mul(dz))
}

// scaleTermsLanes is a pixel's part of lossBackLanes' sums ibg and flu:
// ∂L/∂I_bg = ∂L/∂S (adjSLanes), which the other factor sums share, and
// g·P·ω·S (∂L/∂fluence over perFluence).
//
//lanegen:inline
func scaleTermsLanes(gp, scale, s, pp, om vf) (vf, vf) {
	return adjSLanes(gp, scale, pp, om), gp.Mul(pp).Mul(om).Mul(s)
}

// adjSLanes is ∂L/∂S = g·scale·P·ω of a vector of pixels, their loss
// derivative g (the backward pass's sums all take it).
//
//lanegen:inline
func adjSLanes(gp, scale, pp, om vf) vf {
	return gp.Mul(scale).Mul(pp).Mul(om)
}
