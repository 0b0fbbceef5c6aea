//go:build goexperiment.simd && amd64

package physics

import (
	"simd/archsimd"
	"unsafe"
)

// vgatherAVX2 is the AVX2 kernels' vgather: the four values bits[ia[i]]
// as a vector, built in registers (two pairs, inserted): the vector load
// of the four values stored one by one waited for the stores (the
// forward of the mosaic case with structure factors was 5 % slower).
func vgatherAVX2(bits []uint64, ia *[4]int32) archsimd.Uint64x4 {
	a := archsimd.BroadcastUint64x2(bits[ia[0]]).SetElem(1, bits[ia[1]])
	b := archsimd.BroadcastUint64x2(bits[ia[2]]).SetElem(1, bits[ia[3]])
	return archsimd.Uint64x4{}.SetLo(a).SetHi(b)
}

// vgatherCubeAVX2 is the AVX2 kernels' vgatherCube: for each of the 16
// rows of 4 values along l, the four lanes' rows loaded (one vector each,
// through pointers as vgatherCubeAVX512 loads them) and turned into the
// rows' four columns (a 4×4 transpose).
func vgatherCubeAVX2(bits []uint64, ia *[4]int32, hs, ks int, cube []float64) {
	var at [4]unsafe.Pointer
	for l := range at {
		at[l] = cubeRows(bits, ia[l], hs, ks)
	}
	c := cube[:64*4]
	row := func(l int, off uintptr) archsimd.Uint64x4 {
		return simdLoadU4((*[4]uint64)(unsafe.Add(at[l], off)))
	}
	for i := range 4 {
		for j := range 4 {
			off := uintptr(i*hs+j*ks) * 8
			r0, r1, r2, r3 := row(0, off), row(1, off), row(2, off), row(3, off)
			lo01, hi01 := simdSelPairsU(r0, 0, 2, r1), simdSelPairsU(r0, 1, 3, r1) // r0₀ r1₀ r0₂ r1₂; r0₁ r1₁ r0₃ r1₃
			lo23, hi23 := simdSelPairsU(r2, 0, 2, r3), simdSelPairsU(r2, 1, 3, r3)
			o := c[(4*i+j)*16:][:16]
			simdStore4s(simdSel128U(lo01, 0, 2, lo23).AsFloat64x4(), o)
			simdStore4s(simdSel128U(hi01, 0, 2, hi23).AsFloat64x4(), o[4:])
			simdStore4s(simdSel128U(lo01, 1, 3, lo23).AsFloat64x4(), o[8:])
			simdStore4s(simdSel128U(hi01, 1, 3, hi23).AsFloat64x4(), o[12:])
		}
	}
}

// cubeRows returns a pointer to table cell at, having checked that the
// table holds the 4×4×4 cells from there (strides hs and ks): the vector
// gatherCubes (vgatherCubeAVX2, vgatherCubeAVX512) then load its rows
// unchecked.
func cubeRows(bits []uint64, at int32, hs, ks int) unsafe.Pointer {
	return unsafe.Pointer(&bits[int(at):][:3*hs+3*ks+4][0])
}
