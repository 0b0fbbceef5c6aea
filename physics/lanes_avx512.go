//go:build goexperiment.simd && amd64

package physics

import (
	"simd/archsimd"
	"unsafe"
)

// vaddseqAVX512 is the AVX-512 kernels' vaddseq: it adds the eight lanes
// of v to the sum in the first lane of acc one at a time, in lane order,
// as scalar code adds one pixel after another: the low four lanes, then
// the high four, each through vaddseqAVX2 (the other lanes of acc are
// left over).
func vaddseqAVX512(acc, v archsimd.Float64x8) archsimd.Float64x8 {
	a := vaddseqAVX2(acc.GetLo(), v.GetLo())
	return acc.SetLo(vaddseqAVX2(a, v.GetHi()))
}

// vgatherAVX512 is the AVX-512 kernels' vgather: the eight values
// bits[ia[i]] as a vector, built as vgatherAVX2 builds four, twice.
func vgatherAVX512(bits []uint64, ia *[8]int32) archsimd.Uint64x8 {
	return archsimd.Uint64x8{}.SetLo(vgatherAVX2(bits, (*[4]int32)(ia[:4]))).SetHi(vgatherAVX2(bits, (*[4]int32)(ia[4:])))
}

// cubePerm are vgatherCubeAVX512's permutations: of two lanes' pairs of
// rows, the first two and the last two columns; of two such, the first
// four and the last four values of each.
var cubePerm = [4][8]uint64{{0, 4, 8, 12, 1, 5, 9, 13}, {2, 6, 10, 14, 3, 7, 11, 15}, {0, 1, 2, 3, 8, 9, 10, 11}, {4, 5, 6, 7, 12, 13, 14, 15}}

// vgatherCubeAVX512 is the AVX-512 kernels' vgatherCube: for each of the
// 16 rows of 4 values along l, the eight lanes' rows loaded (one 4-value
// vector each, two to a register) and turned into the rows' four columns
// (an 8×4 transpose in two rounds of permutations). Each lane's 4×4×4
// cells are bounds-checked once (cubeRows), the rows then loaded through
// pointers: with a check per row the loads' address arithmetic took as
// long as the interpolation's divisions.
func vgatherCubeAVX512(bits []uint64, ia *[8]int32, hs, ks int, cube []float64) {
	var at [8]unsafe.Pointer
	for l := range at {
		at[l] = cubeRows(bits, ia[l], hs, ks)
	}
	c := cube[:64*8]
	pa, pb := simdLoadU8(&cubePerm[0]), simdLoadU8(&cubePerm[1])
	pc, pd := simdLoadU8(&cubePerm[2]), simdLoadU8(&cubePerm[3])
	row := func(l int, off uintptr) archsimd.Uint64x4 {
		return simdLoadU4((*[4]uint64)(unsafe.Add(at[l], off)))
	}
	for i := range 4 {
		for j := range 4 {
			off := uintptr(i*hs+j*ks) * 8
			p01 := archsimd.Uint64x8{}.SetLo(row(0, off)).SetHi(row(1, off))
			p23 := archsimd.Uint64x8{}.SetLo(row(2, off)).SetHi(row(3, off))
			p45 := archsimd.Uint64x8{}.SetLo(row(4, off)).SetHi(row(5, off))
			p67 := archsimd.Uint64x8{}.SetLo(row(6, off)).SetHi(row(7, off))
			q0, q1 := p01.ConcatPermute(p23, pa), p01.ConcatPermute(p23, pb) // lanes 0–3: columns 0, 1; columns 2, 3
			q2, q3 := p45.ConcatPermute(p67, pa), p45.ConcatPermute(p67, pb) // lanes 4–7
			o := c[(4*i+j)*32:][:32]
			simdStore8s(q0.ConcatPermute(q2, pc).AsFloat64x8(), o)
			simdStore8s(q0.ConcatPermute(q2, pd).AsFloat64x8(), o[8:])
			simdStore8s(q1.ConcatPermute(q3, pc).AsFloat64x8(), o[16:])
			simdStore8s(q1.ConcatPermute(q3, pd).AsFloat64x8(), o[24:])
		}
	}
}
