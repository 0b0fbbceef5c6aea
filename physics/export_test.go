package physics

// PixelPaths renders pixel (f, s) by the general loop and, where it
// applies, by the lane kernel (tests in package physics_test use it).
func PixelPaths(c *Config, in *Inputs, f, s int) (simple bool, fast, general float64) {
	k := newKernel(c, in)
	general, _ = k.pixel(f, s, interpNone, 0, nil, nil)
	if !k.forwardLanes() {
		return false, 0, general
	}
	rb := k.newRowBuf()
	k.lanesRow(s, nil, f, 1, rb)
	v := rb.v[0]
	if c.Thick {
		var om float64
		v = k.laneValue(s, f, 0, rb, &om, interpNone)
	}
	return true, v, general
}

// SetVectorLanes selects the lane kernels by name and returns a function
// that restores the previous choice.
func SetVectorLanes(t interface{ Fatal(...any) }, name string) func() {
	old := VectorLanes()
	if err := UseVectorLanes(name); err != nil {
		t.Fatal(err)
	}
	return func() { UseVectorLanes(old) }
}

// LossGradientGeneral is LossGradient through the general loops only.
func LossGradientGeneral(c *Config, in *Inputs, l *PixelLoss, out []float64) float64 {
	generalOnly = true
	defer func() { generalOnly = false }()
	return LossGradient(c, in, l, out)
}

// RenderGeneral is Render through the general loops only.
func RenderGeneral[T float32 | float64](c *Config, in *Inputs, out []T) float64 {
	generalOnly = true
	defer func() { generalOnly = false }()
	return RenderSolidAngle(c, in, out)
}

// LossRows reports whether LossGradient runs the loss rows (lossRow) for
// this structure: then its intensities are Render's bits (also in the
// chunks they hand to the per-pixel walk, whose lattice factors are the
// lanes' for whole N up to maxChebyshevN: kernel.sincgGradAxis).
func LossRows(c *Config, in *Inputs) bool {
	return newKernel(c, in).lossRows()
}

// Slots is the number of partial sums of the backward pass's and the
// image statistics' sums in this build (slots4.go, slots8.go).
const Slots = slots
