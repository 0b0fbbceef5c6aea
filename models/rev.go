package models

import "math"

// Rev is the Folded algebra recording a tape for reverse-mode
// differentiation: each value that is not a constant has a step on the
// tape with its operands' steps and the partial derivatives by them, and
// Grad carries adjoints of results back to the variables. Values are
// Folded's, bit for bit (the same folds and operations); the derivatives
// are those of the operations (Add 1, 1; Sub 1, −1; Mul y, x; Div 1/y,
// −(x/y)/y; Neg −1; Sin cos; Cos −sin; Sqrt ½/√x), and a fold that gives
// an operand gives its derivative, one that gives a constant none. This
// is what autograd through Graph's nodes computes, without a graph: the
// gradient programs use it for the parameter maths (package graph).
type Rev struct {
	tape []revStep
}

// RNum is a Rev value: its number, whether it is a constant, and (for a
// value that is not) its step on the tape.
type RNum struct {
	V     float64
	Const bool
	at    int32
}

// revStep is one recorded operation: the steps of its operands (−1 for a
// constant or none) and its partial derivatives by them.
type revStep struct {
	a, b   int32
	da, db float64
}

// Reset empties the tape (values from before are not to be used again).
func (r *Rev) Reset() { r.tape = r.tape[:0] }

// Var returns a variable of value v: a step of its own.
func (r *Rev) Var(v float64) RNum {
	r.tape = append(r.tape, revStep{a: -1, b: -1})
	return RNum{V: v, at: int32(len(r.tape) - 1)}
}

func (r *Rev) push(v float64, x RNum, dx float64, y RNum, dy float64) RNum {
	s := revStep{a: -1, b: -1}
	if !x.Const {
		s.a, s.da = x.at, dx
	}
	if !y.Const {
		s.b, s.db = y.at, dy
	}
	r.tape = append(r.tape, s)
	return RNum{V: v, at: int32(len(r.tape) - 1)}
}

var revNone = RNum{Const: true}

// bin applies rule to x and y as Folded does; op gives the value and the
// partial derivatives of an operation it must compute.
func (r *Rev) bin(rule foldRule, op func(a, b float64) (v, da, db float64), x, y RNum) RNum {
	f, v := rule(x.V, x.Const, y.V, y.Const)
	if res, done := applyFold[RNum](r, f, v, x, y); done {
		return res
	}
	v, da, db := op(x.V, y.V)
	return r.push(v, x, da, y, db)
}

func (r *Rev) Const(x float64) RNum { return RNum{V: x, Const: true} }

func (r *Rev) Add(x, y RNum) RNum {
	return r.bin(foldAdd, func(a, b float64) (float64, float64, float64) { return a + b, 1, 1 }, x, y)
}

func (r *Rev) Sub(x, y RNum) RNum {
	return r.bin(foldSub, func(a, b float64) (float64, float64, float64) { return a - b, 1, -1 }, x, y)
}

func (r *Rev) Mul(x, y RNum) RNum {
	return r.bin(foldMul, func(a, b float64) (float64, float64, float64) { return a * b, b, a }, x, y)
}

func (r *Rev) Div(x, y RNum) RNum {
	return r.bin(foldDiv, func(a, b float64) (float64, float64, float64) {
		v := a / b
		return v, 1 / b, -v / b
	}, x, y)
}

// un is a unary operation: f of a constant folded, else recorded with
// derivative d.
func (r *Rev) un(x RNum, v, d float64) RNum {
	if x.Const {
		return RNum{V: v, Const: true}
	}
	return r.push(v, x, d, revNone, 0)
}

func (r *Rev) Neg(x RNum) RNum { return r.un(x, -x.V, -1) }
func (r *Rev) Sin(x RNum) RNum { return r.un(x, math.Sin(x.V), math.Cos(x.V)) }
func (r *Rev) Cos(x RNum) RNum { return r.un(x, math.Cos(x.V), -math.Sin(x.V)) }
func (r *Rev) Sqrt(x RNum) RNum {
	v := math.Sqrt(x.V)
	return r.un(x, v, 0.5/v)
}

// Grad returns the adjoints of the variables vars given those of the
// results outs (gout[i] of outs[i]): Σ_i gout[i]·∂outs[i]/∂var, in one
// sweep of the tape backwards. adj is scratch space (grown as needed,
// returned for reuse).
func (r *Rev) Grad(outs []RNum, gout []float64, vars []RNum, adj []float64) (grad, scratch []float64) {
	if cap(adj) < len(r.tape) {
		adj = make([]float64, len(r.tape))
	}
	adj = adj[:len(r.tape)]
	clear(adj)
	for i, o := range outs {
		if !o.Const {
			adj[o.at] += gout[i]
		}
	}
	for k := len(r.tape) - 1; k >= 0; k-- {
		s, g := r.tape[k], adj[k]
		if s.a >= 0 {
			adj[s.a] += g * s.da
		}
		if s.b >= 0 {
			adj[s.b] += g * s.db
		}
	}
	grad = make([]float64, len(vars))
	for i, v := range vars {
		if !v.Const {
			grad[i] = adj[v.at]
		}
	}
	return grad, adj
}
