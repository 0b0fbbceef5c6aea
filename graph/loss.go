package graph

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"github.com/gobragg/gobragg/physics"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LossKind names a loss on the photon image.
type LossKind int

// The losses. Each sums over the pixels whose weight is non-zero, times
// the weight (1 for every pixel without a mask).
const (
	// LossSum is Σ w·I: the total photons (no observed image).
	LossSum LossKind = iota
	// LossSSE is Σ w·(I − obs)²: sum of squared residuals.
	LossSSE
	// LossPoisson is Σ w·(I − obs·ln I): the Poisson negative
	// log-likelihood of the observed counts, up to the constant Σ ln obs!.
	// A pixel with I = 0 contributes 0 if obs = 0 and +Inf otherwise.
	LossPoisson
)

var lossNames = [...]string{"sum", "sse", "poisson"}

func (k LossKind) String() string {
	if k < 0 || int(k) >= len(lossNames) {
		return fmt.Sprintf("loss%d", int(k))
	}
	return lossNames[k]
}

// ParseLoss reads a loss name: sum, sse or poisson.
func ParseLoss(s string) (LossKind, error) {
	for i, n := range lossNames {
		if s == n {
			return LossKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown loss %q: want sum, sse or poisson", s)
}

// NeedsObserved reports whether the loss compares with an observed image.
func (k LossKind) NeedsObserved() bool { return k != LossSum }

// Loss is a loss on a simulator's image: its kind, the observed image
// (photons, slow-major like the image; nil for LossSum) and optional
// per-pixel weights (nil: every pixel 1; 0 leaves a pixel out, so a mask
// or region of interest is a 0/1 weight image).
type Loss struct {
	Kind     LossKind
	Observed []float64
	Weights  []float64
}

// check validates l against an image of n pixels.
func (l *Loss) check(n int) error {
	if l.Kind < 0 || int(l.Kind) >= len(lossNames) {
		return fmt.Errorf("graph: unknown loss %d", int(l.Kind))
	}
	if l.Kind.NeedsObserved() && len(l.Observed) != n {
		if l.Observed == nil {
			return fmt.Errorf("graph: the %s loss needs an observed image", l.Kind)
		}
		return fmt.Errorf("graph: observed image has %d pixels, the model %d", len(l.Observed), n)
	}
	if l.Weights != nil && len(l.Weights) != n {
		return fmt.Errorf("graph: weight image has %d pixels, the model %d", len(l.Weights), n)
	}
	return nil
}

// lossTerm is the loss term of a pixel of intensity v, observed value o
// and weight w, with its derivative by v.
func lossTerm(kind LossKind, v, o, w float64) (l, dl float64) {
	switch kind {
	case LossSum:
		return w * v, w
	case LossSSE:
		r := v - o
		return w * r * r, 2 * w * r
	}
	switch {
	case v > 0:
		return w * (v - o*math.Log(v)), w * (1 - o/v)
	case o == 0:
		return w * v, w
	}
	return math.Inf(1), math.Inf(-1)
}

// lossValue is the loss of image img. obs and w may be shorter than img
// when unused (length 1). The terms are added with Neumaier's compensated
// summation: a megapixel sum then keeps ~1e-16 relative precision, which
// finite-difference checks of the loss rely on.
func lossValue(kind LossKind, img, obs, w []float64, weighted bool) float64 {
	var s, comp float64
	for i, v := range img {
		wi, o := 1.0, 0.0
		if weighted {
			if wi = w[i]; wi == 0 {
				continue
			}
		}
		if kind.NeedsObserved() {
			o = obs[i]
		}
		t, _ := lossTerm(kind, v, o, wi)
		u := s + t
		if math.Abs(s) >= math.Abs(t) {
			comp += (s - u) + t
		} else {
			comp += (t - u) + s
		}
		s = u
	}
	return s + comp
}

// pixelLossOp is the fused image-and-loss op of gradient programs: from
// the pixel op's inputs, the observed image and the weights it computes
// the loss and its gradient with respect to the packed parameters in one
// pass over the pixels (physics.LossGradient), as the vector
// [loss, ∂loss/∂P…]. Its gradient op just scales that stored gradient, so
// a gradient run costs one backward pass and no separate forward one.
type pixelLossOp struct {
	cfg      physics.Config
	kind     LossKind
	weighted bool
}

func (o pixelLossOp) Arity() int { return 7 }
func (o pixelLossOp) Type() hm.Type {
	return hm.NewFnType(vec64, vec64, vec64, vec64, vec64, vec64, vec64, vec64)
}
func (o pixelLossOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{1 + physics.NParams}, nil
}
func (o pixelLossOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 7 {
		return nil, fmt.Errorf("graph: pixel loss wants 7 inputs, got %d", len(vs))
	}
	in, err := physics.PixelOp{Cfg: o.cfg}.Unpack(vs[:5])
	if err != nil {
		return nil, err
	}
	var ds [2][]float64
	for i := range ds {
		t, ok := vs[5+i].(tensor.Tensor)
		if !ok {
			return nil, fmt.Errorf("graph: pixel loss input %d is %T", 5+i, vs[5+i])
		}
		if ds[i], ok = t.Data().([]float64); !ok {
			return nil, fmt.Errorf("graph: pixel loss input %d holds %T", 5+i, t.Data())
		}
	}
	obs, w := ds[0], ds[1]
	n := o.cfg.FPixels * o.cfg.SPixels
	if (o.kind.NeedsObserved() && len(obs) != n) || (o.weighted && len(w) != n) {
		return nil, fmt.Errorf("graph: pixel loss: %d observed and %d weights for %d pixels", len(obs), len(w), n)
	}
	term := func(i int, v float64) (float64, float64, bool) {
		wi, ob := 1.0, 0.0
		if o.weighted {
			if wi = w[i]; wi == 0 {
				return 0, 0, true
			}
		}
		if o.kind.NeedsObserved() {
			ob = obs[i]
		}
		l, dl := lossTerm(o.kind, v, ob, wi)
		return l, dl, false
	}
	out := make([]float64, 1+physics.NParams)
	out[0] = physics.LossGradient(&o.cfg, in, term, out[1:])
	return tensor.New(tensor.WithShape(len(out)), tensor.WithBacking(out)), nil
}
func (o pixelLossOp) ReturnsPtr() bool     { return false }
func (o pixelLossOp) CallsExtern() bool    { return false }
func (o pixelLossOp) OverwritesInput() int { return -1 }
func (o pixelLossOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "graph.pixelloss%v%v%+v", o.kind, o.weighted, o.cfg)
}
func (o pixelLossOp) Hashcode() uint32 { return hashOf(o) }
func (o pixelLossOp) String() string   { return "pixelloss." + o.kind.String() }

func (o pixelLossOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	d[0] = true
	return d
}

func (o pixelLossOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(storedGradOp{n: physics.NParams}, output, grad)
	if err != nil {
		return nil, err
	}
	res := make(G.Nodes, len(inputs))
	res[0] = d
	return res, nil
}

// storedGradOp reads a [value, gradient…] vector's gradient, scaled by the
// adjoint of its value. Only the value may be used downstream: the
// gradient entries have no derivatives of their own here.
type storedGradOp struct{ n int }

func (o storedGradOp) Arity() int { return 2 }
func (o storedGradOp) Type() hm.Type {
	return hm.NewFnType(vec64, vec64, vec64)
}
func (o storedGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.Shape{o.n}, nil }
func (o storedGradOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 2 {
		return nil, fmt.Errorf("graph: stored gradient wants 2 inputs, got %d", len(vs))
	}
	var ds [2][]float64
	for i := range ds {
		t, ok := vs[i].(tensor.Tensor)
		if !ok {
			return nil, fmt.Errorf("graph: stored gradient input %d is %T", i, vs[i])
		}
		if ds[i], ok = t.Data().([]float64); !ok || len(ds[i]) != o.n+1 {
			return nil, fmt.Errorf("graph: stored gradient input %d has %d values, want %d", i, len(ds[i]), o.n+1)
		}
	}
	for _, g := range ds[1][1:] {
		if g != 0 {
			return nil, fmt.Errorf("graph: the stored gradient has no derivatives of its own")
		}
	}
	out := make([]float64, o.n)
	for i := range out {
		out[i] = ds[1][0] * ds[0][1+i]
	}
	return tensor.New(tensor.WithShape(o.n), tensor.WithBacking(out)), nil
}
func (o storedGradOp) ReturnsPtr() bool      { return false }
func (o storedGradOp) CallsExtern() bool     { return false }
func (o storedGradOp) OverwritesInput() int  { return -1 }
func (o storedGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "graph.storedgrad%d", o.n) }
func (o storedGradOp) Hashcode() uint32      { return hashOf(o) }
func (o storedGradOp) String() string        { return "storedgrad" }

var vec64 = G.TensorType{Dims: 1, Of: G.Float64}
