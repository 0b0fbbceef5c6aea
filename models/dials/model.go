package dials

import (
	"fmt"
	"math"

	"github.com/gobragg/gobragg/models"
)

// Model returns a copy of base with this geometry: the beam's wavelength,
// direction and polarization; the detector, as a CUSTOM one (BEAM pivot)
// with the panel's axes, pixel size and image size, placed exactly where
// the panel is; the rotation axis, and φ and the oscillation of image n
// of the scan (still: φ = 0, one φ step); the crystal's real-space
// vectors, as a matrix crystal (-mat). What an experiment list does not
// describe comes from base: structure factors, N, fluence, crystal shape,
// mosaicity, φ steps per image, oversampling, the sensor's thickness and
// attenuation, curvature, mask.
//
// The geometry is turned into base's lab frame by the inverse of the turn
// ModelGeometry makes for base's beam and spindle, and placed bit for bit:
// the detector's placed frame and the crystal's vectors get the residual
// of their rounding (models.Detector.FrameFix, models.Crystal.RealFix), so
// that a list written from a model reads back to the same image. The
// normal of the panel is the one a gobragg list carries, else fast × slow.
//
// Refused: pixels that are not square, base models with more than one
// source (divergence, dispersion, -sourcefile), a mask of another size.
func (g *Geometry) Model(base *models.Model, n int) (*models.Model, error) {
	if g.Pixel[0] != g.Pixel[1] {
		return nil, fmt.Errorf("dials: pixels of %g × %g mm: gobragg's are square", g.Pixel[0]*1e3, g.Pixel[1]*1e3)
	}
	if len(base.Beam.Sources) > 1 {
		return nil, fmt.Errorf("dials: the base model has %d sources; an experiment list gives one beam direction", len(base.Beam.Sources))
	}
	if g.HasScan && (n < g.First || n > g.Last) {
		return nil, fmt.Errorf("dials: image %d is outside the scan's %d…%d", n, g.First, g.Last)
	}
	r := frameOf(base.Detector)
	beam := normalize(r.from(g.Beam))
	f, s, o := r.from(g.Fast), r.from(g.Slow), r.from(g.Normal)
	pix0 := r.from(g.Pix0)
	spindle := normalize(r.from(g.Axis))
	polar := normalize(cross(r.from(g.PolarNormal), beam))
	if norm(polar) < 0.5 {
		polar = base.Detector.Polar
	}

	// BEAM pivot: the distance along the beam to the panel's plane and the
	// beam's position on the panel.
	bo := dot(beam, o)
	if !(bo > 1e-6) {
		return nil, fmt.Errorf("dials: the panel does not face the beam (normal·beam = %.3g)", bo)
	}
	dist := dot(pix0, o) / bo
	v := [3]float64{dist*beam[0] - pix0[0], dist*beam[1] - pix0[1], dist*beam[2] - pix0[2]}
	in := base.Detector.In
	nan := math.NaN()
	in.Convention, in.PivotFromArgs = models.CUSTOM, models.PivotBeam
	in.FPixels, in.SPixels = g.Size[0], g.Size[1]
	in.PixelMM = g.Pixel[0] * 1000
	in.DetsizeFMM, in.DetsizeSMM = in.PixelMM*float64(g.Size[0]), in.PixelMM*float64(g.Size[1])
	in.DistanceMM, in.CloseDistanceMM = dist*1000, nan
	in.XbeamMM, in.YbeamMM = dot(v, f)*1000, dot(v, s)*1000
	in.XcloseMM, in.YcloseMM, in.ORGX, in.ORGY = nan, nan, nan, nan
	in.RotXDeg, in.RotYDeg, in.RotZDeg, in.TwoThetaDeg = 0, 0, 0, 0
	in.FDet, in.SDet, in.ODet, in.Beam, in.Polar, in.Spindle, in.TwoThetaAx = f, s, o, beam, polar, spindle, s
	d, err := models.NewDetector(in)
	if err != nil {
		return nil, fmt.Errorf("dials: %w", err)
	}
	bd := base.Detector
	d.Pixel, d.DetsizeF, d.DetsizeS = g.Pixel[0], g.Pixel[0]*float64(g.Size[0]), g.Pixel[0]*float64(g.Size[1])
	d.Oversample = bd.Oversample
	d.Thick, d.ThickSteps, d.ThickStep, d.Mu = bd.Thick, bd.ThickSteps, bd.ThickStep, bd.Mu
	d.Curved = bd.Curved
	d.ROI = [4]int{0, d.FPixels, 0, d.SPixels}
	if bd.Mask != nil {
		if len(bd.Mask) != d.FPixels*d.SPixels {
			return nil, fmt.Errorf("dials: the base model's mask has %d pixels, the panel %dx%d", len(bd.Mask), d.FPixels, d.SPixels)
		}
		d.Mask = bd.Mask
	}
	A := models.Float{}
	fr := models.Place[float64](A, d, d.Params())
	d.FrameFix = models.Frame[float64]{Pix0: residual(pix0, fr.Pix0), F: residual(f, fr.F), S: residual(s, fr.S), O: residual(o, fr.O)}

	b := *base.Beam
	b.Lambda = g.Lambda
	b.Kahn = g.Kahn
	b.Sources = []models.Source{{Incident: d.Beam, LambdaFactor: 1}}

	c := *base.Crystal
	if g.HasCrystal {
		a, bb, cc := r.from(g.A), r.from(g.B), r.from(g.C)
		// The reciprocal vectors (1/m) times λ: the -mat matrix (Å⁻¹·Å).
		vol := dot(a, cross(bb, cc))
		if !(vol > 0) {
			return nil, fmt.Errorf("dials: the crystal's vectors are left-handed or flat (volume %.3g Å³)", vol*1e30)
		}
		as, bs, cs := cross(bb, cc), cross(cc, a), cross(a, bb)
		k := g.Lambda / vol // (1/m)·m
		c.Matrix = [9]float64{as[0] * k, bs[0] * k, cs[0] * k, as[1] * k, bs[1] * k, cs[1] * k, as[2] * k, bs[2] * k, cs[2] * k}
		c.FromMatrix, c.CellLengths = true, false
		c.CellA, c.CellB, c.CellC, c.Alpha, c.Beta, c.Gamma = 0, 0, 0, 0, 0, 0
		c.MissetX, c.MissetY, c.MissetZ, c.OrientX, c.OrientY, c.OrientZ = 0, 0, 0, 0, 0, 0
		c.RealFix = [3]models.V3[float64]{}
		ra, rb, rc := models.RealVectors[float64](A, &c, c.Params(), b.Lambda)
		c.RealFix = [3]models.V3[float64]{residual(a, ra), residual(bb, rb), residual(cc, rc)}
	}
	osc := 0.0
	if g.HasScan {
		c.Phi, osc = rad(g.PhiDeg(n)), rad(g.OscDeg)
		if osc != base.Osc {
			c.PhiStep = rad(g.OscDeg / float64(max(c.PhiSteps, 1)))
		}
	} else {
		c.Phi, c.PhiStep, c.PhiSteps = 0, 0, 1
	}
	m := &models.Model{Crystal: &c, Beam: &b, Detector: d, Osc: osc}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("dials: %w", err)
	}
	return m, nil
}

// rad is models' conversion of command-line degrees.
func rad(deg float64) float64 { return deg * math.Pi / 180 }

// residual is what to add to got so that it becomes want: want − got,
// which is exact when they differ by a few roundings (Sterbenz), so that
// got + (want − got) is want again.
func residual(want, got [3]float64) [3]float64 {
	var r [3]float64
	for i := range r {
		r[i] = want[i] - got[i]
		if r[i] != 0 && got[i]+r[i] != want[i] {
			r[i] = 0 // not representable: leave the rounding
		}
	}
	return r
}

// CellModel is Model with the crystal turned into a -cell crystal with a
// misset (models.Crystal.CellFromVectors), the same vectors: a model
// whose cell parameters (a, b, c, α, β, γ) can be refined.
func (g *Geometry) CellModel(base *models.Model, n int) (*models.Model, error) {
	m, err := g.Model(base, n)
	if err != nil {
		return nil, err
	}
	A := models.Float{}
	a, b, c := models.RealVectors[float64](A, m.Crystal, m.Crystal.Params(), m.Beam.Lambda)
	cr, err := m.Crystal.CellFromVectors(a, b, c, m.Beam.Lambda)
	if err != nil {
		return nil, err
	}
	out := *m
	out.Crystal = cr
	return &out, nil
}
