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
// packed parameter vector (NParams float64) and the structure-factor table
// to the photon image, shape (SPixels, FPixels). Everything structural is
// in Cfg and in the op's hash.
type PixelOp struct{ Cfg Config }

var vec64 = G.TensorType{Dims: 1, Of: G.Float64}

// Arity implements gorgonia.Op.
func (op PixelOp) Arity() int { return 2 }

// Type implements gorgonia.Op.
func (op PixelOp) Type() hm.Type {
	return hm.NewFnType(vec64, vec64, G.TensorType{Dims: 2, Of: G.Float64})
}

// InferShape implements gorgonia.Op.
func (op PixelOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.Cfg.SPixels, op.Cfg.FPixels}, nil
}

// Do implements gorgonia.Op.
func (op PixelOp) Do(vs ...G.Value) (G.Value, error) {
	if len(vs) != 2 {
		return nil, fmt.Errorf("physics: pixel op wants 2 inputs, got %d", len(vs))
	}
	p, err := float64s(vs[0], NParams)
	if err != nil {
		return nil, fmt.Errorf("physics: pixel op parameters: %w", err)
	}
	fhkl, err := float64s(vs[1], op.Cfg.TableLen())
	if err != nil {
		return nil, fmt.Errorf("physics: pixel op structure factors: %w", err)
	}
	out := make([]float64, op.Cfg.SPixels*op.Cfg.FPixels)
	Render(&op.Cfg, p, fhkl, out)
	return tensor.New(tensor.WithShape(op.Cfg.SPixels, op.Cfg.FPixels), tensor.WithBacking(out)), nil
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
