package physics

import (
	"math"
	"runtime"
	"sync"
)

// Layout of the packed parameter vector that the pixel op reads. All
// lengths in metres; every entry is differentiable in principle.
const (
	PPix0     = 0  // detector origin (corner of pixel 0,0), 3 values
	PFdet     = 3  // fast-axis unit vector
	PSdet     = 6  // slow-axis unit vector
	PObs      = 9  // detector normal
	PCellA    = 12 // real-space a
	PCellB    = 15 // real-space b
	PCellC    = 18 // real-space c
	PLambda   = 21 // wavelength
	PFluence  = 22 // photons/m²
	PKahn     = 23 // Kahn polarization factor
	PNa       = 24 // unit cells along a
	PNb       = 25
	PNc       = 26
	PDefaultF = 27 // structure factor outside the table
	PPixel    = 28 // pixel pitch
	NParams   = 29
)

// ThomsonSq is the squared classical electron radius r_e² in m², the value
// the reference uses (nanoBragg.c r_e_sqr).
const ThomsonSq = 7.94079248018965e-30

// Config is the structural part of a pixel computation: everything that
// decides loop shapes and branches. Two simulations with equal Configs
// share one compiled program.
type Config struct {
	FPixels, SPixels int
	Oversample       int
	// PhiSteps counts φ steps; in this version they are all at one angle
	// (zero step width), so they only enter the normalisation.
	PhiSteps        int
	PointPixel      bool // ω = 1/R² instead of the pixel's solid angle
	NoPolar         bool // polarization factor fixed at 1
	OversampleOmega bool // ω per sub-pixel, multiplied into the running sum
	OversamplePolar bool // polarization per sub-pixel, likewise
	// Incident beam direction (unit, source → sample) and the E-vector
	// reference axis of the Kahn polarization model.
	Beam, PolarAxis [3]float64
	// Structure-factor table bounds (inclusive); HasHKL false means every
	// reflection has DefaultF.
	HasHKL                             bool
	HMin, HMax, KMin, KMax, LMin, LMax int
}

// Steps is the reference's normalisation count: sources × mosaic domains ×
// φ steps × oversample².
func (c *Config) Steps() int { return c.Oversample * c.Oversample * c.PhiSteps }

// TableLen is the number of values the padded HKL table must hold:
// (hRange+1)(kRange+1)(lRange+1), as the reference lays it out.
func (c *Config) TableLen() int {
	if !c.HasHKL {
		return 1
	}
	return (c.HMax - c.HMin + 2) * (c.KMax - c.KMin + 2) * (c.LMax - c.LMin + 2)
}

// Render computes the photon image (slow-major, len FPixels·SPixels) from
// the packed parameters p and the structure-factor table fhkl. Rows are
// shared out to GOMAXPROCS goroutines; each pixel is computed
// independently, so the result does not depend on the split.
func Render(c *Config, p, fhkl, out []float64) {
	rows := make(chan int, c.SPixels)
	for s := 0; s < c.SPixels; s++ {
		rows <- s
	}
	close(rows)
	workers := runtime.GOMAXPROCS(0)
	if workers > c.SPixels {
		workers = c.SPixels
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := newKernel(c, p, fhkl)
			for s := range rows {
				row := out[s*c.FPixels : (s+1)*c.FPixels]
				for f := range row {
					row[f] = k.pixel(f, s)
				}
			}
		}()
	}
	wg.Wait()
}

// kernel holds one goroutine's read-only view of the inputs, unpacked.
type kernel struct {
	c                  *Config
	pix0, fd, sd, od   [3]float64
	a, b, cc           [3]float64
	lambda, scale      float64
	kahn, defaultF     float64
	na, nb, nc         float64
	pitch, sub, closeD float64
	incident, polAxis  [3]float64
	fhkl               []float64
	hStride, kStride   int
}

func vec(p []float64, i int) [3]float64 { return [3]float64{p[i], p[i+1], p[i+2]} }

func dot(x, y [3]float64) float64 { return x[0]*y[0] + x[1]*y[1] + x[2]*y[2] }

func newKernel(c *Config, p, fhkl []float64) *kernel {
	k := &kernel{c: c, pix0: vec(p, PPix0), fd: vec(p, PFdet), sd: vec(p, PSdet), od: vec(p, PObs),
		a: vec(p, PCellA), b: vec(p, PCellB), cc: vec(p, PCellC), lambda: p[PLambda],
		kahn: p[PKahn], na: p[PNa], nb: p[PNb], nc: p[PNc], defaultF: p[PDefaultF], pitch: p[PPixel],
		incident: c.Beam, polAxis: c.PolarAxis, fhkl: fhkl}
	k.sub = k.pitch / float64(c.Oversample)
	// ω uses the perpendicular distance of the placed detector.
	k.closeD = dot(k.pix0, k.od)
	k.scale = ThomsonSq * p[PFluence] / float64(c.Steps())
	if c.HasHKL {
		k.kStride = c.LMax - c.LMin + 2
		k.hStride = (c.KMax - c.KMin + 2) * k.kStride
	}
	return k
}

// pixel is the reference's per-pixel loop for one source, one orientation
// and one detector layer: sub-pixels, scattering vector, lattice and cell
// structure factors, then ω and polarization.
func (k *kernel) pixel(fpix, spix int) float64 {
	c := k.c
	var sum, omega, polar float64
	omegaSet, polarSet := false, false
	if c.NoPolar {
		polar, polarSet = 1, true
	}
	for subS := 0; subS < c.Oversample; subS++ {
		for subF := 0; subF < c.Oversample; subF++ {
			d, om := k.subpixel(fpix, spix, subF, subS)
			if !omegaSet || c.OversampleOmega {
				omega, omegaSet = om, true
			}
			inc := k.incident
			var q [3]float64
			for i := 0; i < 3; i++ {
				q[i] = (d[i] - inc[i]) / k.lambda
			}
			if !polarSet || c.OversamplePolar {
				polar = Polarization(k.kahn, inc, d, k.polAxis)
				polarSet = true
			}
			h, kk, l := dot(k.a, q), dot(k.b, q), dot(k.cc, q)
			fl := 1.0
			if k.na > 1 {
				fl *= Sincg(h, k.na)
			}
			if k.nb > 1 {
				fl *= Sincg(kk, k.nb)
			}
			if k.nc > 1 {
				fl *= Sincg(l, k.nc)
			}
			fc := k.cellF(h, kk, l)
			sum += fc * fc * fl * fl
			// The reference scales the whole running sum, not the term.
			if c.OversamplePolar {
				sum *= polar
			}
			if c.OversampleOmega {
				sum *= omega
			}
		}
	}
	// Identical φ steps add identical terms.
	v := k.scale * sum * float64(c.PhiSteps)
	if !c.OversamplePolar {
		v *= polar
	}
	if !c.OversampleOmega {
		v *= omega
	}
	return v
}

// cellF is the nearest-reflection structure factor: round half down, as the
// reference's ceil(h−0.5); default_F outside the table.
func (k *kernel) cellF(h, kk, l float64) float64 {
	c := k.c
	if !c.HasHKL {
		return k.defaultF
	}
	h0, k0, l0 := int(math.Ceil(h-0.5)), int(math.Ceil(kk-0.5)), int(math.Ceil(l-0.5))
	if h0 < c.HMin || h0 > c.HMax || k0 < c.KMin || k0 > c.KMax || l0 < c.LMin || l0 > c.LMax {
		return k.defaultF
	}
	return k.fhkl[(h0-c.HMin)*k.hStride+(k0-c.KMin)*k.kStride+(l0-c.LMin)]
}

// Sincg is the lattice transform of N unit cells along one axis,
// sin(Nπh)/sin(πh) (the reference's sincg(πh, N)). For whole N it is
// evaluated on the offset from the nearest integer n, where
// sincg = (−1)^{(N−1)n}·sin(Nπd)/sin(πd), whose limit ±N at d = 0 is exact.
func Sincg(h, n float64) float64 {
	if n == math.Trunc(n) && math.Abs(n) < 1<<52 && math.Abs(h) < 1<<52 {
		return sincgWhole(h, n, int64(n)&1 == 0)
	}
	x := math.Pi * h
	if x == 0 {
		return n
	}
	return math.Sin(n*x) / math.Sin(x)
}

// sincgWhole is Sincg for whole n (|h| < 2⁵²); even says whether n is.
func sincgWhole(h, n float64, even bool) float64 {
	m := math.Round(h)
	d := h - m
	v := n
	if d != 0 {
		v = math.Sin(n*math.Pi*d) / math.Sin(math.Pi*d)
	}
	if even && int64(m)&1 != 0 {
		return -v
	}
	return v
}

// Polarization is the Kahn et al. (1982) polarization factor
// ½(1 + cos²2θ − K·cos2ψ·sin²2θ), ψ the azimuth of the diffracted ray
// about the incident beam measured from the E-vector, which lies in the
// plane of the incident beam and axis. cos2ψ = (E²−B²)/(E²+B²) with E, B
// the diffracted ray's components along E_in and B_in (no atan2).
func Polarization(kahn float64, incident, diffracted, axis [3]float64) float64 {
	c2 := dot(incident, diffracted)
	c2sq := c2 * c2
	s2sq := 1 - c2sq
	cos2psi := 0.0
	if kahn != 0 {
		bin := unit(cross(axis, incident))
		ein := unit(cross(incident, bin))
		e, b := dot(diffracted, ein), dot(diffracted, bin)
		if den := e*e + b*b; den > 0 {
			cos2psi = (e*e - b*b) / den
		} else {
			cos2psi = 1 // ψ = −atan2(0, 0) = 0 in the reference
		}
	}
	return 0.5 * (1 + c2sq - kahn*cos2psi*s2sq)
}

func cross(x, y [3]float64) [3]float64 {
	return [3]float64{x[1]*y[2] - x[2]*y[1], x[2]*y[0] - x[0]*y[2], x[0]*y[1] - x[1]*y[0]}
}

func unit(v [3]float64) [3]float64 {
	n := math.Sqrt(dot(v, v))
	if n == 0 {
		return [3]float64{}
	}
	return [3]float64{v[0] / n, v[1] / n, v[2] / n}
}

// SolidAngle is the reference's "solid angle subtended by detector": the
// ω values its pixel loop accumulates (one per sub-pixel, each the first
// sub-pixel's unless OversampleOmega) divided by Steps.
func SolidAngle(c *Config, p []float64) float64 {
	k := newKernel(c, p, nil)
	sum := 0.0
	for s := 0; s < c.SPixels; s++ {
		for f := 0; f < c.FPixels; f++ {
			first := true
			var omega float64
			for subS := 0; subS < c.Oversample; subS++ {
				for subF := 0; subF < c.Oversample; subF++ {
					if first || c.OversampleOmega {
						_, omega = k.subpixel(f, s, subF, subS)
						first = false
					}
					sum += omega
				}
			}
		}
	}
	return sum / float64(c.Steps())
}

// subpixel returns the unit vector from the sample to the centre of a
// sub-pixel and that sub-pixel's solid angle.
func (k *kernel) subpixel(fpix, spix, subF, subS int) (d [3]float64, omega float64) {
	os := k.c.Oversample
	fdet := k.sub*float64(fpix*os+subF) + k.sub/2
	sdet := k.sub*float64(spix*os+subS) + k.sub/2
	var pos [3]float64
	for i := 0; i < 3; i++ {
		pos[i] = fdet*k.fd[i] + sdet*k.sd[i] + k.pix0[i]
	}
	r := math.Sqrt(dot(pos, pos))
	d = [3]float64{pos[0] / r, pos[1] / r, pos[2] / r}
	// Solid angle of a flat pixel: (pixel/R)²·cos(obliquity).
	omega = k.pitch * k.pitch / (r * r) * k.closeD / r
	if k.c.PointPixel {
		omega = 1 / (r * r)
	}
	return d, omega
}
