package graph

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/physics"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// scalars returns the values of an op's n float64 scalar inputs.
func scalars(op string, n int, vs []G.Value) ([]float64, error) {
	if len(vs) != n {
		return nil, fmt.Errorf("graph: %s wants %d scalars, got %d", op, n, len(vs))
	}
	out := make([]float64, n)
	for i, v := range vs {
		f, ok := v.(*G.F64)
		if !ok {
			return nil, fmt.Errorf("graph: %s input %d is %T, want float64 scalar", op, i, v)
		}
		out[i] = float64(*f)
	}
	return out, nil
}

// paramsOp is the forward program's parameter maths: from the n scalar
// parameter inputs (fields order) to the packed vector, on numbers
// (packValues), for model's structure. It has no gradient: gradient
// programs run the same maths on a tape (packRev) instead.
type paramsOp struct {
	model *models.Model
	n     int
}

func (o paramsOp) Arity() int { return o.n }

func (o paramsOp) Type() hm.Type {
	ts := make([]hm.Type, 0, o.n+1)
	for i := 0; i < o.n; i++ {
		ts = append(ts, G.Float64)
	}
	return hm.NewFnType(append(ts, G.TensorType{Dims: 1, Of: G.Float64})...)
}

func (o paramsOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{physics.NParams}, nil
}

func (o paramsOp) Do(vs ...G.Value) (G.Value, error) {
	vals, err := scalars("params", o.n, vs)
	if err != nil {
		return nil, err
	}
	out := packValues(o.model, vals)
	if len(out) != physics.NParams {
		return nil, fmt.Errorf("graph: %d packed parameters, want %d", len(out), physics.NParams)
	}
	return tensor.New(tensor.WithShape(len(out)), tensor.WithBacking(out)), nil
}

func (o paramsOp) ReturnsPtr() bool      { return false }
func (o paramsOp) CallsExtern() bool     { return false }
func (o paramsOp) OverwritesInput() int  { return -1 }
func (o paramsOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "graph.params%d", o.n) }
func (o paramsOp) Hashcode() uint32      { return hashOf(o) }
func (o paramsOp) String() string        { return fmt.Sprintf("params%d", o.n) }

// unpackOp reads element i of a float64 vector of n as a scalar; its
// gradient is the one-hot vector (oneHotOp).
type unpackOp struct{ i, n int }

func (o unpackOp) Arity() int { return 1 }
func (o unpackOp) Type() hm.Type {
	return hm.NewFnType(G.TensorType{Dims: 1, Of: G.Float64}, G.Float64)
}
func (o unpackOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }
func (o unpackOp) Do(vs ...G.Value) (G.Value, error) {
	t, ok := vs[0].(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("graph: unpack input is %T", vs[0])
	}
	d, ok := t.Data().([]float64)
	if !ok || o.i >= len(d) {
		return nil, fmt.Errorf("graph: unpack element %d of %T", o.i, t.Data())
	}
	v := G.F64(d[o.i])
	return &v, nil
}
func (o unpackOp) ReturnsPtr() bool      { return false }
func (o unpackOp) CallsExtern() bool     { return false }
func (o unpackOp) OverwritesInput() int  { return -1 }
func (o unpackOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "graph.unpack%d/%d", o.i, o.n) }
func (o unpackOp) Hashcode() uint32      { return hashOf(o) }
func (o unpackOp) String() string        { return fmt.Sprintf("unpack%d", o.i) }

func hashOf(o interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	o.WriteHash(h)
	return h.Sum32()
}

func (o unpackOp) DiffWRT(int) []bool { return []bool{true} }

func (o unpackOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(oneHotOp(o), grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

// oneHotOp makes the vector of n zeros with the scalar input at i.
type oneHotOp unpackOp

func (o oneHotOp) Arity() int { return 1 }
func (o oneHotOp) Type() hm.Type {
	return hm.NewFnType(G.Float64, G.TensorType{Dims: 1, Of: G.Float64})
}
func (o oneHotOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.Shape{o.n}, nil }
func (o oneHotOp) Do(vs ...G.Value) (G.Value, error) {
	f, ok := vs[0].(*G.F64)
	if !ok || o.i >= o.n {
		return nil, fmt.Errorf("graph: one-hot of %T at %d of %d", vs[0], o.i, o.n)
	}
	out := make([]float64, o.n)
	out[o.i] = float64(*f)
	return tensor.New(tensor.WithShape(o.n), tensor.WithBacking(out)), nil
}
func (o oneHotOp) ReturnsPtr() bool      { return false }
func (o oneHotOp) CallsExtern() bool     { return false }
func (o oneHotOp) OverwritesInput() int  { return -1 }
func (o oneHotOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "graph.onehot%d/%d", o.i, o.n) }
func (o oneHotOp) Hashcode() uint32      { return hashOf(o) }
func (o oneHotOp) String() string        { return fmt.Sprintf("onehot%d", o.i) }
