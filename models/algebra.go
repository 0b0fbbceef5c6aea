package models

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
)

// Alg is the arithmetic that the parameter maths (cell → vectors, rotations,
// detector placement) is written against. One formula, three evaluations:
// Float computes numbers directly (validation, headers, structural choices),
// Graph emits gorgonia nodes so that autograd can carry gradients from the
// fused pixel op back to the user's parameters, and Folded computes the
// numbers Graph's nodes compute, bit for bit (the forward program).
type Alg[T any] interface {
	Const(x float64) T
	Add(x, y T) T
	Sub(x, y T) T
	Mul(x, y T) T
	Div(x, y T) T
	Neg(x T) T
	Sin(x T) T
	Cos(x T) T
	Sqrt(x T) T
}

// V3 is a Cartesian 3-vector over an algebra's scalar type.
type V3[T any] [3]T

// Float is the plain float64 algebra.
type Float struct{}

func (Float) Const(x float64) float64  { return x }
func (Float) Add(x, y float64) float64 { return x + y }
func (Float) Sub(x, y float64) float64 { return x - y }
func (Float) Mul(x, y float64) float64 { return x * y }
func (Float) Div(x, y float64) float64 { return x / y }
func (Float) Neg(x float64) float64    { return -x }
func (Float) Sin(x float64) float64    { return math.Sin(x) }
func (Float) Cos(x float64) float64    { return math.Cos(x) }
func (Float) Sqrt(x float64) float64   { return math.Sqrt(x) }

// Graph emits float64 scalar nodes into G. The first error sticks in Err and
// later operations become no-ops returning nil, so a builder checks Err once
// at the end ("check, then kernel").
//
// Operations on constants are folded, and multiplying by 0 or 1, adding 0
// and the like emit no node: the convention vectors are mostly 0 and 1,
// and every node costs compile time (gorgonia's register allocation grows
// with the square of the node count). Folded computes the same values bit
// for bit (same rules, foldAdd … foldDiv); Float computes them up to the
// sign of zeros, for finite operands.
type Graph struct {
	G      *G.ExprGraph
	Err    error
	consts map[*G.Node]float64
}

func (g *Graph) bin(f func(a, b *G.Node) (*G.Node, error), x, y *G.Node) *G.Node {
	if g.Err != nil {
		return nil
	}
	n, err := f(x, y)
	if err != nil {
		g.Err = fmt.Errorf("models: graph op: %w", err)
	}
	return n
}

func (g *Graph) un(f func(a *G.Node) (*G.Node, error), x *G.Node) *G.Node {
	if g.Err != nil {
		return nil
	}
	n, err := f(x)
	if err != nil {
		g.Err = fmt.Errorf("models: graph op: %w", err)
	}
	return n
}

// value reports whether n is a constant this algebra made, and its value.
func (g *Graph) value(n *G.Node) (float64, bool) {
	v, ok := g.consts[n]
	return v, ok
}

func (g *Graph) Const(x float64) *G.Node {
	if g.consts == nil {
		g.consts = map[*G.Node]float64{}
	}
	n := G.NewConstant(x)
	g.consts[n] = x
	return n
}

// A fold is what an algebra that knows its constants (Graph, Folded) does
// with a binary operation: emit it, or give a constant, an operand or an
// operand's negation instead. The fold functions below are the rules, in
// one place for both algebras.
type fold uint8

const (
	emit     fold = iota // compute the operation
	constant             // the value the rule returns
	left                 // x itself
	right                // y itself
	negLeft              // −x
	negRight             // −y
)

// A foldRule decides an operation on x (value a, a constant when ca) and
// y (b, cb).
type foldRule func(a float64, ca bool, b float64, cb bool) (fold, float64)

func foldAdd(a float64, ca bool, b float64, cb bool) (fold, float64) {
	switch {
	case ca && cb:
		return constant, a + b
	case ca && a == 0:
		return right, 0
	case cb && b == 0:
		return left, 0
	}
	return emit, 0
}

func foldSub(a float64, ca bool, b float64, cb bool) (fold, float64) {
	switch {
	case ca && cb:
		return constant, a - b
	case cb && b == 0:
		return left, 0
	case ca && a == 0:
		return negRight, 0
	}
	return emit, 0
}

func foldMul(a float64, ca bool, b float64, cb bool) (fold, float64) {
	switch {
	case ca && cb:
		return constant, a * b
	case (ca && a == 0) || (cb && b == 0):
		return constant, 0
	case ca && a == 1:
		return right, 0
	case cb && b == 1:
		return left, 0
	case ca && a == -1:
		return negRight, 0
	case cb && b == -1:
		return negLeft, 0
	}
	return emit, 0
}

func foldDiv(a float64, ca bool, b float64, cb bool) (fold, float64) {
	switch {
	case ca && cb:
		return constant, a / b
	case ca && a == 0:
		return constant, 0
	case cb && b == 1:
		return left, 0
	}
	return emit, 0
}

// applyFold is what fold f (v: the rule's constant) gives for x and y in
// algebra A, for every algebra that folds (Graph, Folded, Rev); done is
// false when the operation must be computed.
func applyFold[T any](A Alg[T], f fold, v float64, x, y T) (r T, done bool) {
	switch f {
	case constant:
		return A.Const(v), true
	case left:
		return x, true
	case right:
		return y, true
	case negLeft:
		return A.Neg(x), true
	case negRight:
		return A.Neg(y), true
	}
	return r, false
}

// binFold applies rule to x and y, emitting op only when it must.
func (g *Graph) binFold(rule foldRule, op func(a, b *G.Node) (*G.Node, error), x, y *G.Node) *G.Node {
	a, ca := g.value(x)
	b, cb := g.value(y)
	f, v := rule(a, ca, b, cb)
	if r, done := applyFold[*G.Node](g, f, v, x, y); done {
		return r
	}
	return g.bin(op, x, y)
}

func (g *Graph) Add(x, y *G.Node) *G.Node { return g.binFold(foldAdd, G.Add, x, y) }
func (g *Graph) Sub(x, y *G.Node) *G.Node { return g.binFold(foldSub, G.Sub, x, y) }
func (g *Graph) Mul(x, y *G.Node) *G.Node { return g.binFold(foldMul, G.Mul, x, y) }
func (g *Graph) Div(x, y *G.Node) *G.Node { return g.binFold(foldDiv, G.Div, x, y) }

// fold1 is f of a constant folded, else the node op emits.
func (g *Graph) fold1(x *G.Node, f func(float64) float64, op func(*G.Node) (*G.Node, error)) *G.Node {
	if a, ok := g.value(x); ok {
		return g.Const(f(a))
	}
	return g.un(op, x)
}

func (g *Graph) Neg(x *G.Node) *G.Node {
	return g.fold1(x, func(a float64) float64 { return -a }, G.Neg)
}
func (g *Graph) Sin(x *G.Node) *G.Node  { return g.fold1(x, math.Sin, G.Sin) }
func (g *Graph) Cos(x *G.Node) *G.Node  { return g.fold1(x, math.Cos, G.Cos) }
func (g *Graph) Sqrt(x *G.Node) *G.Node { return g.fold1(x, math.Sqrt, G.Sqrt) }

// Num is a Folded value: a number and whether it is a constant.
type Num struct {
	V     float64
	Const bool
}

// Folded is the float64 algebra with Graph's folds: it gives the values a
// Graph program computes, bit for bit, where Float can differ in the sign
// of a zero or with non-finite operands (Float's 0·x is −0 for negative x
// and NaN for infinite x; the graph's is 0). Parameters enter as
// non-constant Nums.
type Folded struct{}

func (A Folded) bin(rule foldRule, op func(a, b float64) float64, x, y Num) Num {
	f, v := rule(x.V, x.Const, y.V, y.Const)
	if r, done := applyFold[Num](A, f, v, x, y); done {
		return r
	}
	return Num{V: op(x.V, y.V)}
}

func (Folded) Const(x float64) Num { return Num{x, true} }
func (A Folded) Add(x, y Num) Num {
	return A.bin(foldAdd, func(a, b float64) float64 { return a + b }, x, y)
}
func (A Folded) Sub(x, y Num) Num {
	return A.bin(foldSub, func(a, b float64) float64 { return a - b }, x, y)
}
func (A Folded) Mul(x, y Num) Num {
	return A.bin(foldMul, func(a, b float64) float64 { return a * b }, x, y)
}
func (A Folded) Div(x, y Num) Num {
	return A.bin(foldDiv, func(a, b float64) float64 { return a / b }, x, y)
}
func (Folded) Neg(x Num) Num  { return Num{-x.V, x.Const} }
func (Folded) Sin(x Num) Num  { return Num{math.Sin(x.V), x.Const} }
func (Folded) Cos(x Num) Num  { return Num{math.Cos(x.V), x.Const} }
func (Folded) Sqrt(x Num) Num { return Num{math.Sqrt(x.V), x.Const} }

// ConstV lifts a float vector into an algebra.
func ConstV[T any](A Alg[T], v [3]float64) V3[T] {
	return V3[T]{A.Const(v[0]), A.Const(v[1]), A.Const(v[2])}
}

// Dot is the inner product.
func Dot[T any](A Alg[T], x, y V3[T]) T {
	return A.Add(A.Add(A.Mul(x[0], y[0]), A.Mul(x[1], y[1])), A.Mul(x[2], y[2]))
}

// Cross is the right-handed cross product x × y.
func Cross[T any](A Alg[T], x, y V3[T]) V3[T] {
	return V3[T]{
		A.Sub(A.Mul(x[1], y[2]), A.Mul(x[2], y[1])),
		A.Sub(A.Mul(x[2], y[0]), A.Mul(x[0], y[2])),
		A.Sub(A.Mul(x[0], y[1]), A.Mul(x[1], y[0])),
	}
}

// Scale multiplies every component by s.
func Scale[T any](A Alg[T], v V3[T], s T) V3[T] {
	return V3[T]{A.Mul(v[0], s), A.Mul(v[1], s), A.Mul(v[2], s)}
}

// AddV is x + y.
func AddV[T any](A Alg[T], x, y V3[T]) V3[T] {
	return V3[T]{A.Add(x[0], y[0]), A.Add(x[1], y[1]), A.Add(x[2], y[2])}
}

// Norm is the Euclidean length.
func Norm[T any](A Alg[T], v V3[T]) T { return A.Sqrt(Dot(A, v, v)) }

// RotateXYZ rotates v about the lab x axis by rx, then y by ry, then z by rz
// (right-handed, radians): the reference's misset and detector_rot order.
func RotateXYZ[T any](A Alg[T], v V3[T], rx, ry, rz T) V3[T] {
	cx, sx := A.Cos(rx), A.Sin(rx)
	v = V3[T]{v[0], A.Sub(A.Mul(v[1], cx), A.Mul(v[2], sx)), A.Add(A.Mul(v[1], sx), A.Mul(v[2], cx))}
	cy, sy := A.Cos(ry), A.Sin(ry)
	v = V3[T]{A.Add(A.Mul(v[0], cy), A.Mul(v[2], sy)), v[1], A.Sub(A.Mul(v[2], cy), A.Mul(v[0], sy))}
	cz, sz := A.Cos(rz), A.Sin(rz)
	return V3[T]{A.Sub(A.Mul(v[0], cz), A.Mul(v[1], sz)), A.Add(A.Mul(v[0], sz), A.Mul(v[1], cz)), v[2]}
}

// RotateAxis rotates v by phi (radians, right-handed) about the unit vector
// axis (Rodrigues' formula, as the reference's rotate_axis).
func RotateAxis[T any](A Alg[T], v, axis V3[T], phi T) V3[T] {
	c, s := A.Cos(phi), A.Sin(phi)
	d := A.Mul(Dot(A, axis, v), A.Sub(A.Const(1), c))
	kxv := Cross(A, axis, v)
	var out V3[T]
	for i := 0; i < 3; i++ {
		out[i] = A.Add(A.Add(A.Mul(axis[i], d), A.Mul(v[i], c)), A.Mul(kxv[i], s))
	}
	return out
}
