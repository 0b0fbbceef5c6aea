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

// LossKind names a loss on the photon image (physics.LossKind: sum, sse,
// poisson, gauss, and linear for the adjoint of an outer loss).
type LossKind = physics.LossKind

// The losses; see physics.LossKind.
const (
	LossSum     = physics.LossSum
	LossSSE     = physics.LossSSE
	LossPoisson = physics.LossPoisson
	LossLinear  = physics.LossLinear
	LossGauss   = physics.LossGauss
)

// ParseLoss reads a loss name: sum, sse, poisson or gauss.
func ParseLoss(s string) (LossKind, error) {
	for _, k := range []LossKind{LossSum, LossSSE, LossPoisson, LossGauss} {
		if s == k.String() {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown loss %q: want sum, sse, poisson or gauss", s)
}

// Loss is a loss on a simulator's image: its kind, the observed image
// (photons, slow-major like the image; nil for LossSum), optional
// per-pixel weights (nil: every pixel 1; 0 leaves a pixel out, so a mask
// or region of interest is a 0/1 weight image), an optional background
// added to the image before the loss (photons per pixel; data, no
// gradient) and the read-out noise σ of LossGauss (photons). See
// physics.PixelLoss.
type Loss struct {
	Kind       LossKind
	Observed   []float64
	Weights    []float64
	Background []float64
	// Pixels, when not nil, lists the pixels the loss covers (ascending
	// slow-major indices, each once), and Observed, Weights and
	// Background hold one value per listed pixel: the same loss, to the
	// bit, as the full images with weight 0 off the list, and cheaper
	// when the list is a fraction of the image (Listed makes it).
	Pixels    []int32
	ReadNoise float64
}

func (l *Loss) pixel() *physics.PixelLoss {
	return &physics.PixelLoss{Kind: l.Kind, Observed: l.Observed, Weights: l.Weights, Background: l.Background,
		Pixels: l.Pixels, ReadNoise: l.ReadNoise}
}

// Listed returns l as a pixel list (Pixels) of the pixels it weighs not 0,
// their values copied. A loss without weights, one already listed and one
// whose slices are not all of its weights' length (which a simulator then
// refuses) are returned as they are.
func (l *Loss) Listed() Loss {
	n := len(l.Weights)
	if l.Weights == nil || l.Pixels != nil || (l.Kind.NeedsObserved() && len(l.Observed) != n) ||
		(l.Background != nil && len(l.Background) != n) || n > math.MaxInt32+1 {
		return *l
	}
	out := Loss{Kind: l.Kind, ReadNoise: l.ReadNoise}
	for i, w := range l.Weights {
		if w != 0 { // (NaN too: the loss keeps what it does not leave out)
			out.Pixels = append(out.Pixels, int32(i))
		}
	}
	pick := func(full []float64) []float64 {
		if full == nil {
			return nil
		}
		v := make([]float64, len(out.Pixels))
		for j, i := range out.Pixels {
			v[j] = full[i]
		}
		return v
	}
	if l.Kind.NeedsObserved() {
		out.Observed = pick(l.Observed)
	}
	out.Weights, out.Background = pick(l.Weights), pick(l.Background)
	if out.Pixels == nil {
		out.Pixels = []int32{} // (no pixel at all: listed all the same)
	}
	return out
}

// check validates l against an image of n pixels.
func (l *Loss) check(n int) error {
	if err := l.pixel().Check(n); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	return nil
}

// pixelLossOp is the fused image-and-loss op of gradient programs: from
// the pixel op's inputs, the observed image, the weights, the background
// and the read-out noise (a 1-vector) it computes
// the loss and its gradient with respect to the packed parameters in one
// pass over the pixels (physics.LossGradient), as the vector
// [loss, ∂loss/∂P…]. Its gradient op just scales that stored gradient, so
// a gradient run costs one backward pass and no separate forward one.
type pixelLossOp struct {
	cfg        physics.Config
	kind       LossKind
	weighted   bool
	background bool
	listed     *listedLoss // a pixel-list loss's program: its loss, set for each run
}

// listedLoss is where Simulator.Gradient puts a pixel-list loss for its
// program's run (gradProgram.listed).
type listedLoss struct{ l *physics.PixelLoss }

func (o pixelLossOp) Arity() int { return 9 }
func (o pixelLossOp) Type() hm.Type {
	return hm.NewFnType(vec64, vec64, vec64, vec64, vec64, vec64, vec64, vec64, vec64, vec64)
}
func (o pixelLossOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{1 + physics.NParams}, nil
}
func (o pixelLossOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 9 {
		return nil, fmt.Errorf("graph: pixel loss wants 9 inputs, got %d", len(vs))
	}
	in, err := physics.PixelOp{Cfg: o.cfg}.Unpack(vs[:5])
	if err != nil {
		return nil, err
	}
	var ds [4][]float64
	for i := range ds {
		t, ok := vs[5+i].(tensor.Tensor)
		if !ok {
			return nil, fmt.Errorf("graph: pixel loss input %d is %T", 5+i, vs[5+i])
		}
		if ds[i], ok = t.Data().([]float64); !ok {
			return nil, fmt.Errorf("graph: pixel loss input %d holds %T", 5+i, t.Data())
		}
	}
	obs, w, bg := ds[0], ds[1], ds[2]
	n := o.cfg.FPixels * o.cfg.SPixels
	if o.listed != nil {
		// (Simulator.Gradient, which alone sets it, has checked it.)
		pl := o.listed.l
		if pl == nil {
			return nil, fmt.Errorf("graph: pixel loss: no pixel list given")
		}
		out := make([]float64, 1+physics.NParams)
		out[0] = physics.LossGradient(&o.cfg, in, pl, out[1:])
		return tensor.New(tensor.WithShape(len(out)), tensor.WithBacking(out)), nil
	}
	if (o.kind.NeedsObserved() && len(obs) != n) || (o.weighted && len(w) != n) || (o.background && len(bg) != n) || len(ds[3]) != 1 {
		return nil, fmt.Errorf("graph: pixel loss: %d observed, %d weights, %d background and %d read-out noise values for %d pixels",
			len(obs), len(w), len(bg), len(ds[3]), n)
	}
	pl := &physics.PixelLoss{Kind: o.kind, ReadNoise: ds[3][0]}
	if o.kind.NeedsObserved() {
		pl.Observed = obs
	}
	if o.weighted {
		pl.Weights = w
	}
	if o.background {
		pl.Background = bg
	}
	if err := pl.Check(n); err != nil {
		return nil, fmt.Errorf("graph: pixel loss: %w", err)
	}
	out := make([]float64, 1+physics.NParams)
	out[0] = physics.LossGradient(&o.cfg, in, pl, out[1:])
	return tensor.New(tensor.WithShape(len(out)), tensor.WithBacking(out)), nil
}
func (o pixelLossOp) ReturnsPtr() bool     { return false }
func (o pixelLossOp) CallsExtern() bool    { return false }
func (o pixelLossOp) OverwritesInput() int { return -1 }
func (o pixelLossOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "graph.pixelloss%v%v%v%v%+v", o.kind, o.weighted, o.background, o.listed != nil, o.cfg)
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
