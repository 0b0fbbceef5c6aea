package fit

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/graph/fit/spots"
	"github.com/gobragg/gobragg/models"
)

// Image is one observed image of a fit.
type Image struct {
	// Objective is the image's model and loss; its Names are the
	// problem's shared parameters followed by its per-image ones.
	Objective *graph.Objective
	// Boxes are the image's spot boxes (package spots), which the
	// verdict judges it by; nil for none.
	Boxes []spots.Box
}

// Problem is a fit of one or more images: Shared parameters that all the
// images' models have in common (the cell, the detector, N, λ …) and
// PerImage parameters of which each image has its own (its orientation,
// its scale). The loss is the sum of the images'. The shared parameters
// start at the first image's values.
type Problem struct {
	Shared, PerImage []string
	Images           []Image
}

// check validates the problem's structure.
func (p *Problem) check() error {
	if len(p.Images) == 0 {
		return errors.New("fit: no image")
	}
	seen := map[string]bool{}
	for _, n := range append(append([]string{}, p.Shared...), p.PerImage...) {
		if seen[n] {
			return fmt.Errorf("fit: parameter %s given twice (shared or per image, not both)", n)
		}
		seen[n] = true
	}
	want := append(append([]string{}, p.Shared...), p.PerImage...)
	for k, im := range p.Images {
		if im.Objective == nil || strings.Join(im.Objective.Names, ",") != strings.Join(want, ",") {
			return fmt.Errorf("fit: image %d's parameters are not the shared ones followed by the per-image ones (%s)", k+1, strings.Join(want, ","))
		}
		if im.Objective.Loss.Pixels != nil {
			// The fit reads the loss's images pixel by pixel (boxes,
			// verdicts, residuals); its objectives list them themselves.
			return fmt.Errorf("fit: image %d's loss is a pixel list: give it as whole images (with weights)", k+1)
		}
	}
	return nil
}

// Names lists the fit's parameters in the order of its vectors: the
// shared ones, then each image's own in image order, as name[k] (k from
// 1) when there is more than one image.
func (p *Problem) Names() []string {
	out := append([]string{}, p.Shared...)
	for k := range p.Images {
		for _, n := range p.PerImage {
			if len(p.Images) > 1 {
				n = fmt.Sprintf("%s[%d]", n, k+1)
			}
			out = append(out, n)
		}
	}
	return out
}

// base lists the parameters' own names in Names order (no image).
func (p *Problem) base() []string {
	out := append([]string{}, p.Shared...)
	for range p.Images {
		out = append(out, p.PerImage...)
	}
	return out
}

// Start is the fit's starting vector: the first image's shared values,
// then every image's own.
func (p *Problem) Start() []float64 {
	out := append([]float64{}, p.Images[0].Objective.Start()[:len(p.Shared)]...)
	for _, im := range p.Images {
		out = append(out, im.Objective.Start()[len(p.Shared):]...)
	}
	return out
}

// Models returns the images' models at the fit's vector x.
func (p *Problem) Models(x []float64) ([]*models.Model, error) {
	s := newSet(p.Shared, p.PerImage, objectives(p), single{})
	out := make([]*models.Model, len(p.Images))
	for k, o := range s.objs {
		m, err := o.At(s.local(x, k))
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", k+1, err)
		}
		out[k] = m
	}
	return out, nil
}

func objectives(p *Problem) []*graph.Objective {
	out := make([]*graph.Objective, len(p.Images))
	for k, im := range p.Images {
		out[k] = im.Objective
	}
	return out
}

// set is the images of one stage of a fit: each an objective over the
// stage's shared parameters followed by its own. A vector of the set
// holds the shared values, then each image's block.
type set struct {
	shared, per []string
	objs        []*graph.Objective
	comm        Comm
}

func newSet(shared, per []string, objs []*graph.Objective, c Comm) *set {
	return &set{shared: shared, per: per, objs: objs, comm: c}
}

// n is the length of the set's vectors.
func (s *set) n() int { return len(s.shared) + len(s.objs)*len(s.per) }

// names are the set's parameters in vector order, and base their own
// names.
func (s *set) names() (names, base []string) {
	names = append([]string{}, s.shared...)
	base = append([]string{}, s.shared...)
	for k := range s.objs {
		for _, n := range s.per {
			base = append(base, n)
			if len(s.objs) > 1 {
				n = fmt.Sprintf("%s[%d]", n, k+1)
			}
			names = append(names, n)
		}
	}
	return names, base
}

// local is image k's vector in x: the shared values and its block.
func (s *set) local(x []float64, k int) []float64 {
	ns, np := len(s.shared), len(s.per)
	out := make([]float64, 0, ns+np)
	out = append(out, x[:ns]...)
	return append(out, x[ns+k*np:ns+(k+1)*np]...)
}

// image returns the image and the index in image k's vector of the
// set's parameter i (−1 for a shared one: every image has it).
func (s *set) image(i int) (k, j int) {
	ns, np := len(s.shared), len(s.per)
	if i < ns {
		return -1, i
	}
	return (i - ns) / np, ns + (i-ns)%np
}

// start is the set's starting vector from its objectives' models.
func (s *set) start() []float64 {
	out := append([]float64{}, s.objs[0].Start()[:len(s.shared)]...)
	for _, o := range s.objs {
		out = append(out, o.Start()[len(s.shared):]...)
	}
	return out
}

// imageResult is an image's loss and gradient by its local vector.
type imageResult struct {
	f   float64
	g   []float64
	err error
}

// evalImages evaluates image k at its local vector xs[k] (nil: not at
// all) on whichever rank owns it and returns every requested image's
// loss and local gradient on every rank. An image that failed has a NaN
// loss and an error.
func (s *set) evalImages(xs [][]float64) ([]imageResult, error) {
	width := 1 + len(s.shared) + len(s.per)
	blocks, errs, err := gatherImages(s.comm, len(s.objs), width, func(k int) ([]float64, error) {
		if xs[k] == nil {
			return make([]float64, width), nil
		}
		f, g, err := s.objs[k].Gradient(xs[k])
		if err == nil && !finite(f) {
			err = fmt.Errorf("the loss is not finite (%g)", f)
		}
		if err != nil {
			return nil, err
		}
		return append([]float64{f}, g...), nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]imageResult, len(s.objs))
	for k, b := range blocks {
		if xs[k] == nil {
			continue
		}
		out[k] = imageResult{f: b[0], g: b[1:]}
		if math.IsNaN(b[0]) {
			out[k].err = blockErr(len(s.objs), k, errs)
		}
	}
	return out, nil
}

// eval is the set's loss at x (summed over the images in image order)
// and its gradient by x.
func (s *set) eval(x []float64) (float64, []float64, error) {
	xs := make([][]float64, len(s.objs))
	for k := range xs {
		xs[k] = s.local(x, k)
	}
	res, err := s.evalImages(xs)
	if err != nil {
		return math.NaN(), nil, err
	}
	ns, np := len(s.shared), len(s.per)
	var f float64
	g := make([]float64, s.n())
	for k, r := range res {
		if r.err != nil {
			return math.NaN(), nil, r.err
		}
		f += r.f
		for j := 0; j < ns; j++ {
			g[j] += r.g[j]
		}
		copy(g[ns+k*np:ns+(k+1)*np], r.g[ns:])
	}
	return f, g, nil
}

// imageErr names the image in err when there is more than one.
func imageErr(images, k int, err error) error {
	if images == 1 {
		return err
	}
	return fmt.Errorf("image %d: %w", k+1, err)
}

// innerWeights are each objective's loss weights restricted to the boxes
// whose centres lie at or below the quantile innerFraction of the
// resolution |q| of all its boxes' centres (under its model); nil when an
// image has fewer than 12 boxes.
func innerWeights(objs []*graph.Objective, boxes [][]spots.Box) [][]float64 {
	out := make([][]float64, len(objs))
	for k, o := range objs {
		if len(boxes[k]) < 12 {
			return nil
		}
		out[k] = innerWeightsOf(o, boxes[k], innerFraction)
	}
	return out
}

// innerFraction is the fraction of the spot boxes, lowest resolution
// first, that the first coarse stage fits. Low-resolution spots move
// least for a given error of the cell, so they keep that stage's loss
// smooth over the widest range of starts. Over 30 starts at the corners
// of ±4 % / ±3° / ±2° (cell and orientation) on the reference's moderate
// and sparse images, one start each, the fits captured 13 and 22 of 30
// without such a stage, and 28 and 27 with 40 % of the boxes (25 and 29
// with 25 %, 25 and 24 with 50 %).
const innerFraction = 0.4

func innerWeightsOf(o *graph.Objective, boxes []spots.Box, frac float64) []float64 {
	g := geometryOf(o.Model)
	res := make([]float64, len(boxes))
	for k, b := range boxes {
		c := float64(b.Size) / 2
		q := g.scattering(float64(b.F0)+c, float64(b.S0)+c)
		res[k] = math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2])
	}
	sorted := append([]float64(nil), res...)
	sort.Float64s(sorted)
	limit := sorted[min(len(sorted)-1, int(frac*float64(len(sorted))))]
	w := o.Model.Detector.FPixels
	out := make([]float64, w*o.Model.Detector.SPixels)
	for k, b := range boxes {
		if res[k] <= limit {
			b.Pixels(w, func(i int) {
				out[i] = 1
				if o.Loss.Weights != nil {
					out[i] = o.Loss.Weights[i]
				}
			})
		}
	}
	return out
}

// predictsPhotons fails when a starting model puts no photon on its
// fitted pixels: there is nothing to fit then (a fluence of 0, say).
func predictsPhotons(objs []*graph.Objective) error {
	for k, o := range objs {
		s, err := graph.New(o.Model)
		if err != nil {
			return err
		}
		img, err := s.Image()
		if err != nil {
			return err
		}
		found, fitted := false, 0
		for i, v := range img {
			if o.Loss.Weights == nil || o.Loss.Weights[i] != 0 {
				fitted++
				if v > 0 {
					found = true
					break
				}
			}
		}
		switch {
		case fitted == 0:
			// (A mask or ROI that leaves nothing: the fluence is not the
			// question.)
			return imageErr(len(objs), k, errors.New("no pixel is fitted (the mask, ROI or spot boxes leave none)"))
		case !found:
			return imageErr(len(objs), k, errors.New("the starting model puts no photons on the fitted pixels (is the fluence 0?)"))
		}
	}
	return nil
}
