//go:build goexperiment.simd && amd64

package physics

import (
	"math"
	"math/bits"
	"simd/archsimd"
)

// With GOEXPERIMENT=simd on amd64: the AVX2 copies of the lane kernels
// where the CPU has AVX2, and the AVX-512 ones where it has AVX-512.

// hasAVX: the CPU runs VZEROUPPER (exp).
var hasAVX = archsimd.X86.AVX()

// exp is math.Exp after VZEROUPPER. On amd64 math.Exp mixes VEX-encoded
// fused multiply-adds with legacy SSE instructions, and each switch
// between the two costs an AVX–SSE transition while the upper halves of
// the vector registers are in use. In a GOEXPERIMENT=simd build they
// are after every asynchronous preemption (the runtime restores the
// 512-bit registers), and stay so until the next VZEROUPPER: a loop of
// math.Exp calls ran 50× slower here (Intel Xeon, AVX-512), the
// Gaussian spot shape's image (which now takes expLanes) 8× slower than
// the default build's, the Poisson noise 2.7×. The callers: the sensor's
// capture fraction and its adjoint, and the noise. Clearing them before
// each call costs a cycle or two.
func exp(x float64) float64 {
	if hasAVX {
		archsimd.ClearAVXUpperBits()
	}
	return math.Exp(x)
}

// scanWeights is chunkPixels' scan of a fit's weights w (a row's, up to
// its last pixel to look at) from pixel f: it lists the pixels whose
// weight is not 0 in fs until it holds most of them, and returns their
// number and the pixel to go on from. With vector lanes (AVX2 at least;
// GOBRAGG_LANES=scalar leaves it to scanWeightsFrom) it takes eight weights
// at a time (two compares with 0, where NaN is not 0 as in Go, to a bit
// each): none set (most of a fit's image, outside its spot boxes) skips
// the eight, all set lists them at once, a box's edge lists its bits.
// The groups stop while fewer than eight more fit in the chunk, and
// scanWeightsFrom does the rest. A group whose last set bit is not its
// last pixel moves f past pixels that are left out anyway, so the chunks
// hold the same pixels as scanWeightsFrom's alone (TestChunkPixelsWeights).
// 2.5× faster than it over a 512² image of spot boxes (BenchmarkChunkPixelsBoxes).
func scanWeights(w []float64, f int, fs *[rowChunk]int, most int) (int, int) {
	n := 0
	if currentTier() != tierScalar {
		zero := archsimd.Float64x4{}
		for ; f+8 <= len(w) && n+8 <= most; f += 8 {
			m := uint(simdLoad4s(w[f:]).NotEqual(zero).ToBits()) |
				uint(simdLoad4s(w[f+4:]).NotEqual(zero).ToBits())<<4
			switch m {
			case 0:
			case 0xff:
				o := fs[n:][:8]
				for i := range o {
					o[i] = f + i
				}
				n += 8
			default:
				for ; m != 0; m &= m - 1 {
					fs[n] = f + bits.TrailingZeros(m)
					n++
				}
			}
		}
		archsimd.ClearAVXUpperBits()
	}
	return scanWeightsFrom(w, f, fs, n, most)
}

func supportedTiers() []laneTier {
	t := []laneTier{tierScalar}
	if archsimd.X86.AVX2() {
		t = append(t, tierAVX2)
	}
	if archsimd.X86.AVX512() {
		t = append(t, tierAVX512)
	}
	return t
}

// termsVector are the vector copies of each of termsScalar's kernels
// (termsKind's order), N common to the axes and per axis, each with the
// tuner of its frame (frameTune); interpolation has the per-axis copy
// alone.
var termsVector = [...]struct {
	avx2, avx512   [2]termsGrad
	tune2, tune512 [2]*frameTune
}{
	termsWhole: {
		[2]termsGrad{(*kernel).termsGradLanesAVX2, (*kernel).termsGradAxesLanesAVX2},
		[2]termsGrad{(*kernel).termsGradLanesAVX512, (*kernel).termsGradAxesLanesAVX512},
		[2]*frameTune{&tuneTermsGrad2, &tuneTermsGradAxes2}, [2]*frameTune{&tuneTermsGrad512, &tuneTermsGradAxes512}},
	termsInterp: {
		[2]termsGrad{(*kernel).termsGradAxesInterpLanesAVX2, (*kernel).termsGradAxesInterpLanesAVX2},
		[2]termsGrad{(*kernel).termsGradAxesInterpLanesAVX512, (*kernel).termsGradAxesInterpLanesAVX512},
		[2]*frameTune{&tuneTermsGradInterp2, &tuneTermsGradInterp2}, [2]*frameTune{&tuneTermsGradInterp512, &tuneTermsGradInterp512}},
	termsCrystal: {
		[2]termsGrad{(*kernel).termsGradCrystalLanesAVX2, (*kernel).termsGradAxesCrystalLanesAVX2},
		[2]termsGrad{(*kernel).termsGradCrystalLanesAVX512, (*kernel).termsGradAxesCrystalLanesAVX512},
		[2]*frameTune{&tuneTermsGradCrystal2, &tuneTermsGradAxesCrystal2}, [2]*frameTune{&tuneTermsGradCrystal512, &tuneTermsGradAxesCrystal512}},
	termsNoN: {
		[2]termsGrad{(*kernel).termsGradNoNLanesAVX2, (*kernel).termsGradAxesNoNLanesAVX2},
		[2]termsGrad{(*kernel).termsGradNoNLanesAVX512, (*kernel).termsGradAxesNoNLanesAVX512},
		[2]*frameTune{&tuneTermsGradNoN2, &tuneTermsGradAxesNoN2}, [2]*frameTune{&tuneTermsGradNoN512, &tuneTermsGradAxesNoN512}},
	termsNoSigma: {
		[2]termsGrad{(*kernel).termsGradNoSigmaLanesAVX2, (*kernel).termsGradAxesNoSigmaLanesAVX2},
		[2]termsGrad{(*kernel).termsGradNoSigmaLanesAVX512, (*kernel).termsGradAxesNoSigmaLanesAVX512},
		[2]*frameTune{&tuneTermsGradNoSigma2, &tuneTermsGradAxesNoSigma2}, [2]*frameTune{&tuneTermsGradNoSigma512, &tuneTermsGradAxesNoSigma512}},
}

// termsGradRow runs the copy of the terms kernel termsKind picks (cube,
// interpolation's scratch, not nil where the row interpolates) on vector
// lanes where the CPU has them and the chunk allows (vector; see
// lossRow), each vector kernel with its frame where it runs fastest
// (frameTune), and on the scalar copy (termsScalar) otherwise.
func (k *kernel) termsGradRow(vector bool, si int, oinc [][3]laneVal, t *termLanes, cube, ds, hkl []float64, stride, np int) {
	kind, axes := k.termsKind(cube != nil)
	var f termsGrad
	var tune *frameTune
	switch tv := &termsVector[kind]; {
	case vector && k.tier == tierAVX512:
		f, tune = tv.avx512[axes], tv.tune512[axes]
	case vector && k.tier == tierAVX2:
		f, tune = tv.avx2[axes], tv.tune2[axes]
	default:
		termsScalar[kind][axes](k, si, oinc, t, cube, ds, hkl, stride, np)
		return
	}
	tune.run(np, func() { f(k, si, oinc, t, cube, ds, hkl, stride, np) })
}

// termsGradShapeRow is termsGradRow for the spot shapes
// (termsGradShapeLanes).
func (k *kernel) termsGradShapeRow(vector bool, si int, oinc [][3]laneVal, t *termLanes, sh *shapeSums, ds, hkl []float64, stride, np int) {
	switch {
	case vector && k.tier == tierAVX512:
		tuneTermsGradShape512.run(np, func() { k.termsGradShapeLanesAVX512(si, oinc, t, sh, ds, hkl, stride, np) })
	case vector && k.tier == tierAVX2:
		tuneTermsGradShape2.run(np, func() { k.termsGradShapeLanesAVX2(si, oinc, t, sh, ds, hkl, stride, np) })
	default:
		k.termsGradShapeLanes(si, oinc, t, sh, ds, hkl, stride, np)
	}
}

// shapeBack is shapeBackLanes on vector lanes where the CPU has them.
func (k *kernel) shapeBack(fr *lossFront, sh *shapeSums, g []float64, np int, out []float64) {
	switch k.tier {
	case tierAVX512:
		k.shapeBackLanesAVX512(fr, sh, g, np, out)
	case tierAVX2:
		k.shapeBackLanesAVX2(fr, sh, g, np, out)
	default:
		k.shapeBackLanes(fr, sh, g, np, out)
	}
}

// termsGradDminRow is termsGradRow under -dmin (termsGradAxesDminLanes).
func (k *kernel) termsGradDminRow(vector bool, si int, oinc [][3]laneVal, t *termLanes, ds, hkl []float64, stride, np int) {
	switch {
	case vector && k.tier == tierAVX512:
		tuneTermsGradDmin512.run(np, func() { k.termsGradAxesDminLanesAVX512(si, oinc, t, nil, ds, hkl, stride, np) })
	case vector && k.tier == tierAVX2:
		tuneTermsGradDmin2.run(np, func() { k.termsGradAxesDminLanesAVX2(si, oinc, t, nil, ds, hkl, stride, np) })
	default:
		k.termsGradAxesDminLanes(si, oinc, t, nil, ds, hkl, stride, np)
	}
}

// lossBack is lossBackLanes on vector lanes where the CPU has them.
func (k *kernel) lossBack(fr *lossFront, t *termLanes, g, dsq, hkl []float64, stride, np, pol int, out []float64) {
	switch k.tier {
	case tierAVX512:
		k.lossBackLanesAVX512(fr, t, g, dsq, hkl, stride, np, pol, out)
	case tierAVX2:
		k.lossBackLanesAVX2(fr, t, g, dsq, hkl, stride, np, pol, out)
	default:
		k.lossBackLanes(fr, t, g, dsq, hkl, stride, np, pol, out)
	}
}

// lossBackSub is lossBackSubLanes on vector lanes where the CPU has them.
func (k *kernel) lossBackSub(fr *lossFront, t *termLanes, g, dsq, hkl []float64, stride, np int, out []float64) {
	switch k.tier {
	case tierAVX512:
		k.lossBackSubLanesAVX512(fr, t, g, dsq, hkl, stride, np, out)
	case tierAVX2:
		k.lossBackSubLanesAVX2(fr, t, g, dsq, hkl, stride, np, out)
	default:
		k.lossBackSubLanes(fr, t, g, dsq, hkl, stride, np, out)
	}
}

// lossFront is lossFrontLanes on vector lanes where the CPU has them.
func (k *kernel) lossFront(sdet, o *[3]laneVal, fr *lossFront, t *termLanes, np, pol int) {
	switch k.tier {
	case tierAVX512:
		k.lossFrontLanesAVX512(sdet, o, fr, t, np, pol)
	case tierAVX2:
		k.lossFrontLanesAVX2(sdet, o, fr, t, np, pol)
	default:
		k.lossFrontLanes(sdet, o, fr, t, np, pol)
	}
}

// lossFrontSub is lossFrontSubLanes on vector lanes where the CPU has them.
func (k *kernel) lossFrontSub(sdet, o *[3]laneVal, fr *lossFront, t *termLanes, np int) {
	switch k.tier {
	case tierAVX512:
		k.lossFrontSubLanesAVX512(sdet, o, fr, t, np)
	case tierAVX2:
		k.lossFrontSubLanesAVX2(sdet, o, fr, t, np)
	default:
		k.lossFrontSubLanes(sdet, o, fr, t, np)
	}
}

// lossValue is lossValueLanes on vector lanes where the CPU has them.
func (k *kernel) lossValue(fr *lossFront, t *termLanes, g []float64, np int) {
	switch k.tier {
	case tierAVX512:
		k.lossValueLanesAVX512(fr, t, g, np)
	case tierAVX2:
		k.lossValueLanesAVX2(fr, t, g, np)
	default:
		k.lossValueLanes(fr, t, g, np)
	}
}

// pixels is pixelsLanes (or the copy the structure takes) on vector
// lanes where the CPU has them, each vector kernel with its frame where it
// runs fastest (frameTune).
func (k *kernel) pixels(rb *rowBuf, n int) {
	axes := k.lr.axes
	shape, dmin := k.shapeLanes, k.dminLanes
	switch {
	case k.tier == tierAVX512 && rb.interp:
		tunePixelsAxesInterp512.run(n, func() { k.pixelsAxesInterpLanesAVX512(rb, n) })
	case k.tier == tierAVX2 && rb.interp:
		tunePixelsAxesInterp2.run(n, func() { k.pixelsAxesInterpLanesAVX2(rb, n) })
	case rb.interp:
		k.pixelsAxesInterpLanes(rb, n)
	case k.tier == tierAVX512 && k.many && axes:
		tunePixelsAxesMany512.run(n, func() { k.pixelsAxesManyLanesAVX512(rb, n) })
	case k.tier == tierAVX512 && k.many:
		tunePixelsMany512.run(n, func() { k.pixelsManyLanesAVX512(rb, n) })
	case k.tier == tierAVX2 && k.many && axes:
		tunePixelsAxesMany2.run(n, func() { k.pixelsAxesManyLanesAVX2(rb, n) })
	case k.tier == tierAVX2 && k.many:
		tunePixelsMany2.run(n, func() { k.pixelsManyLanesAVX2(rb, n) })
	case k.many && axes:
		k.pixelsAxesManyLanes(rb, n)
	case k.many:
		k.pixelsManyLanes(rb, n)
	case k.tier == tierAVX512 && shape:
		tunePixelsShape512.run(n, func() { k.pixelsShapeLanesAVX512(rb, n) })
	case k.tier == tierAVX2 && shape:
		tunePixelsShape2.run(n, func() { k.pixelsShapeLanesAVX2(rb, n) })
	case shape:
		k.pixelsShapeLanes(rb, n)
	case k.tier == tierAVX512 && dmin:
		tunePixelsAxesDmin512.run(n, func() { k.pixelsAxesDminLanesAVX512(rb, n) })
	case k.tier == tierAVX2 && dmin:
		tunePixelsAxesDmin2.run(n, func() { k.pixelsAxesDminLanesAVX2(rb, n) })
	case dmin:
		k.pixelsAxesDminLanes(rb, n)
	case k.tier == tierAVX512 && k.curvedLanes:
		tunePixelsAxesCurved512.run(n, func() { k.pixelsAxesCurvedLanesAVX512(rb, n) })
	case k.tier == tierAVX2 && k.curvedLanes:
		tunePixelsAxesCurved2.run(n, func() { k.pixelsAxesCurvedLanesAVX2(rb, n) })
	case k.curvedLanes:
		k.pixelsAxesCurvedLanes(rb, n)
	case k.tier == tierAVX512 && k.rulesLanes:
		tunePixelsAxesRules512.run(n, func() { k.pixelsAxesRulesLanesAVX512(rb, n) })
	case k.tier == tierAVX2 && k.rulesLanes:
		tunePixelsAxesRules2.run(n, func() { k.pixelsAxesRulesLanesAVX2(rb, n) })
	case k.rulesLanes:
		k.pixelsAxesRulesLanes(rb, n)
	case k.tier == tierAVX512 && axes:
		tunePixelsAxes512.run(n, func() { k.pixelsAxesLanesAVX512(rb, n) })
	case k.tier == tierAVX512:
		tunePixels512.run(n, func() { k.pixelsLanesAVX512(rb, n) })
	case k.tier == tierAVX2 && axes:
		tunePixelsAxes2.run(n, func() { k.pixelsAxesLanesAVX2(rb, n) })
	case k.tier == tierAVX2:
		tunePixels2.run(n, func() { k.pixelsLanesAVX2(rb, n) })
	case axes:
		k.pixelsAxesLanes(rb, n)
	default:
		k.pixelsLanes(rb, n)
	}
}

// steps is stepsLanes on vector lanes where the CPU has them: v + p·d
// in g[p] for p < n, and up to n rounded up to the lanes' vectors (g
// must hold n rounded up to maxLanes).
func steps(g []float64, n int, v, d float64) {
	a := [4]float64{v, 0, d, 0}
	switch currentTier() {
	case tierAVX512:
		stepsLanesAVX512(g, n, &a)
	case tierAVX2:
		stepsLanesAVX2(g, n, &a)
	default:
		stepsLanes(g, n, &a)
	}
}

// imageSums is imageSumsLanes on vector lanes where the CPU has them.
func imageSums(row []float32, n int, s *[2 * slots]float64, lo, hi *laneVal) {
	switch currentTier() {
	case tierAVX512:
		imageSumsLanesAVX512(row, n, s, lo, hi)
	case tierAVX2:
		imageSumsLanesAVX2(row, n, s, lo, hi)
	default:
		imageSumsLanes(row, n, s, lo, hi)
	}
}

// poisson is poissonLanes on vector lanes where the CPU has them (n a
// multiple of maxLanes).
func poisson(v, b, o, w, t, g []float64, n int, bg bool) {
	switch currentTier() {
	case tierAVX512:
		poissonLanesAVX512(v, b, o, w, t, g, n, bg)
	case tierAVX2:
		poissonLanesAVX2(v, b, o, w, t, g, n, bg)
	default:
		poissonLanes(v, b, o, w, t, g, n, bg)
	}
}

// lossSums is lossSumsLanes on vector lanes where the CPU has them.
func lossSums(t []float64, n int, ones bool, a *lossSum) {
	switch currentTier() {
	case tierAVX512:
		lossSumsLanesAVX512(t, n, ones, a)
	case tierAVX2:
		lossSumsLanesAVX2(t, n, ones, a)
	default:
		lossSumsLanes(t, n, ones, a)
	}
}

// imageDev is imageDevLanes on vector lanes where the CPU has them.
func imageDev(row []float32, n int, mean *laneVal, s *[2 * slots]float64) {
	switch currentTier() {
	case tierAVX512:
		imageDevLanesAVX512(row, n, mean, s)
	case tierAVX2:
		imageDevLanesAVX2(row, n, mean, s)
	default:
		imageDevLanes(row, n, mean, s)
	}
}

// rowF32 is rowF32Lanes on vector lanes where the CPU has them (n a
// multiple of maxLanes), the kernel's.
func (k *kernel) rowF32(v []float64, row []float32, n int) {
	switch k.tier {
	case tierAVX512:
		rowF32LanesAVX512(v, row, n)
	case tierAVX2:
		rowF32LanesAVX2(v, row, n)
	default:
		rowF32Lanes(v, row, n)
	}
}
