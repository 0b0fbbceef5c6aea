//go:build !(goexperiment.simd && amd64)

package physics

import "math"

// Without GOEXPERIMENT=simd (or off amd64) only the scalar lane kernels
// exist.

func supportedTiers() []laneTier { return []laneTier{tierScalar} }

// scanWeights is chunkPixels' scan of a fit's weights w (a row's, up to
// its last pixel to look at) from pixel f: it lists the pixels whose
// weight is not 0 in fs until it holds most of them, and returns their
// number and the pixel to go on from (scanWeightsFrom).
func scanWeights(w []float64, f int, fs *[rowChunk]int, most int) (int, int) {
	return scanWeightsFrom(w, f, fs, 0, most)
}

// exp is math.Exp (dispatch_simd.go says why that build differs).
func exp(x float64) float64 { return math.Exp(x) }

func (k *kernel) pixels(rb *rowBuf, n int) {
	switch {
	case rb.interp:
		k.pixelsAxesInterpLanes(rb, n)
	case k.many && k.lr.axes:
		k.pixelsAxesManyLanes(rb, n)
	case k.many:
		k.pixelsManyLanes(rb, n)
	case k.shapeLanes:
		k.pixelsShapeLanes(rb, n)
	case k.dminLanes:
		k.pixelsAxesDminLanes(rb, n)
	case k.curvedLanes:
		k.pixelsAxesCurvedLanes(rb, n)
	case k.rulesLanes:
		k.pixelsAxesRulesLanes(rb, n)
	case k.lr.axes:
		k.pixelsAxesLanes(rb, n)
	default:
		k.pixelsLanes(rb, n)
	}
}

func (k *kernel) termsGradRow(_ bool, si int, oinc [][3]laneVal, t *termLanes, cube, ds, hkl []float64, stride, np int) {
	kind, axes := k.termsKind(cube != nil)
	termsScalar[kind][axes](k, si, oinc, t, cube, ds, hkl, stride, np)
}

func (k *kernel) termsGradShapeRow(_ bool, si int, oinc [][3]laneVal, t *termLanes, sh *shapeSums, ds, hkl []float64, stride, np int) {
	k.termsGradShapeLanes(si, oinc, t, sh, ds, hkl, stride, np)
}

func (k *kernel) shapeBack(fr *lossFront, sh *shapeSums, g []float64, np int, out []float64) {
	k.shapeBackLanes(fr, sh, g, np, out)
}

func (k *kernel) termsGradDminRow(_ bool, si int, oinc [][3]laneVal, t *termLanes, ds, hkl []float64, stride, np int) {
	k.termsGradAxesDminLanes(si, oinc, t, nil, ds, hkl, stride, np)
}

func (k *kernel) lossValue(fr *lossFront, t *termLanes, g []float64, np int) {
	k.lossValueLanes(fr, t, g, np)
}

func (k *kernel) lossBack(fr *lossFront, t *termLanes, g, dsq, hkl []float64, stride, np, pol int, out []float64) {
	k.lossBackLanes(fr, t, g, dsq, hkl, stride, np, pol, out)
}

func (k *kernel) lossBackSub(fr *lossFront, t *termLanes, g, dsq, hkl []float64, stride, np int, out []float64) {
	k.lossBackSubLanes(fr, t, g, dsq, hkl, stride, np, out)
}

func (k *kernel) lossFront(sdet, o *[3]laneVal, fr *lossFront, t *termLanes, np, pol int) {
	k.lossFrontLanes(sdet, o, fr, t, np, pol)
}

func (k *kernel) lossFrontSub(sdet, o *[3]laneVal, fr *lossFront, t *termLanes, np int) {
	k.lossFrontSubLanes(sdet, o, fr, t, np)
}

func steps(g []float64, n int, v, d float64) {
	a := [4]float64{v, 0, d, 0}
	stepsLanes(g, n, &a)
}

func imageSums(row []float32, n int, s *[2 * slots]float64, lo, hi *laneVal) {
	imageSumsLanes(row, n, s, lo, hi)
}

func poisson(v, b, o, w, t, g []float64, n int, bg bool) { poissonLanes(v, b, o, w, t, g, n, bg) }

func lossSums(t []float64, n int, ones bool, a *lossSum) { lossSumsLanes(t, n, ones, a) }

func imageDev(row []float32, n int, mean *laneVal, s *[2 * slots]float64) {
	imageDevLanes(row, n, mean, s)
}

func (k *kernel) rowF32(v []float64, row []float32, n int) { rowF32Lanes(v, row, n) }
