package fit

import (
	"math"

	"github.com/gobragg/gobragg/models"
)

// geometry is the placed detector and the beam of a model: enough to
// give each detector position its scattering vector (the central beam's;
// a curved detector's bending is left out: the fit only orders spots by
// resolution with it).
type geometry struct {
	pix0, fdet, sdet [3]float64 // m
	pixel            float64    // m
	inc              [3]float64 // incident direction (unit)
	lambda           float64    // m
}

func geometryOf(m *models.Model) geometry {
	d := m.Detector
	fr := models.Place[float64](models.Float{}, d, d.Params())
	return geometry{pix0: fr.Pix0, fdet: fr.F, sdet: fr.S, pixel: d.Pixel, inc: d.Beam, lambda: m.Beam.Lambda}
}

// scattering is the scattering vector (m⁻¹) of the ray to pixel
// coordinates (f, s) (spots' conventions: pixel (f, s) covers
// [f, f+1) × [s, s+1)).
func (g *geometry) scattering(f, s float64) [3]float64 {
	var p [3]float64
	for i := range p {
		p[i] = g.pix0[i] + f*g.pixel*g.fdet[i] + s*g.pixel*g.sdet[i]
	}
	r := math.Sqrt(p[0]*p[0] + p[1]*p[1] + p[2]*p[2])
	var q [3]float64
	for i := range q {
		q[i] = (p[i]/r - g.inc[i]) / g.lambda
	}
	return q
}
