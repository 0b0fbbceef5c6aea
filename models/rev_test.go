package models

import (
	"math"
	"testing"
)

// revFormula exercises every operation and fold of an algebra: constants
// 0, 1 and −1 on either side, both operands variable, and the unary
// operations.
func revFormula[T any](A Alg[T], x, y T) []T {
	one, zero, neg := A.Const(1), A.Const(0), A.Const(-1)
	s := A.Add(A.Mul(x, y), A.Sin(x))                   // emitted
	t := A.Sub(A.Div(s, A.Sqrt(A.Mul(y, y))), A.Cos(y)) // emitted
	u := A.Add(A.Mul(one, t), zero)                     // right, left: t itself
	v := A.Sub(zero, A.Mul(neg, A.Div(u, one)))         // negRight of negRight: u
	w := A.Mul(x, zero)                                 // a constant 0
	return []T{v, A.Neg(A.Mul(v, x)), A.Add(w, y), A.Div(zero, y), A.Mul(A.Const(2), A.Const(3))}
}

// TestRev: Rev's values are Folded's bit for bit, and its gradient of
// Σ g_i·out_i is that of central differences of the formula in float64
// (relative 1e-8; the step 1e-6 of each variable), at several points;
// outputs that folded to constants carry no gradient.
func TestRev(t *testing.T) {
	gout := []float64{0.7, -1.3, 2.1, 5, 11}
	f := func(x, y float64) float64 {
		var sum float64
		for i, o := range revFormula[float64](Float{}, x, y) {
			sum += gout[i] * o
		}
		return sum
	}
	for _, p := range [][2]float64{{0.3, 1.7}, {-2.1, 0.4}, {1.1, -3.3}} {
		var r Rev
		x, y := r.Var(p[0]), r.Var(p[1])
		outs := revFormula[RNum](&r, x, y)
		folded := revFormula[Num](Folded{}, Num{V: p[0]}, Num{V: p[1]})
		for i := range outs {
			if math.Float64bits(outs[i].V) != math.Float64bits(folded[i].V) || outs[i].Const != folded[i].Const {
				t.Errorf("%v: output %d = %v, Folded %v", p, i, outs[i], folded[i])
			}
		}
		grad, _ := r.Grad(outs, gout, []RNum{x, y}, nil)
		const h = 1e-6
		want := []float64{(f(p[0]+h, p[1]) - f(p[0]-h, p[1])) / (2 * h), (f(p[0], p[1]+h) - f(p[0], p[1]-h)) / (2 * h)}
		for j := range grad {
			if math.Abs(grad[j]-want[j]) > 1e-8*math.Max(1, math.Abs(want[j])) {
				t.Errorf("%v: ∂/∂var%d = %.12g, central difference %.12g", p, j, grad[j], want[j])
			}
		}
	}
}
