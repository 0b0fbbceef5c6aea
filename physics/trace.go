package physics

import "math"

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
				if _, e := t.k.pixel(f, s, interpOn, 0, nil); e >= 0 {
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
// It does the same arithmetic in the same order: TestTrace checks that
// its pixel value has the bits of Render's.
func (k *kernel) trace(fpix, spix int, mode interpMode, until int) Trace {
	c := k.c
	tr := Trace{F: fpix, S: spix, Steps: c.Steps()}
	sum := k.ibg
	eval := 0
	square := c.Shape == Square && k.whole
	var omega, polar, capture float64
	if c.NoPolar {
		polar = 1
	}
	os := c.Oversample
	for t := 0; t < c.ThickSteps; t++ {
		capture = 0
		if !c.Thick {
			capture = 1
		}
		odet := float64(t) * k.thickStep
		for subS := 0; subS < os; subS++ {
			sdet := k.sub*float64(spix*os+subS) + k.sub/2
			for subF := 0; subF < os; subF++ {
				x, y, z := k.flat(k.sub*float64(fpix*os+subF)+k.sub/2, sdet, odet)
				if c.Curved {
					p := k.bend([3]float64{x, y, z})
					x, y, z = p[0], p[1], p[2]
				}
				tr.Position = [3]float64{x, y, z}
				invR := 1 / math.Sqrt(x*x+y*y+z*z)
				dx, dy, dz := x*invR, y*invR, z*invR
				if omega == 0 || c.OversampleOmega {
					omega = k.omega(invR)
				}
				if capture == 0 || c.OversampleThick {
					par := dx*k.od[0] + dy*k.od[1] + dz*k.od[2]
					capture = math.Exp(-float64(t)*k.thickStep*k.mu/par) - math.Exp(-float64(t+1)*k.thickStep*k.mu/par)
				}
				for si := range k.src {
					sr := &k.src[si]
					qx, qy, qz := (dx-sr.inc[0])*sr.invLambda, (dy-sr.inc[1])*sr.invLambda, (dz-sr.inc[2])*sr.invLambda
					stol := 0.5 * math.Sqrt(qx*qx+qy*qy+qz*qz)
					tr.Stol = stol
					if k.dmin > 0 && stol > 0 && k.dmin > 0.5/stol {
						continue
					}
					if polar == 0 || c.OversamplePolar {
						if k.kahn == 0 {
							c2 := sr.inc[0]*dx + sr.inc[1]*dy + sr.inc[2]*dz
							polar = 0.5 * (1 + c2*c2)
						} else {
							polar = polarization(k.kahn, sr, [3]float64{dx, dy, dz})
						}
					}
					for oi := range k.orient {
						o := &k.orient[oi]
						tr.Cell = *o
						h := o[0][0]*qx + o[0][1]*qy + o[0][2]*qz
						kk := o[1][0]*qx + o[1][1]*qy + o[1][2]*qz
						l := o[2][0]*qx + o[2][1]*qy + o[2][2]*qz
						tr.HKL = [3]float64{h, kk, l}
						var fl float64
						if square {
							fl = k.squareWhole(h, kk, l)
						} else {
							fl = k.lattice(h, kk, l)
						}
						tr.FLatt = fl
						if fl == 0 && !c.Water {
							continue
						}
						var fc float64
						switch {
						case !c.HasHKL:
							fc = k.defaultF
						case mode == interpNone || (mode == interpUntil && eval >= until):
							fc = k.cellF(h, kk, l)
						case k.inInterpRange(h, kk, l):
							fc = k.interpolate(h, kk, l)
						default:
							fc = k.cellF(h, kk, l)
						}
						tr.FCell = fc
						eval++
						sum += fc * fc * fl * fl
						if c.OversampleThick {
							sum *= capture
						}
						if c.OversamplePolar {
							sum *= polar
						}
						if c.OversampleOmega {
							sum *= omega
						}
					}
				}
			}
		}
	}
	v := k.scale * sum
	if !c.OversampleThick {
		v *= capture
	}
	if !c.OversamplePolar {
		v *= polar
	}
	if !c.OversampleOmega {
		v *= omega
	}
	tr.Sum, tr.Polar, tr.Omega, tr.Capture, tr.Pixel = sum, polar, omega, capture, v
	return tr
}
