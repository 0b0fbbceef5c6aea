package physics

// Trace is what the reference prints for a pixel under -printout: the
// values its loops hold when they have finished that pixel, that is, of
// the last sensor layer, sub-pixel, source, φ step and mosaic domain.
type Trace struct {
	F, S     int        // the pixel
	Stol     float64    // sin(θ)/λ of the last sub-pixel and source, 1/m
	Position [3]float64 // the last sub-pixel's centre, m (lab frame)
	// HKL are the fractional Miller indices of the last evaluation; FCell
	// is the last structure factor computed (an evaluation whose lattice
	// factor is 0 skips it, as in the reference) and FLatt the last
	// lattice factor.
	HKL          [3]float64
	FCell, FLatt float64
	// Sum is the running sum of F²·F_latt² (the reference's I), Steps its
	// normalisation (Config.Steps).
	Sum   float64
	Steps int
	// Polar, Omega and Capture are the polarization factor, solid angle
	// (sr) and capture fraction as cached at the end of the pixel.
	Polar, Omega, Capture float64
	// Pixel is the pixel's photons, as rendered (Render's value).
	Pixel float64
	// Cell holds the real-space vectors a, b, c (m) of the last
	// orientation (φ step and mosaic domain).
	Cell [3][3]float64
}

// Tracer computes Traces of one configuration's pixels.
type Tracer struct {
	k         *kernel
	mask      []float64
	mode      interpMode
	cut, eval int // the interpolation cut-off (pixel, evaluation; −1: none)
}

// NewTracer prepares traces of pixels of c and in. With interpolation it
// first finds where the reference would switch it off (as Render does),
// so that each traced pixel is computed as rendered.
func NewTracer(c *Config, in *Inputs) *Tracer {
	t := &Tracer{k: newKernel(c, in), mask: in.Mask, cut: -1}
	if !c.Interpolate || !c.HasHKL {
		return t
	}
	t.mode = interpOn
	for s := 0; s < c.SPixels && t.cut < 0; s++ {
		for f := 0; f < c.FPixels; f++ {
			if c.Rendered(f, s, in.Mask) {
				if _, e := t.k.pixel(f, s, interpOn, 0, nil, nil); e >= 0 {
					t.cut, t.eval = s*c.FPixels+f, e
					break
				}
			}
		}
	}
	return t
}

// Pixel traces pixel (f, s); ok is false for a pixel that is not rendered
// (outside the detector or the ROI, or masked), which the reference does
// not print.
func (t *Tracer) Pixel(f, s int) (tr Trace, ok bool) {
	k := t.k
	c := k.c
	if f < 0 || s < 0 || f >= c.FPixels || s >= c.SPixels || !c.Rendered(f, s, t.mask) {
		return tr, false
	}
	mode, until := t.mode, 0
	if t.cut >= 0 {
		switch i := s*c.FPixels + f; {
		case i == t.cut:
			mode, until = interpUntil, t.eval
		case i > t.cut:
			mode = interpNone
		}
	}
	return k.trace(f, s, mode, until), true
}

// trace is pixel (kernel.go) recording the values the reference prints.
func (k *kernel) trace(fpix, spix int, mode interpMode, until int) Trace {
	tr := Trace{F: fpix, S: spix, Steps: k.c.Steps()}
	k.pixel(fpix, spix, mode, until, nil, &tr)
	return tr
}
