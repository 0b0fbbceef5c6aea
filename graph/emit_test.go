package graph

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/gobragg/gobragg/models"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// emit adds key's inputs to g and the parameter maths on them as primitive
// ops (the Graph algebra), gathered into the packed parameter vector the
// pixel ops read, so that autograd carries the pixel op's gradient back
// to every input: what gradient programs were, kept to check the packed
// bits (TestPackedBits) and the tape's gradient (TestGraphLoss).
func emit(g *G.ExprGraph, key Key, m *models.Model) (inputs []*G.Node, tables [4]*G.Node, pv *G.Node, err error) {
	inputs, _, tables = emitInputs(g, key)
	A := &models.Graph{G: g}
	var np models.Params[*G.Node]
	for i, f := range fields(&np, key.FromMatrix, key.CellLengths) {
		*f.ptr = inputs[i]
	}
	packed := pack[*G.Node](A, m, &np)
	if A.Err != nil {
		return nil, tables, nil, A.Err
	}
	pv, err = G.ApplyOp(packOp{len(packed)}, packed...)
	if err != nil {
		return nil, tables, nil, fmt.Errorf("graph: packing parameters: %w", err)
	}
	return inputs, tables, pv, nil
}

// packOp gathers n float64 scalar nodes into one vector node, so that the
// scalar parameter maths can feed a fused tensor op. Its gradient is the
// matching element of the output gradient (unpackOp).
type packOp struct{ n int }

func (o packOp) Arity() int { return o.n }

func (o packOp) Type() hm.Type { return paramsOp{n: o.n}.Type() }

func (o packOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.Shape{o.n}, nil }

func (o packOp) Do(vs ...G.Value) (G.Value, error) {
	out, err := scalars("pack", o.n, vs)
	if err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(o.n), tensor.WithBacking(out)), nil
}

func (o packOp) ReturnsPtr() bool      { return false }
func (o packOp) CallsExtern() bool     { return false }
func (o packOp) OverwritesInput() int  { return -1 }
func (o packOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "graph.pack%d", o.n) }
func (o packOp) Hashcode() uint32      { return hashOf(o) }
func (o packOp) String() string        { return fmt.Sprintf("pack%d", o.n) }

func (o packOp) DiffWRT(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

func (o packOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	res := make(G.Nodes, len(inputs))
	for i := range inputs {
		n, err := G.ApplyOp(unpackOp{i, o.n}, grad)
		if err != nil {
			return nil, err
		}
		res[i] = n
	}
	return res, nil
}
