//go:build !(goexperiment.simd && amd64 && go1.27)

package physics

// Four partial sums, pixel p in sum p mod 4 (gradsimple.go's slotSum):
// with Go 1.26's 15 vector registers the AVX-512 kernels keep them as
// four-lane vectors (vslotaddAVX512 adds a vector's low four lanes, then
// its high four); eight, as 512-bit vectors, left the backward pass's
// running sums spilled to 8-byte-aligned stack slots (the Go 1.26
// gradient at cubic 1024² 1.10×). Default builds keep them too, so that
// their results do not depend on the Go that builds them.
const slots = 4

// slotSum is the sum of the partial sums s[:slots], in a fixed order.
func slotSum(s []float64) float64 {
	_ = s[slots-1]
	return (s[0] + s[1]) + (s[2] + s[3])
}
