//go:build goexperiment.simd && amd64

package physics

import "simd/archsimd"

// vaddseqAVX2 is the AVX2 kernels' vaddseq: it adds the four lanes of v
// to the sum in the first lane of acc one at a time, in lane order,
// (((acc + v₀) + v₁) + v₂) + v₃, as scalar code adds one pixel after
// another (the other lanes of acc are left over). Only 256-bit
// operations: Go moves 128-bit vectors with SSE instructions, and each
// switch between those and AVX costs far more than the sum.
func vaddseqAVX2(acc, v archsimd.Float64x4) archsimd.Float64x4 {
	hi := v.Select128FromPair(1, 1, v) // v₂ v₃ v₂ v₃
	acc = acc.Add(v).Add(v.SelectFromPairGrouped(1, 1, v))
	return acc.Add(hi).Add(hi.SelectFromPairGrouped(1, 1, hi))
}

// vgatherAVX2 is the AVX2 kernels' vgather: the four values bits[ia[i]]
// as a vector, built in registers (two pairs, inserted): the vector load
// of the four values stored one by one waited for the stores (the
// forward of the mosaic case with structure factors was 5 % slower).
func vgatherAVX2(bits []uint64, ia *[4]int32) archsimd.Uint64x4 {
	a := archsimd.BroadcastUint64x2(bits[ia[0]]).SetElem(1, bits[ia[1]])
	b := archsimd.BroadcastUint64x2(bits[ia[2]]).SetElem(1, bits[ia[3]])
	return archsimd.Uint64x4{}.SetLo(a).SetHi(b)
}
