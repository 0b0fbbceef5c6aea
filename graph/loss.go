package graph

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
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

// lossValue is the loss of image img. obs and w may be shorter than img
// when unused (length 1). The terms are added with Neumaier's compensated
// summation: a megapixel sum then keeps ~1e-16 relative precision, which
// finite-difference checks of the loss rely on.
func lossValue(kind LossKind, img, obs, w []float64, weighted bool) float64 {
	var s, comp float64
	add := func(t float64) {
		u := s + t
		if math.Abs(s) >= math.Abs(t) {
			comp += (s - u) + t
		} else {
			comp += (t - u) + s
		}
		s = u
	}
	for i, v := range img {
		wi := 1.0
		if weighted {
			if wi = w[i]; wi == 0 {
				continue
			}
		}
		switch kind {
		case LossSum:
			add(wi * v)
		case LossSSE:
			r := v - obs[i]
			add(wi * r * r)
		case LossPoisson:
			switch {
			case v > 0:
				add(wi * (v - obs[i]*math.Log(v)))
			case obs[i] == 0:
				add(wi * v)
			default:
				return math.Inf(1)
			}
		}
	}
	return s + comp
}

// lossGrad writes g·∂loss/∂img to out.
func lossGrad(kind LossKind, img, obs, w []float64, weighted bool, g float64, out []float64) {
	for i, v := range img {
		wi := g
		if weighted {
			wi *= w[i]
		}
		switch {
		case wi == 0:
			out[i] = 0
		case kind == LossSum:
			out[i] = wi
		case kind == LossSSE:
			out[i] = wi * 2 * (v - obs[i])
		case v > 0:
			out[i] = wi * (1 - obs[i]/v)
		case obs[i] == 0:
			out[i] = wi
		default:
			out[i] = math.Inf(-1)
		}
	}
}

// lossOp is the fused loss: (image, observed, weights) → scalar. observed
// and weights have one element when unused.
type lossOp struct {
	kind     LossKind
	s, f     int // image shape
	weighted bool
}

func (o lossOp) Arity() int { return 3 }
func (o lossOp) Type() hm.Type {
	return hm.NewFnType(G.TensorType{Dims: 2, Of: G.Float64}, vec64, vec64, G.Float64)
}
func (o lossOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }
func (o lossOp) Do(vs ...G.Value) (G.Value, error) {
	img, obs, w, err := o.unpack(vs)
	if err != nil {
		return nil, err
	}
	v := G.F64(lossValue(o.kind, img, obs, w, o.weighted))
	return &v, nil
}

func (o lossOp) unpack(vs []G.Value) (img, obs, w []float64, err error) {
	if len(vs) < 3 {
		return nil, nil, nil, fmt.Errorf("graph: loss wants 3 inputs, got %d", len(vs))
	}
	var ds [3][]float64
	for i := range ds {
		t, ok := vs[i].(tensor.Tensor)
		if !ok {
			return nil, nil, nil, fmt.Errorf("graph: loss input %d is %T", i, vs[i])
		}
		if ds[i], ok = t.Data().([]float64); !ok {
			return nil, nil, nil, fmt.Errorf("graph: loss input %d holds %T", i, t.Data())
		}
	}
	n := o.s * o.f
	if len(ds[0]) != n || (o.kind.NeedsObserved() && len(ds[1]) != n) || (o.weighted && len(ds[2]) != n) {
		return nil, nil, nil, fmt.Errorf("graph: loss inputs of %d, %d, %d values for %d pixels", len(ds[0]), len(ds[1]), len(ds[2]), n)
	}
	return ds[0], ds[1], ds[2], nil
}

func (o lossOp) ReturnsPtr() bool      { return false }
func (o lossOp) CallsExtern() bool     { return false }
func (o lossOp) OverwritesInput() int  { return -1 }
func (o lossOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "graph.loss%+v", o) }
func (o lossOp) Hashcode() uint32      { return hashOf(o) }
func (o lossOp) String() string        { return "loss." + o.kind.String() }

func (o lossOp) DiffWRT(int) []bool { return []bool{true, false, false} }

func (o lossOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(lossGradOp(o), inputs[0], inputs[1], inputs[2], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d, nil, nil}, nil
}

// lossGradOp is lossOp's backward op: (image, observed, weights, dL) →
// dL·∂loss/∂image.
type lossGradOp lossOp

func (o lossGradOp) Arity() int { return 4 }
func (o lossGradOp) Type() hm.Type {
	m := G.TensorType{Dims: 2, Of: G.Float64}
	return hm.NewFnType(m, vec64, vec64, G.Float64, m)
}
func (o lossGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{o.s, o.f}, nil
}
func (o lossGradOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 4 {
		return nil, fmt.Errorf("graph: loss gradient wants 4 inputs, got %d", len(vs))
	}
	img, obs, w, err := lossOp(o).unpack(vs)
	if err != nil {
		return nil, err
	}
	g, ok := vs[3].(*G.F64)
	if !ok {
		return nil, fmt.Errorf("graph: loss gradient seed is %T", vs[3])
	}
	out := make([]float64, len(img))
	lossGrad(o.kind, img, obs, w, o.weighted, float64(*g), out)
	return tensor.New(tensor.WithShape(o.s, o.f), tensor.WithBacking(out)), nil
}
func (o lossGradOp) ReturnsPtr() bool      { return false }
func (o lossGradOp) CallsExtern() bool     { return false }
func (o lossGradOp) OverwritesInput() int  { return -1 }
func (o lossGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "graph.lossgrad%+v", lossOp(o)) }
func (o lossGradOp) Hashcode() uint32      { return hashOf(o) }
func (o lossGradOp) String() string        { return "lossgrad." + o.kind.String() }

var vec64 = G.TensorType{Dims: 1, Of: G.Float64}
