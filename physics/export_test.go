package physics

// PixelPaths renders pixel (f, s) by the general loop and, where it
// applies, by pixelSimple (tests in package physics_test use it).
func PixelPaths(c *Config, in *Inputs, f, s int) (simple bool, fast, general float64) {
	k := newKernel(c, in)
	general, _ = k.pixel(f, s, interpNone, 0, nil)
	if !k.simple {
		return false, 0, general
	}
	return true, k.pixelSimple(f, s, nil), general
}

// LossGradientGeneral is LossGradient through the general loops only.
func LossGradientGeneral(c *Config, in *Inputs, l *PixelLoss, out []float64) float64 {
	generalOnly = true
	defer func() { generalOnly = false }()
	return LossGradient(c, in, l, out)
}
