//go:build goexperiment.simd && amd64 && !go1.27

package physics

import "simd/archsimd"

// The hand-written vector helpers that use simd/archsimd names Go 1.27
// changed, as Go 1.26 names them (simd_go127.go has the same in Go 1.27's
// names). vaddseqAVX2, in the forward kernels' loops, is written out in
// each; the rest (less hot) call the simd* functions here, each one
// instruction. vslotaddAVX512 (at the end) is here because only the Go
// 1.26 AVX-512 kernels take four slots on eight lanes.

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

func simdLoad4s(s []float64) archsimd.Float64x4     { return archsimd.LoadFloat64x4Slice(s) }
func simdLoadU4(p *[4]uint64) archsimd.Uint64x4     { return archsimd.LoadUint64x4(p) }
func simdLoadU8(p *[8]uint64) archsimd.Uint64x8     { return archsimd.LoadUint64x8(p) }
func simdStore4s(v archsimd.Float64x4, s []float64) { v.StoreSlice(s) }
func simdStore8s(v archsimd.Float64x8, s []float64) { v.StoreSlice(s) }

// simdSel128U treats x and y as four 128-bit halves (x's, then y's) and
// returns halves lo and hi; simdSelPairsU picks, in each 128-bit half,
// element a (0–1 of x, 2–3 of y) and then element b.
func simdSel128U(x archsimd.Uint64x4, lo, hi uint8, y archsimd.Uint64x4) archsimd.Uint64x4 {
	return x.Select128FromPair(lo, hi, y)
}
func simdSelPairsU(x archsimd.Uint64x4, a, b uint8, y archsimd.Uint64x4) archsimd.Uint64x4 {
	return x.SelectFromPairGrouped(a, b, y)
}

// vslotaddAVX512 is the Go 1.26 AVX-512 kernels' vslotadd: it adds the
// eight lanes of x to the four partial sums in acc (slots4.go), pixel p in
// sum p mod 4, in pixel order: the low four lanes, then the high four.
func vslotaddAVX512(acc archsimd.Float64x4, x archsimd.Float64x8) archsimd.Float64x4 {
	return acc.Add(x.GetLo()).Add(x.GetHi())
}
