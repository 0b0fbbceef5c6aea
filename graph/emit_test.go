package graph

import (
	"fmt"

	"github.com/gobragg/gobragg/models"
	G "gorgonia.org/gorgonia"
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
