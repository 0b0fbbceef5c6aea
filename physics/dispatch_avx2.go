//go:build goexperiment.simd && amd64

package physics

import "simd/archsimd"

// With GOEXPERIMENT=simd on amd64: the AVX2 copies of the lane kernels
// where the CPU has AVX2.

func supportedTiers() []laneTier {
	if archsimd.X86.AVX2() {
		return []laneTier{tierScalar, tierAVX2}
	}
	return []laneTier{tierScalar}
}

// termsGradRow is termsGradLanes on vector lanes where the CPU has them
// and the chunk allows (vector; see lossRowSingle).
func (k *kernel) termsGradRow(vector bool, si int, oinc [][3]laneVal, t *termLanes, ds, hkl []float64, stride, np int) {
	if vector && k.tier == tierAVX2 {
		k.termsGradLanesAVX2(si, oinc, t, ds, hkl, stride, np)
		return
	}
	k.termsGradLanes(si, oinc, t, ds, hkl, stride, np)
}

// lossBack is lossBackLanes on vector lanes where the CPU has them.
func (k *kernel) lossBack(fr *lossFront, t *termLanes, g, dsq, hkl []float64, stride, np, pol int, out []float64) {
	if k.tier == tierAVX2 {
		k.lossBackLanesAVX2(fr, t, g, dsq, hkl, stride, np, pol, out)
		return
	}
	k.lossBackLanes(fr, t, g, dsq, hkl, stride, np, pol, out)
}

// lossFront is lossFrontLanes on vector lanes where the CPU has them.
func (k *kernel) lossFront(sdet *[3]laneVal, fr *lossFront, t *termLanes, np, pol int) {
	if k.tier == tierAVX2 {
		k.lossFrontLanesAVX2(sdet, fr, t, np, pol)
		return
	}
	k.lossFrontLanes(sdet, fr, t, np, pol)
}

func (k *kernel) pixels(rb *rowBuf, n int) {
	if k.tier == tierAVX2 {
		k.pixelsLanesAVX2(rb, n)
		return
	}
	k.pixelsLanes(rb, n)
}
