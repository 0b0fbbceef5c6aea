package physics

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
