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
func (k *kernel) termsGradRow(vector bool, si int, oinc [][3]laneVal, t *termLanes, hkl []float64, stride, np int) {
	if vector && k.tier == tierAVX2 {
		k.termsGradLanesAVX2(si, oinc, t, hkl, stride, np)
		return
	}
	k.termsGradLanes(si, oinc, t, hkl, stride, np)
}

func (k *kernel) pixels(rb *rowBuf, n int) {
	if k.tier == tierAVX2 {
		k.pixelsLanesAVX2(rb, n)
		return
	}
	k.pixelsLanes(rb, n)
}
