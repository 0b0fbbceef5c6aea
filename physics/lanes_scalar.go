package physics

import "math"

//go:generate go run ./internal/lanegen/cmd

// The scalar copy of the lane kernels (lanes_gen.go) is lanes.go with the
// lane vocabulary in float64 operators (internal/lanegen's Targets); the
// few words that are not an operator are these.

// merge is x where m is set, else y (the vectors' Merge).
func merge(x, y float64, m bool) float64 {
	if m {
		return x
	}
	return y
}

// store is the vectors' StoreSlice: s[0] = x.
func store(x float64, s []float64) { s[0] = x }

// storeF32 is vstoreF32Slice: s[0] = x rounded to float32.
func storeF32(x float64, s []float32) { s[0] = float32(x) }

// storeInt32 stores x truncated to an integer.
func storeInt32(x float64, a *[1]int32) { a[0] = int32(x) }

// nop is vzeroupper, which scalar code does not need.
func nop() {}

// cubeLen is the length of interpFLanes' scratch: 4×4×4 values on the
// widest lanes.
const cubeLen = 64 * maxLanes

// gatherCube is vgatherCube on one lane: the 4×4×4 structure factors
// from the table cell ia[0], the strides of h and k hs and ks, as
// cube[(4i + j)·4 + m] = table[ia[0] + i·hs + j·ks + m].
func gatherCube(bits []uint64, ia *[1]int32, hs, ks int, cube []float64) {
	for i := range 4 {
		for j := range 4 {
			row := bits[int(ia[0])+i*hs+j*ks:][:4]
			c := cube[(4*i+j)*4:][:4]
			for m := range 4 {
				c[m] = math.Float64frombits(row[m])
			}
		}
	}
}
