package fit

import (
	"math"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/graph/fit/spots"
)

// SpotCheck compares the fitted model with the observed spots, box by
// box: a fit in a wrong minimum leaves observed spots that its model does
// not predict.
type SpotCheck struct {
	// Boxes is the number of boxes with a significant spot (observed
	// photons above the background at least 3 times their Poisson σ and
	// at least 3): the ones judged.
	Boxes int
	// Unexplained counts those where the model's Bragg photons are below
	// a quarter of the observed photons above the background, or its
	// centroid lies more than 2 pixels (or a quarter of the box) from the
	// observed centroid.
	Unexplained int
}

// Fraction is Unexplained/Boxes (0 without boxes).
func (c SpotCheck) Fraction() float64 {
	if c.Boxes == 0 {
		return 0
	}
	return float64(c.Unexplained) / float64(c.Boxes)
}

// checkSpots judges the model image img (Bragg photons, before any
// background) against the loss's observed image in each box.
func checkSpots(l *graph.Loss, img []float64, w int, boxes []spots.Box) SpotCheck {
	var c SpotCheck
	for _, b := range boxes {
		var obs, net, mod float64
		var of, os, mf, ms float64
		b.Pixels(w, func(i int) {
			bg := 0.0
			if l.Background != nil {
				bg = l.Background[i]
			}
			o := l.Observed[i] - bg
			obs += l.Observed[i]
			net += o
			mod += img[i]
			f, s := float64(i%w)+0.5, float64(i/w)+0.5
			if o > 0 {
				of += o * f
				os += o * s
			}
			mf += img[i] * f
			ms += img[i] * s
		})
		if net < 3 || net < 3*math.Sqrt(math.Max(obs, 1)) {
			continue
		}
		c.Boxes++
		var pos float64
		if mod > 0 {
			// Observed centroid from the positive net photons.
			var wpos float64
			b.Pixels(w, func(i int) {
				bg := 0.0
				if l.Background != nil {
					bg = l.Background[i]
				}
				wpos += math.Max(l.Observed[i]-bg, 0)
			})
			df, ds := of/wpos-mf/mod, os/wpos-ms/mod
			pos = math.Hypot(df, ds)
		}
		if mod < 0.25*net || pos > math.Max(2, float64(b.Size)/4) {
			c.Unexplained++
		}
	}
	return c
}
