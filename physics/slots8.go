//go:build goexperiment.simd && amd64 && go1.27

package physics

// slots is slots4.go's (the partial sums of each backward-pass sum),
// eight in the Go 1.27 vector build: one AVX-512 vector a sum (lanegen's vs is the
// widest lanes' vector there; four took an extract and two additions
// per vector). With Go 1.27's 31 vector registers the gradient took
// 0.91–0.95× the time of four (turns, mosaic and cubic 1024²; AVX2
// 0.93×). Its results' last bits differ from the other builds'.
const slots = 8

// A slot vector is one vector of the widest lanes here, and the loops'
// rounding to whole vectors (lossRow's pad, RowSums) takes max(lanes,
// slots) as maxLanes: slots must be maxLanes (this does not compile
// otherwise).
var _ [0]struct{} = [slots - maxLanes]struct{}{}

// slotSum is the sum of the partial sums s[:slots], in a fixed order
// (slots4.go's for each half, then their sum).
func slotSum(s []float64) float64 {
	_ = s[slots-1]
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}
