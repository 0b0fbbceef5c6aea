package models

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
)

// foldExprs are the folding test's expressions, each mixing constants with
// one input x, in any algebra.
func foldExprs[T any]() []func(A Alg[T], x T) T {
	return []func(A Alg[T], x T) T{
		func(A Alg[T], x T) T { return A.Mul(A.Const(0), x) },
		func(A Alg[T], x T) T { return A.Mul(x, A.Const(1)) },
		func(A Alg[T], x T) T { return A.Add(x, A.Const(0)) },
		func(A Alg[T], x T) T { return A.Add(A.Const(0), x) },
		func(A Alg[T], x T) T { return A.Sub(x, A.Const(0)) },
		func(A Alg[T], x T) T { return A.Div(x, A.Const(1)) },
		func(A Alg[T], x T) T { return A.Div(A.Const(0), x) },
		func(A Alg[T], x T) T { return A.Add(A.Mul(A.Cos(A.Const(0.3)), A.Sqrt(A.Const(2))), x) },
		func(A Alg[T], x T) T { return A.Sub(A.Const(0), x) },
		func(A Alg[T], x T) T { return A.Mul(A.Const(-1), x) },
		func(A Alg[T], x T) T { return A.Neg(A.Mul(x, A.Const(-1))) },
		func(A Alg[T], x T) T { return A.Sub(A.Mul(x, A.Sin(x)), A.Mul(A.Const(2), x)) },
	}
}

// TestGraphFolding: the graph algebra folds constants and the identities
// of 0, 1 and −1 without emitting nodes; what it computes is what Folded
// computes, bit for bit, at every x (±0 and ±∞ included, where the folds
// decide the sign of a zero or keep a NaN out), and what Float computes
// at ordinary x.
func TestGraphFolding(t *testing.T) {
	names := []string{"0·x", "x·1", "x+0", "0+x", "x−0", "x/1", "0/x", "cos(0.3)·sqrt(2)+x", "0−x", "−1·x",
		"−(x·−1)", "x·sin(x)−2·x"}
	// Whether the graph emits no operation node for the expression (gorgonia
	// itself drops a negation of a negation).
	folds := []bool{true, true, true, true, true, true, true, false, false, false, true, false}
	graphs, nums, floats := foldExprs[*G.Node](), foldExprs[Num](), foldExprs[float64]()
	for i, name := range names {
		g := G.NewGraph()
		A := &Graph{G: g}
		x := G.NewScalar(g, G.Float64, G.WithName("x"))
		out := graphs[i](A, x)
		if A.Err != nil {
			t.Fatalf("%s: %v", name, A.Err)
		}
		_, isConst := A.value(out)
		if folded := isConst || out == x; folded != folds[i] {
			t.Errorf("%s: folded %v, want %v", name, folded, folds[i])
		}
		var v G.Value
		if !isConst && out != x {
			G.Read(out, &v)
		}
		vm := G.NewTapeMachine(g)
		for _, xv := range []float64{0.7, -2, math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1)} {
			var got float64
			switch {
			case isConst:
				got, _ = A.value(out)
			case out == x:
				got = xv
			default:
				vm.Reset()
				if err := G.Let(x, xv); err != nil {
					t.Fatal(err)
				}
				if err := vm.RunAll(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got = v.Data().(float64)
			}
			num := nums[i](Folded{}, Num{V: xv})
			if math.Float64bits(got) != math.Float64bits(num.V) {
				t.Errorf("%s at x=%g: graph %g, Folded %g", name, xv, got, num.V)
			}
			if num.Const != isConst {
				t.Errorf("%s: Folded's constant flag %v, graph's %v", name, num.Const, isConst)
			}
			if xv != 0 && !math.IsInf(xv, 0) {
				if want := floats[i](Float{}, xv); got != want {
					t.Errorf("%s at x=%g: graph %.17g, Float %.17g", name, xv, got, want)
				}
			}
		}
		vm.Close()
	}
}
