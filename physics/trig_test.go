package physics

import (
	"math"
	"math/rand"
	"testing"
)

// TestSinCosPi: the polynomials against Go's math.Sincos (an independent
// implementation) over the reduced range and beyond it.
func TestSinCosPi(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		x := (r.Float64() - 0.5) * 200
		if i%4 == 0 {
			x = math.Round(x) + (r.Float64()-0.5)*1e-6 // near the lattice points
		}
		s, c := sinCosPi(x)
		// math.Sincos(π·x) carries the rounding of π·x, ~|πx|·2⁻⁵³.
		ws, wc := math.Sincos(math.Pi * x)
		tol := 1e-15 + math.Abs(math.Pi*x)*2.3e-16
		if math.Abs(s-ws) > tol || math.Abs(c-wc) > tol {
			t.Fatalf("sinCosPi(%g) = %.17g %.17g, math.Sincos gives %.17g %.17g", x, s, c, ws, wc)
		}
	}
	if s, c := sinCosPi(3); s != 0 || c != -1 {
		t.Errorf("sinCosPi(3) = %g %g, want 0 −1", s, c)
	}
}

// TestSincgWhole: the Chebyshev and ratio forms against the definition
// sin(nπh)/sin(πh) on either side of maxChebyshevN.
func TestSincgWhole(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, n := range []int{2, 3, 5, 8, 16, maxChebyshevN, maxChebyshevN + 1, 50, 100} {
		for i := 0; i < 20000; i++ {
			h := (r.Float64() - 0.5) * 40
			if i%2 == 0 {
				h = math.Round(h) + (r.Float64()-0.5)*1e-3
			}
			// The definition on the offset from the nearest integer, where
			// math.Sin needs no large-argument reduction.
			m := math.Round(h)
			want := math.Sin(float64(n)*math.Pi*(h-m)) / math.Sin(math.Pi*(h-m))
			if n%2 == 0 && int64(m)&1 != 0 {
				want = -want
			}
			if got := sincgWhole(h, n); math.Abs(got-want) > 1e-14*float64(n*n)*math.Max(1, math.Abs(want)) {
				t.Fatalf("sincgWhole(%g, %d) = %.17g, definition %.17g", h, n, got, want)
			}
		}
	}
}

// TestCosPiReduced: the minimax polynomial against an independent cos πd:
// math.Cos of the float64 product a = π·d, corrected by the rounding left
// out of a (δ = π·d − a, from a fused multiply-add and the float64 π's own
// error, ~1.2e-16·d): cos(a + δ) ≈ cos a − δ·sin a. On these 400 001 points,
// against 40-digit values (mpmath), that reference is off by at most
// 1.9e-16 and the polynomial evaluated in float64 by at most 2.5e-16, so
// no point may differ by more than 4.5e-16 (it is 3.3e-16 here, and the
// same for the degree-20 Taylor series). A wrong leading digit in a
// coefficient shows as 1e-14 or more; trailing digits are the script's
// (internal/cosfit) to check. cos 0 must be exactly 1.
func TestCosPiReduced(t *testing.T) {
	const piLo = 1.2246467991473532e-16 // π − float64(π)
	worst := 0.0
	for i := -200000; i <= 200000; i++ {
		d := float64(i) / 400000
		a := math.Pi * d
		delta := math.FMA(math.Pi, d, -a) + piLo*d
		want := math.Cos(a) - delta*math.Sin(a)
		worst = max(worst, math.Abs(cosPiReduced(d)-want))
	}
	t.Logf("largest difference %.3g", worst)
	if worst > 4.5e-16 {
		t.Errorf("cos πd off by %.3g", worst)
	}
	if c := cosPiReduced(0); c != 1 {
		t.Errorf("cos 0 = %.17g", c)
	}
}

// TestExpLanes: expLanes against math.Exp (Go's, itself within an ulp of
// e^x) at 200 001 points over its whole range and at the ends: at most 2
// ulp apart, 2 at fewer than 1 in 10⁴ (over 2 000 001 points: 85 % the
// same bits, 15 % 1 ulp, 75 points 2 ulp), and the same zeros,
// infinities, NaN and exact 1.
func TestExpLanes(t *testing.T) {
	ulps := func(a, b float64) int64 {
		d := int64(math.Float64bits(a)) - int64(math.Float64bits(b))
		if d < 0 {
			d = -d
		}
		return d
	}
	var worst int64
	var at float64
	twos := 0
	check := func(x float64) {
		got, want := expLanes(x), math.Exp(x)
		if math.IsInf(want, 1) && x <= math.Log(math.MaxFloat64) {
			// Go's amd64 math.Exp overflows from 1023.5·ln 2 ≈ 709.44
			// on, where e^x is still finite: there e^(x/2)² instead (a
			// few ulp of its own).
			h := math.Exp(x / 2)
			if want = h * h; math.Abs(got/want-1) > 1e-15 {
				t.Errorf("expLanes(%v) = %v, math.Exp(x/2)² %v", x, got, want)
			}
			return
		}
		if math.IsNaN(want) || math.IsInf(want, 0) || want == 0 {
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("expLanes(%v) = %v, math.Exp %v", x, got, want)
			}
			return
		}
		u := ulps(got, want)
		if u > worst {
			worst, at = u, x
		}
		if u == 2 {
			twos++
		}
	}
	for i := 0; i <= 200000; i++ {
		check(-746 + 1456*float64(i)/200000)
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 1, -1, 0.5 * math.Ln2, -0.5 * math.Ln2,
		math.Log(math.MaxFloat64), 709.79, 710, 1000, math.Inf(1), -708.39, -708.4, -744.44, -745.13, -745.14, -746, -1e300,
		math.Inf(-1), math.NaN()} {
		check(x)
	}
	if worst > 2 || twos > 20 {
		t.Errorf("expLanes is up to %d ulp from math.Exp (at %v), 2 ulp at %d points", worst, at, twos)
	}
	if expLanes(0) != 1 {
		t.Errorf("expLanes(0) = %v", expLanes(0))
	}
}
