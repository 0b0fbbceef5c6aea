package models

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
)

// TestGraphFolding: the graph algebra folds constants and the identities
// of 0, 1 and −1 without emitting nodes, and what it emits computes what
// Float computes. Every expression mixes the constants with one input x.
func TestGraphFolding(t *testing.T) {
	const xv = 0.7
	exprs := []struct {
		name  string
		folds bool // no operation node is emitted
		f     func(A Alg[*G.Node], x *G.Node) *G.Node
		want  func(x float64) float64
	}{
		{"0·x", true, func(A Alg[*G.Node], x *G.Node) *G.Node { return A.Mul(A.Const(0), x) }, func(x float64) float64 { return 0 * x }},
		{"x·1", true, func(A Alg[*G.Node], x *G.Node) *G.Node { return A.Mul(x, A.Const(1)) }, func(x float64) float64 { return x * 1 }},
		{"x+0", true, func(A Alg[*G.Node], x *G.Node) *G.Node { return A.Add(x, A.Const(0)) }, func(x float64) float64 { return x + 0 }},
		{"x−0", true, func(A Alg[*G.Node], x *G.Node) *G.Node { return A.Sub(x, A.Const(0)) }, func(x float64) float64 { return x - 0 }},
		{"x/1", true, func(A Alg[*G.Node], x *G.Node) *G.Node { return A.Div(x, A.Const(1)) }, func(x float64) float64 { return x / 1 }},
		{"0/x", true, func(A Alg[*G.Node], x *G.Node) *G.Node { return A.Div(A.Const(0), x) }, func(x float64) float64 { return 0 / x }},
		{"cos(0.3)·sqrt(2)+x", false, func(A Alg[*G.Node], x *G.Node) *G.Node {
			return A.Add(A.Mul(A.Cos(A.Const(0.3)), A.Sqrt(A.Const(2))), x)
		}, func(x float64) float64 { return math.Cos(0.3)*math.Sqrt(2) + x }},
		{"0−x", false, func(A Alg[*G.Node], x *G.Node) *G.Node { return A.Sub(A.Const(0), x) }, func(x float64) float64 { return 0 - x }},
		{"−1·x", false, func(A Alg[*G.Node], x *G.Node) *G.Node { return A.Mul(A.Const(-1), x) }, func(x float64) float64 { return -1 * x }},
		{"x·sin(x)−2·x", false, func(A Alg[*G.Node], x *G.Node) *G.Node {
			return A.Sub(A.Mul(x, A.Sin(x)), A.Mul(A.Const(2), x))
		}, func(x float64) float64 { return x*math.Sin(x) - 2*x }},
	}
	for _, e := range exprs {
		g := G.NewGraph()
		A := &Graph{G: g}
		x := G.NewScalar(g, G.Float64, G.WithName("x"))
		out := e.f(A, x)
		if A.Err != nil {
			t.Fatalf("%s: %v", e.name, A.Err)
		}
		if e.folds {
			v, ok := A.value(out)
			switch {
			case out == x:
				v, ok = xv, true
			case !ok:
				t.Errorf("%s: emitted %v instead of folding", e.name, out.Op())
				continue
			}
			if v != e.want(xv) {
				t.Errorf("%s folded to %g, Float gives %g", e.name, v, e.want(xv))
			}
			continue
		}
		var v G.Value
		G.Read(out, &v)
		vm := G.NewTapeMachine(g)
		if err := G.Let(x, xv); err != nil {
			t.Fatal(err)
		}
		if err := vm.RunAll(); err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if got := v.Data().(float64); got != e.want(xv) {
			t.Errorf("%s = %.17g, Float gives %.17g", e.name, got, e.want(xv))
		}
		vm.Close()
	}
}
