//go:build !(goexperiment.simd && amd64 && go1.27)

package physics

// slots is the number of partial sums of each sum in lossBackLanes (and
// of the image statistics): pixel p goes to partial sum p mod slots,
// whatever the lanes (a multiple of them), so that the sums have the same
// bits on any lane kernel of a build. Four here (slots8.go: eight in the
// Go 1.27 vector build): with Go 1.26's 15 vector registers the AVX-512 kernels keep them as
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
