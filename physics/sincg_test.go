package physics

import (
	"math"
	"math/big"
	"testing"
)

// bigPi is π to 70 digits.
const bigPi = "3.141592653589793238462643383279502884197169399375105820974944592307816"

// bigSinCos returns sin y and cos y for y = π·n·x to 256 bits, from their
// Taylor series at π·n·(x − r), r the integer nearest x, and the period:
// sin and cos of y are (−1)^(n·r) times those.
func bigSinCos(x float64, n int) (s, c *big.Float) {
	const prec = 256
	f := func() *big.Float { return new(big.Float).SetPrec(prec) }
	pi, _ := f().SetString(bigPi)
	r := math.Round(x)
	y := f().Mul(pi, f().Sub(f().SetFloat64(x), f().SetFloat64(r)))
	y.Mul(y, f().SetInt64(int64(n)))
	s, c = bigSeries(y, 400)
	if int64(r)*int64(n)%2 != 0 {
		s.Neg(s)
		c.Neg(c)
	}
	return s, c
}

// bigSeries returns sin y and cos y from terms Taylor terms each, to
// y's precision.
func bigSeries(y *big.Float, terms int) (s, c *big.Float) {
	f := func() *big.Float { return new(big.Float).SetPrec(y.Prec()) }
	y2 := f().Mul(y, y)
	s, c = f().Set(y), f().SetInt64(1)
	ts, tc := f().Set(y), f().SetInt64(1)
	for j := 1; j < terms; j++ {
		tc.Mul(tc, y2)
		tc.Quo(tc, f().SetInt64(int64(-(2*j-1)*(2*j))))
		c.Add(c, tc)
		ts.Mul(ts, y2)
		ts.Quo(ts, f().SetInt64(int64(-(2*j)*(2*j+1))))
		s.Add(s, ts)
	}
	return s, c
}

// bigSincg returns sincg(x, n) = sin(nπx)/sin(πx) and its derivatives by
// x and n from the quotient rule applied to that definition in 256-bit
// arithmetic (by n, to the continuation σ·sin(nπd)/sin(πd) on the offset
// d = x − m from the nearest integer m (ties to even), σ = (−1)^((n−1)m), the form
// Sincg takes for non-whole n),
//
//	∂/∂x = π·(n·cos nπx·sin πx − sin nπx·cos πx)/sin²πx,  ∂/∂n = σ·πd·cos nπd/sin πd = πd·cos nπx/sin πx.
func bigSincg(x float64, n int) [3]float64 {
	s1, c1 := bigSinCos(x, 1)
	sn, cn := bigSinCos(x, n)
	f := func() *big.Float { return new(big.Float).SetPrec(256) }
	pi, _ := f().SetString(bigPi)
	v, _ := f().Quo(sn, s1).Float64()
	num := f().Mul(f().SetInt64(int64(n)), f().Mul(cn, s1))
	num.Sub(num, f().Mul(sn, c1))
	dx, _ := f().Quo(f().Mul(pi, num), f().Mul(s1, s1)).Float64()
	dn, _ := f().Quo(f().Mul(f().Mul(pi, f().SetFloat64(x-math.RoundToEven(x))), cn), s1).Float64()
	return [3]float64{v, dx, dn}
}

// TestSincgGrad3: sincg(x, n) = sin(nπx)/sin(πx) and its derivatives by
// x and n against the quotient rule applied to that definition in 256-bit
// arithmetic,
//
//	∂/∂x = π·(n·cos nπx·sin πx − sin nπx·cos πx)/sin²πx,  ∂/∂n = πd·cos nπx/sin πx
//
// (see bigSincg), for every output of sincgGrad3Lanes' scalar copy: with x
// from 1e-7 off a peak to half-way between two (on one axis, the others
// far from the peaks), and at the peaks themselves.
func TestSincgGrad3(t *testing.T) {
	const tol = 1e-12
	for _, n := range []int{2, 3, 5, 10, 32} {
		fixed := [3]float64{0.3, -1.7, 0.45}
		var fixedRef [3][3]float64
		for a, xa := range fixed {
			fixedRef[a] = bigSincg(xa, n)
		}
		for _, m := range []float64{-3, 0, 2, 17} {
			for _, d := range []float64{1e-7, -3e-5, 2e-3, 0.0156, -0.0157, 0.1, -0.37, 0.5} {
				x := m + d
				for axis := 0; axis < 3; axis++ {
					// x on one axis, fixed values far from the peaks on the
					// others: every output is checked.
					in, ref := fixed, fixedRef
					in[axis], ref[axis] = x, bigSincg(x, n)
					var got [9]float64
					got[0], got[1], got[2], got[3], got[4], got[5], got[6], got[7], got[8] = sincgGrad3(in[0], in[1], in[2], n)
					for a, xa := range in {
						for i, want := range ref[a] {
							g := got[3*i+a]
							// The floor: derivatives pass through zero between
							// the peaks, where only an absolute error means
							// anything.
							if math.Abs(g-want) > tol*(math.Abs(want)+float64(n)) {
								t.Fatalf("n=%d x=%v on axis %d: %s of %v = %.17g, want %.17g", n, x, axis, [...]string{"sincg", "∂x", "∂n"}[i], xa, g, want)
							}
						}
					}
				}
			}
		}
	}
	// At the peaks: the limit n·(±1)^(m(n−1)), zero slope, and a derivative
	// by n that is the peak's sign (the limit of πd·cos nπx/sin πx); the
	// same where d² underflows (x = m ± 1e-170: sin πx is 0 there, and
	// πd·T_n/s would be infinite).
	for _, n := range []int{2, 5, 32} {
		for _, m := range []float64{0, 1, -4} {
			for _, d := range []float64{0, 1e-170, -1e-170} {
				v, _, _, dx, _, _, dn, _, _ := sincgGrad3(m+d, 0.25, 0.25, n)
				want := float64(n)
				if int(m)%2 != 0 && n%2 == 0 {
					want = -want
				}
				wdn := math.Copysign(1, want)
				if v != want || dx != 0 || dn != wdn {
					t.Errorf("n=%d at %v + %g: sincg %g ∂x %g ∂n %g, want %g 0 %g", n, m, d, v, dx, dn, want, wdn)
				}
			}
		}
	}
}

// sincgGrad3 is sincgGrad3Lanes on one lane, its derivatives times −π
// and π (which it leaves out).
func sincgGrad3(h, kk, l float64, n int) (sa, sb, sc, ha, hb, hc, na, nb, nc float64) {
	r := laneReps{nv: [3]laneVal{repeat(float64(n))}, negZero: repeat(math.Copysign(0, -1)), uw: uWeights()}
	sa, sb, sc, ha, hb, hc, na, nb, nc = sincgGrad3Lanes(&r, h, kk, l, n)
	return sa, sb, sc, -math.Pi * ha, -math.Pi * hb, -math.Pi * hc, math.Pi * na, math.Pi * nb, math.Pi * nc
}

// bigSincgCont is Sincg's continuation to N not whole, sin(Nπd)/sin(πd) on
// the offset d = x − m from the nearest integer m, with its derivatives
// by x and by N (the quotient rule, as bigSincg), in 256-bit arithmetic
// from the Taylor series of sin and cos at Nπd and πd.
func bigSincgCont(x, n float64) [3]float64 {
	f := func() *big.Float { return new(big.Float).SetPrec(256) }
	pi, _ := f().SetString(bigPi)
	d := f().SetFloat64(x - math.RoundToEven(x)) // exact
	pd := f().Mul(pi, d)
	s1, c1 := bigSeries(pd, 200)
	N := f().SetFloat64(n)
	sn, cn := bigSeries(f().Mul(N, pd), 200)
	v, _ := f().Quo(sn, s1).Float64()
	num := f().Sub(f().Mul(N, f().Mul(cn, s1)), f().Mul(sn, c1))
	dx, _ := f().Quo(f().Mul(pi, num), f().Mul(s1, s1)).Float64()
	dn, _ := f().Quo(f().Mul(pd, cn), s1).Float64()
	return [3]float64{v, dx, dn}
}

// TestSincgRatioGrad: for N not whole, the general walk's sincgGrad and
// the lane kernels' sincgRatioGradLanes (its scalar copy) against
// bigSincgCont, from far off the peaks to 1e-12 of them, on both sides
// of the switch to the series at |Nπd| = 1e-3, and at the peaks (N, 0,
// 1). The tolerance is the closed form's just above the switch, where
// its numerator has cancelled to (Nπd)² = 1e-6 of its terms: ~1e-10.
// Without the series (the closed form alone) ∂/∂x is wrong by 5e-5 at
// d = 1e-7 and by 120 % at d = 1e-9 for N = 5.3.
func TestSincgRatioGrad(t *testing.T) {
	const tol = 1e-9
	for _, n := range []float64{1.5, 2.25, 5.3, 6.02, 31.9} {
		sw := 1e-3 / (math.Pi * n) // the switch
		for _, m := range []float64{-3, 0, 2, 17} {
			for _, d := range []float64{1e-12, -1e-9, 1e-7, -3e-5, sw * 0.999, -sw * 1.001, 2e-3, 0.1, -0.37, 0.5} {
				x := m + d
				want := bigSincgCont(x, n)
				s, dx, dn := sincgGrad(x, n)
				ls, ldx, ldn := sincgRatioGradLanes(x, n)
				ldx, ldn = -math.Pi*ldx, math.Pi*ldn // (left out by the lanes)
				for _, got := range [][3]float64{{s, dx, dn}, {ls, ldx, ldn}} {
					for i := range got {
						if math.Abs(got[i]-want[i]) > tol*(math.Abs(want[i])+n) {
							t.Errorf("N=%g x=%v: %s = %.17g, want %.17g (general walk %v, lanes %v)", n, x,
								[...]string{"sincg", "∂x", "∂N"}[i], got[i], want[i], [3]float64{s, dx, dn}, [3]float64{ls, ldx, ldn})
						}
					}
				}
			}
		}
		for _, m := range []float64{0, 1, -4} {
			s, dx, dn := sincgGrad(m, n)
			ls, ldx, ldn := sincgRatioGradLanes(m, n)
			ldx, ldn = -math.Pi*ldx, math.Pi*ldn
			if s != n || dx != 0 || dn != 1 || ls != n || ldx != 0 || ldn != 1 {
				t.Errorf("N=%g at %v: %v and %v, want %g 0 1", n, m, [3]float64{s, dx, dn}, [3]float64{ls, ldx, ldn}, n)
			}
		}
	}
}

// TestSinc3Grad: the round shape's sinc3(x) = 3(sin x − x·cos x)/x³ at
// x = π√u and its derivative by u from sinc3GradLanes (one lane) against
// the derivative's own forms: below x = ½ its Taylor series,
// π²·Σ_{j≥1} j·a_j·x^(2j−2) with a_j = 3(−1)^j·2(j+1)/(2j+3)! (sinc3's
// coefficients: 1, −1/10, 1/280, …), to x^40; above, the quotient rule,
// π²/(2x)·3((x² − 3)·sin x + 3x·cos x)/x⁴ (cancelling like ~1e-15/x⁴).
// Both sides of the lanes' switch from their series (x < 1) are covered;
// the general walk's formulas (then the closed form down to x = 1e-2)
// were 4e-7 off at x = 0.0101 and 2e-9 at 0.03.
func TestSinc3Grad(t *testing.T) {
	for _, x := range []float64{0, 1e-5, 3e-3, 0.0099, 0.0101, 0.03, 0.2, 0.49, 0.51, 0.999, 1.001, 2.2, 3.1, 4.4934, 7.7} {
		u := (x / math.Pi) * (x / math.Pi)
		xv := math.Pi * math.Sqrt(u)
		var want float64
		if xv < 0.5 {
			fact := 120.0 // (2j+3)! at j = 1, built up below
			for j := 1; j <= 20; j++ {
				if j > 1 {
					fact *= float64(2*j+2) * float64(2*j+3)
				}
				a := 3 * math.Pow(-1, float64(j)) * 2 * float64(j+1) / fact
				want += float64(j) * a * math.Pow(xv, float64(2*j-2))
			}
			want *= math.Pi * math.Pi
		} else {
			want = math.Pi * math.Pi / (2 * xv) * 3 * ((xv*xv-3)*math.Sin(xv) + 3*xv*math.Cos(xv)) / math.Pow(xv, 4)
		}
		_, du := sinc3GradLanes(u)
		if math.Abs(du-want) > 1e-13*math.Max(1, math.Abs(want)) {
			t.Errorf("x=%g: ∂sinc3/∂u = %.17g, want %.17g", x, du, want)
		}
	}
}
