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

func (k *kernel) pixels(rb *rowBuf, n int) {
	if k.tier == tierAVX2 {
		k.pixelsLanesAVX2(rb, n)
		return
	}
	k.pixelsLanes(rb, n)
}
