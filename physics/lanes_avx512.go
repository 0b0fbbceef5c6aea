//go:build goexperiment.simd && amd64

package physics

import "simd/archsimd"

// vaddseqAVX512 is the AVX-512 kernels' vaddseq: it adds the eight lanes
// of v to the sum in the first lane of acc one at a time, in lane order,
// as scalar code adds one pixel after another: the low four lanes, then
// the high four, each through vaddseqAVX2 (the other lanes of acc are
// left over).
func vaddseqAVX512(acc, v archsimd.Float64x8) archsimd.Float64x8 {
	a := vaddseqAVX2(acc.GetLo(), v.GetLo())
	return acc.SetLo(vaddseqAVX2(a, v.GetHi()))
}

// vslotaddAVX512 is the AVX-512 kernels' vslotadd: it adds the eight
// lanes of x to the four partial sums in acc, pixel p in sum p mod 4, in
// pixel order: the low four lanes, then the high four.
func vslotaddAVX512(acc archsimd.Float64x4, x archsimd.Float64x8) archsimd.Float64x4 {
	return acc.Add(x.GetLo()).Add(x.GetHi())
}

// vgatherAVX512 is the AVX-512 kernels' vgather: the eight values
// bits[ia[i]] as a vector, built as vgatherAVX2 builds four, twice.
func vgatherAVX512(bits []uint64, ia *[8]int32) archsimd.Uint64x8 {
	return archsimd.Uint64x8{}.SetLo(vgatherAVX2(bits, (*[4]int32)(ia[:4]))).SetHi(vgatherAVX2(bits, (*[4]int32)(ia[4:])))
}
