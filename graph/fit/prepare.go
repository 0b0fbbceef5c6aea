package fit

import (
	"fmt"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/graph/fit/spots"
)

// Pixels chooses the pixels a fit uses and its background.
type Pixels struct {
	// Background puts the background that spots.Find estimates into the
	// loss (the loss's own background, if any, is replaced).
	Background bool
	// AllPixels fits every pixel the loss's weights keep; otherwise only
	// those in the spots' boxes.
	AllPixels bool
	// BoxSize is the boxes' edge in pixels (default 10).
	BoxSize int
	// Overload is the photon count at which a pixel is saturated (0:
	// none); boxes holding one are dropped.
	Overload float64
}

// Prepare finds the spots of l's observed image (a w×h image; only the
// pixels l's weights keep), and sets up l as p says: its background and
// its weights (the boxes' pixels, within the old weights). It returns the
// spots and the boxes, which Settings.Boxes takes for the verdict.
func Prepare(l *graph.Loss, w, h int, p Pixels) (*spots.Result, []spots.Box, error) {
	if l.Pixels != nil {
		return nil, nil, fmt.Errorf("fit: the loss is a pixel list: give it as whole images (with weights)")
	}
	if p.BoxSize <= 0 {
		p.BoxSize = 10
	}
	im := &spots.Image{W: w, H: h, Data: l.Observed, Mask: l.Weights, Overload: p.Overload}
	found, err := spots.Find(im, spots.Settings{})
	if err != nil {
		return nil, nil, err
	}
	boxes := spots.Boxes(im, found.Spots, p.BoxSize)
	if p.Background {
		l.Background = found.Background
	}
	if !p.AllPixels {
		if len(boxes) == 0 {
			return found, nil, fmt.Errorf("no spot box on the image (%d spots found)", len(found.Spots))
		}
		wts := spots.Weights(w, h, boxes)
		if l.Weights != nil {
			for i := range wts {
				wts[i] *= l.Weights[i]
			}
		}
		l.Weights = wts
	}
	return found, boxes, nil
}
