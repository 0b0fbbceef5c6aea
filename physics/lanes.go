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
// kernel (lanes_avx2_gen.go); dispatch.go picks the copy the CPU runs.
// Each lane does exactly the scalar operations in the scalar order (no fused multiply-add, no
// reassociation): the copies give the scalar kernel's bits, which
// TestLanesBits checks on every golden case. The scalar helpers the
// general loops use (cosPiReduced, sincg3, polarization, the flat
// detector, ω, cellF) are these functions on one lane, so that a formula
// is written once.
//
// Only the per-lane work is here. What crosses lanes (sums over pixels,
// the loss terms) is scalar code that takes the lanes' results in pixel
// order, so that the sums are the same for any number of lanes.
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

// cosPiLanes is cos πd for |d| ≤ ½: the Taylor series (trig.go) in y = d²,
// evaluated in four independent pieces (Estrin's scheme), which shortens
// the chain of dependent operations.
//
//lanegen:inline
func cosPiLanes(d vf) vf {
	y := d.Mul(d)
	y2 := y.Mul(y)
	y4 := y2.Mul(y2)
	p0 := vk(cp0).Add(vk(cp2).Mul(y)).Add(vk(cp4).Add(vk(cp6).Mul(y)).Mul(y2))
	p1 := vk(cp8).Add(vk(cp10).Mul(y)).Add(vk(cp12).Add(vk(cp14).Mul(y)).Mul(y2)).Mul(y4)
	p2 := vk(cp16).Add(vk(cp18).Mul(y)).Add(vk(cp20).Mul(y2)).Mul(y4.Mul(y4))
	return p0.Add(p1).Add(p2)
}

// sinPiLanes is sin πd for |d| ≤ ½, as cosPiLanes.
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

// sincg3Lanes is sincg(h, n)·sincg(k, n)·sincg(l, n) for whole 1 < n ≤
// maxChebyshevN and |h|, |k|, |l| < 2⁵¹ (callers check: beyond, the
// Chebyshev form is not used): U_{n−1}(cos πx) for each, cos πx from the
// offset to the nearest integer (trig.go). The three are evaluated side by
// side so that their chains of dependent operations overlap.
//
//lanegen:inline
func sincg3Lanes(h, kk, l vf, n int) vf {
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

// cellFLanes is the nearest-reflection structure factor of a table
// (c.HasHKL; bits its values' bit patterns): round half down, as the
// reference's ceil(h−0.5); default F outside the table. The indices are
// whole numbers in float64, exact. ia and fa are scratch space.
//
//lanegen:inline
func cellFLanes(r *laneReps, bits []uint64, ia *[lanes]int32, fa *[lanes]uint64, h, kk, l vf) vf {
	half := vk(0.5)
	hc, kc, lc := h.Sub(half).Ceil(), kk.Sub(half).Ceil(), l.Sub(half).Ceil()
	hmin, kmin, lmin := vrep(&r.hmin), vrep(&r.kmin), vrep(&r.lmin)
	in := hc.GreaterEqual(hmin).And(hc.LessEqual(vrep(&r.hmax))).
		And(kc.GreaterEqual(kmin)).And(kc.LessEqual(vrep(&r.kmax))).
		And(lc.GreaterEqual(lmin)).And(lc.LessEqual(vrep(&r.lmax)))
	idx := hc.Sub(hmin).Mul(vrep(&r.hstride)).Add(kc.Sub(kmin).Mul(vrep(&r.kstride))).Add(lc.Sub(lmin))
	vint32(idx.Merge(vk(0), in), ia)
	for i, j := range ia {
		fa[i] = bits[j]
	}
	return vfloat(vloadBits(fa)).Merge(vrep(&r.defaultF), in)
}

// termsLanes adds the terms of one sub-pixel with diffracted direction d
// to sum and returns it, with polar set from the first source where it is
// 0: over sources and orientations, F²·F_latt² with the lattice factor of
// one whole N on all three axes. ia and fa are cellFLanes' scratch.
//
//lanegen:inline
func (k *kernel) termsLanes(r *laneReps, ia *[lanes]int32, fa *[lanes]uint64, sum, dx, dy, dz, polar vf) (vf, vf) {
	c := k.c
	n := k.nn[0]
	zero := vk(0)
	for si := range r.src {
		sr := &r.src[si]
		il := vrep(&sr.il)
		qx, qy, qz := dx.Sub(vrep(&sr.inc[0])).Mul(il), dy.Sub(vrep(&sr.inc[1])).Mul(il), dz.Sub(vrep(&sr.inc[2])).Mul(il)
		if m := polar.Equal(zero); vany(m) {
			var p vf
			if r.kahnZero {
				c2 := vrep(&sr.inc[0]).Mul(dx).Add(vrep(&sr.inc[1]).Mul(dy)).Add(vrep(&sr.inc[2]).Mul(dz))
				p = vk(0.5).Mul(vk(1).Add(c2.Mul(c2)))
			} else {
				p = polarizationLanes(false, &r.kahn, sr, dx, dy, dz)
			}
			polar = p.Merge(polar, m)
		}
		for oi := range r.orient {
			o := &r.orient[oi]
			h := vrep(&o[0]).Mul(qx).Add(vrep(&o[1]).Mul(qy)).Add(vrep(&o[2]).Mul(qz))
			kk := vrep(&o[3]).Mul(qx).Add(vrep(&o[4]).Mul(qy)).Add(vrep(&o[5]).Mul(qz))
			l := vrep(&o[6]).Mul(qx).Add(vrep(&o[7]).Mul(qy)).Add(vrep(&o[8]).Mul(qz))
			fl := sincg3Lanes(h, kk, l, n)
			fc := vrep(&r.defaultF)
			if c.HasHKL {
				fc = cellFLanes(r, k.fhklBits, ia, fa, h, kk, l)
			}
			s := sum.Add(fc.Mul(fc).Mul(fl).Mul(fl))
			if !c.Water {
				// A zero lattice factor adds no term (the reference skips it).
				s = sum.Merge(s, fl.Equal(zero))
			}
			sum = s
		}
	}
	return sum, polar
}

// subpixelLanes adds the terms of one sub-pixel to sum: its position from
// fdet (lanes) and the slow-axis and depth parts s, o (repeated), its
// direction, ω and polarization where they are still 0. With capture
// (a layer's capture fraction still to be found) it stores the obliquity
// of the direction in par. It returns sum, ω and polarization.
//
//lanegen:inline
func (k *kernel) subpixelLanes(r *laneReps, ia *[lanes]int32, fa *[lanes]uint64, fdet vf, s, o *[3]laneVal, sum, omega, polar vf, capture bool, par []float64) (vf, vf, vf) {
	c := k.c
	x := flatAxis(fdet, vrep(&r.fd[0]), vrep(&s[0]), vrep(&o[0]), vrep(&r.pix0[0]))
	y := flatAxis(fdet, vrep(&r.fd[1]), vrep(&s[1]), vrep(&o[1]), vrep(&r.pix0[1]))
	z := flatAxis(fdet, vrep(&r.fd[2]), vrep(&s[2]), vrep(&o[2]), vrep(&r.pix0[2]))
	invR := vk(1).Div(x.Mul(x).Add(y.Mul(y)).Add(z.Mul(z)).Sqrt())
	dx, dy, dz := x.Mul(invR), y.Mul(invR), z.Mul(invR)
	if m := omega.Equal(vk(0)); vany(m) {
		omega = omegaLanes(invR, vrep(&r.omegaNum), c.PointPixel).Merge(omega, m)
	}
	if capture {
		// The cosine of the oblique path through the layer.
		dx.Mul(vrep(&r.od[0])).Add(dy.Mul(vrep(&r.od[1]))).Add(dz.Mul(vrep(&r.od[2]))).StoreSlice(par)
	}
	sum, polar = k.termsLanes(r, ia, fa, sum, dx, dy, dz, polar)
	return sum, omega, polar
}

// pixelsLanes computes the pixels of a row for the structures
// kernel.simple covers, in the general loop's order: sensor layers,
// sub-pixels, sources, orientations; ω and polarization from the first
// sub-pixel where they are not 0. The row's pixels are given by
// float64(f·Oversample) in rb.f[:n] (repeated past the last to a whole
// number of lanes), its slow-axis parts in rb.sdet. Without a sensor
// thickness it stores each pixel's value scale·S·P·ω in rb.v and its
// part of the solid-angle sum in rb.w (omegaTerms); with one, scale·S
// (rb.v), ω (rb.w), the polarization (rb.polar) and the obliquity of the
// last layer's first sub-pixel, where its capture fraction is taken
// (rb.par): the capture fraction multiplies only the pixel's value, and
// scalar code forms it and the value afterwards (laneValue).
func (k *kernel) pixelsLanes(rb *rowBuf, n int) {
	c := k.c
	r := k.lr
	os := c.Oversample
	var ia [lanes]int32
	var fa [lanes]uint64
	sub, half := vrep(&r.sub), vrep(&r.half)
	last := c.ThickSteps - 1
	count := vrep(&r.count)
	s0, o0 := &rb.sdet[0], &r.odet[0]
	for p0 := 0; p0 < n; p0 += lanes {
		f0 := vloadSlice(rb.f[p0:])
		sum, omega, polar := vrep(&r.ibg), vk(0), vk(0)
		if c.NoPolar {
			polar = vk(1)
		}
		if os == 1 && last == 0 {
			// One sub-pixel (f + 0: the same bits) in one layer.
			sum, omega, polar = k.subpixelLanes(r, &ia, &fa, sub.Mul(f0).Add(half), s0, o0, sum, omega, polar, c.Thick, rb.par[p0:])
		} else {
			for t := 0; t <= last; t++ {
				for subS := 0; subS < os; subS++ {
					for subF := 0; subF < os; subF++ {
						fdet := sub.Mul(f0.Add(vrep(&r.subF[subF]))).Add(half)
						capture := c.Thick && t == last && subS == 0 && subF == 0
						sum, omega, polar = k.subpixelLanes(r, &ia, &fa, fdet, &rb.sdet[subS], &r.odet[t], sum, omega, polar, capture, rb.par[p0:])
					}
				}
			}
		}
		if c.Thick {
			vrep(&r.scale).Mul(sum).StoreSlice(rb.v[p0:])
			omega.StoreSlice(rb.w[p0:])
			polar.StoreSlice(rb.polar[p0:])
		} else {
			// The capture fraction is 1 (×1 changes no bits).
			vrep(&r.scale).Mul(sum).Mul(polar).Mul(omega).StoreSlice(rb.v[p0:])
			count.Mul(omega).StoreSlice(rb.w[p0:])
		}
	}
	vzeroupper()
}
