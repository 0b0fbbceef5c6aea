//go:build goexperiment.simd && amd64 && go1.27

package physics

import "simd/archsimd"

// simd_go126.go's helpers in Go 1.27's names of simd/archsimd.

// vaddseqAVX2 is simd_go126.go's (the AVX2 kernels' vaddseq).
func vaddseqAVX2(acc, v archsimd.Float64x4) archsimd.Float64x4 {
	hi := v.ConcatPermute128Scalars(1, 1, v) // v₂ v₃ v₂ v₃
	acc = acc.Add(v).Add(v.ConcatPermuteScalarsGrouped(1, 1, v))
	return acc.Add(hi).Add(hi.ConcatPermuteScalarsGrouped(1, 1, hi))
}

func simdLoad4s(s []float64) archsimd.Float64x4     { return archsimd.LoadFloat64x4(s) }
func simdLoadU4(p *[4]uint64) archsimd.Uint64x4     { return archsimd.LoadUint64x4Array(p) }
func simdLoadU8(p *[8]uint64) archsimd.Uint64x8     { return archsimd.LoadUint64x8Array(p) }
func simdStore4s(v archsimd.Float64x4, s []float64) { v.Store(s) }
func simdStore8s(v archsimd.Float64x8, s []float64) { v.Store(s) }

func simdSel128U(x archsimd.Uint64x4, lo, hi uint8, y archsimd.Uint64x4) archsimd.Uint64x4 {
	return x.ConcatPermute128Scalars(lo, hi, y)
}
func simdSelPairsU(x archsimd.Uint64x4, a, b uint8, y archsimd.Uint64x4) archsimd.Uint64x4 {
	return x.ConcatPermuteScalarsGrouped(a, b, y)
}
