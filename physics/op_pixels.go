package physics

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// PixelOp is the fused gorgonia op for the per-pixel physics: it maps the
// packed parameter vector (NParams float64), the structure-factor table,
// the source table, the mosaic table and the mask (the fields of Inputs, in
// that order) to the photon image, shape (SPixels, FPixels). Everything
// structural is in Cfg and in the op's hash.
type PixelOp struct {
	Cfg Config
	// Side, when set, receives the solid angle (SolidAngle) of each run,
	// summed by the same pass, and where interpolation switched off. It is
	// not part of the op's hash: it carries results out, not inputs in.
	Side *Side
}

// Side holds what a PixelOp run reports besides the image, and the
// callbacks of a run: progress (called with the rows rendered so far and
// their total) and, for a float32 image, each row as it is finished
// (RowDone: its index and values; a row rendered again is reported
// again), both from the rendering goroutines; nil: none.
type Side struct {
	SolidAngle float64
	Cutoff     int        // Report's: the interpolation's switch-off pixel, −1 for none
	CutoffHKL  [3]float64 // and the indices that caused it
	Progress   func(rows, total int)
	RowDone    func(s int, row []float32)
}

// progress returns the row callback of RenderProgress for side.
func (side *Side) progress(total int) func(int) {
	if side == nil || side.Progress == nil {
		return nil
	}
	p := side.Progress
	return func(rows int) { p(rows, total) }
}

var vec64 = G.TensorType{Dims: 1, Of: G.Float64}

// Arity implements gorgonia.Op.
func (op PixelOp) Arity() int { return 5 }

// Type implements gorgonia.Op.
func (op PixelOp) Type() hm.Type {
	img := G.TensorType{Dims: 2, Of: G.Float64}
	if op.Cfg.Float32 {
		img.Of = G.Float32
	}
	return hm.NewFnType(vec64, vec64, vec64, vec64, vec64, img)
}

// InferShape implements gorgonia.Op.
func (op PixelOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.Cfg.SPixels, op.Cfg.FPixels}, nil
}

// Do implements gorgonia.Op.
func (op PixelOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 5 {
		return nil, fmt.Errorf("physics: pixel op wants 5 inputs, got %d", len(vs))
	}
	in, err := op.Unpack(vs)
	if err != nil {
		return nil, err
	}
	n := op.Cfg.SPixels * op.Cfg.FPixels
	var backing any
	var rep Report
	if op.Cfg.Float32 {
		out := makeHuge[float32](n)
		var rowDone func(int)
		if op.Side != nil && op.Side.RowDone != nil {
			done, fp := op.Side.RowDone, op.Cfg.FPixels
			rowDone = func(s int) { done(s, out[s*fp:(s+1)*fp:(s+1)*fp]) }
		}
		rep = renderReport(&op.Cfg, in, out, op.Side.progress(op.Cfg.SPixels), rowDone)
		backing = out
	} else {
		out := makeHuge[float64](n)
		rep = RenderReport(&op.Cfg, in, out, op.Side.progress(op.Cfg.SPixels))
		backing = out
	}
	if op.Side != nil {
		op.Side.SolidAngle, op.Side.Cutoff, op.Side.CutoffHKL = rep.SolidAngle, rep.Cutoff, rep.CutoffHKL
	}
	return tensor.New(tensor.WithShape(op.Cfg.SPixels, op.Cfg.FPixels), tensor.WithBacking(backing)), nil
}

// DiffWRT implements gorgonia.SDOp: the image is differentiable in the
// packed parameters only (the tables are fixed data).
func (op PixelOp) DiffWRT(int) []bool { return []bool{true, false, false, false, false} }

// SymDiff implements gorgonia.SDOp: the parameters' gradient is the fused
// backward op PixelGradOp of the same inputs and the image's gradient.
func (op PixelOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != 5 {
		return nil, fmt.Errorf("physics: pixel op has %d inputs, want 5", len(inputs))
	}
	if op.Cfg.Float32 {
		return nil, fmt.Errorf("physics: a float32 image is forward-only; gradients need float64 storage")
	}
	d, err := G.ApplyOp(PixelGradOp{Cfg: op.Cfg}, append(append(G.Nodes{}, inputs...), grad)...)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d, nil, nil, nil, nil}, nil
}

// Unpack checks and unpacks the op's five input values (fused ops with
// the same inputs use it too).
func (op PixelOp) Unpack(vs []G.Value) (*Inputs, error) {
	c := &op.Cfg
	var in Inputs
	for i, t := range []struct {
		name string
		dst  *[]float64
		n    int
	}{{"parameters", &in.P, NParams}, {"structure factors", &in.Fhkl, c.TableLen()},
		{"sources", &in.Sources, c.Sources * SourceCols}, {"mosaic domains", &in.Mosaic, c.Domains * MosaicCols},
		{"mask", &in.Mask, c.MaskLen()}} {
		d, err := float64s(vs[i], t.n)
		if err != nil {
			return nil, fmt.Errorf("physics: pixel op %s: %w", t.name, err)
		}
		*t.dst = d
	}
	return &in, nil
}

func float64s(v G.Value, n int) ([]float64, error) {
	t, ok := v.(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("want a tensor, got %T", v)
	}
	d, ok := t.Data().([]float64)
	if !ok {
		return nil, fmt.Errorf("want float64 data, got %T", t.Data())
	}
	if len(d) != n {
		return nil, fmt.Errorf("want %d values, got %d", n, len(d))
	}
	return d, nil
}

// ReturnsPtr implements gorgonia.Op.
func (op PixelOp) ReturnsPtr() bool { return false }

// CallsExtern implements gorgonia.Op.
func (op PixelOp) CallsExtern() bool { return false }

// OverwritesInput implements gorgonia.Op.
func (op PixelOp) OverwritesInput() int { return -1 }

// WriteHash implements gorgonia.Op; it encodes the whole Config.
func (op PixelOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "physics.pixels%+v", op.Cfg) }

// Hashcode implements gorgonia.Op.
func (op PixelOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op PixelOp) String() string {
	return fmt.Sprintf("pixels(%dx%d,os=%d)", op.Cfg.FPixels, op.Cfg.SPixels, op.Cfg.Oversample)
}

// PixelGradOp is PixelOp's backward op: from PixelOp's five inputs and the
// loss gradient with respect to the image (SPixels×FPixels) it computes the
// gradient with respect to the packed parameters (NParams values), with
// Gradient.
type PixelGradOp struct{ Cfg Config }

// Arity implements gorgonia.Op.
func (op PixelGradOp) Arity() int { return 6 }

// Type implements gorgonia.Op.
func (op PixelGradOp) Type() hm.Type {
	return hm.NewFnType(vec64, vec64, vec64, vec64, vec64, G.TensorType{Dims: 2, Of: G.Float64}, vec64)
}

// InferShape implements gorgonia.Op.
func (op PixelGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{NParams}, nil
}

// Do implements gorgonia.Op.
func (op PixelGradOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 6 {
		return nil, fmt.Errorf("physics: pixel gradient op wants 6 inputs, got %d", len(vs))
	}
	in, err := PixelOp{Cfg: op.Cfg}.Unpack(vs[:5])
	if err != nil {
		return nil, err
	}
	dI, err := float64s(vs[5], op.Cfg.SPixels*op.Cfg.FPixels)
	if err != nil {
		return nil, fmt.Errorf("physics: pixel gradient op image gradient: %w", err)
	}
	out := make([]float64, NParams)
	Gradient(&op.Cfg, in, dI, out)
	return tensor.New(tensor.WithShape(NParams), tensor.WithBacking(out)), nil
}

// ReturnsPtr implements gorgonia.Op.
func (op PixelGradOp) ReturnsPtr() bool { return false }

// CallsExtern implements gorgonia.Op.
func (op PixelGradOp) CallsExtern() bool { return false }

// OverwritesInput implements gorgonia.Op.
func (op PixelGradOp) OverwritesInput() int { return -1 }

// WriteHash implements gorgonia.Op; it encodes the whole Config.
func (op PixelGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "physics.pixelgrad%+v", op.Cfg) }

// Hashcode implements gorgonia.Op.
func (op PixelGradOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op PixelGradOp) String() string {
	return fmt.Sprintf("pixelgrad(%dx%d,os=%d)", op.Cfg.FPixels, op.Cfg.SPixels, op.Cfg.Oversample)
}
