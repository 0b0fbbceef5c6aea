package physics

import "math"

// Sine and cosine of π·x for the lattice factors. The kernel's
// arguments are fractional Miller indices, so the period is exact in them:
// x = m + d with m the nearest integer (exact in float64 for |x| < 2⁵²)
// and |d| ≤ ½, and sin πx = (−1)^m sin πd, cos πx = (−1)^m cos πd. On
// |πd| ≤ π/2 the Taylor series cut after the (πd)²¹ and (πd)²⁰ terms are
// within 2e-17 of sin and cos, below float64 rounding, and a few
// multiply-adds replace math.Sin's general range reduction, which was 40 %
// of a forward run (pprof, cubic 1024²).

// sinPiC[j] = (−1)^j π^(2j+1)/(2j+1)!, cosPiC[j] = (−1)^j π^(2j)/(2j)!.
var sinPiC, cosPiC = taylorPi()

func taylorPi() (s [11]float64, c [11]float64) {
	term := 1.0 // π^i / i!
	for i := 0; i <= 21; i++ {
		if i > 0 {
			term *= math.Pi / float64(i)
		}
		sign := 1.0
		if (i/2)&1 == 1 {
			sign = -1
		}
		if i&1 == 0 {
			c[i/2] = sign * term
		} else {
			s[i/2] = sign * term
		}
	}
	return s, c
}

// sinCosPiReduced returns sin πd and cos πd for |d| ≤ ½.
func sinCosPiReduced(d float64) (s, c float64) {
	y := d * d
	// Horner in y = d², split in two halves (Estrin) to shorten the
	// dependency chain.
	y2 := y * y
	y4 := y2 * y2
	y8 := y4 * y4
	ps := ((sinPiC[0] + sinPiC[1]*y) + (sinPiC[2]+sinPiC[3]*y)*y2) +
		((sinPiC[4]+sinPiC[5]*y)+(sinPiC[6]+sinPiC[7]*y)*y2)*y4 +
		((sinPiC[8]+sinPiC[9]*y)+sinPiC[10]*y2)*y8
	pc := ((cosPiC[0] + cosPiC[1]*y) + (cosPiC[2]+cosPiC[3]*y)*y2) +
		((cosPiC[4]+cosPiC[5]*y)+(cosPiC[6]+cosPiC[7]*y)*y2)*y4 +
		((cosPiC[8]+cosPiC[9]*y)+cosPiC[10]*y2)*y8
	return d * ps, pc
}

// cosPiReduced is cos πd for |d| ≤ ½.
func cosPiReduced(d float64) float64 {
	y := d * d
	y2 := y * y
	y4 := y2 * y2
	y8 := y4 * y4
	return ((cosPiC[0] + cosPiC[1]*y) + (cosPiC[2]+cosPiC[3]*y)*y2) +
		((cosPiC[4]+cosPiC[5]*y)+(cosPiC[6]+cosPiC[7]*y)*y2)*y4 +
		((cosPiC[8]+cosPiC[9]*y)+cosPiC[10]*y2)*y8
}

// sinCosPi returns sin πx and cos πx.
func sinCosPi(x float64) (s, c float64) {
	if !(math.Abs(x) < 1<<52) {
		return math.Sincos(math.Pi * x)
	}
	m := math.Round(x)
	s, c = sinCosPiReduced(x - m)
	if int64(m)&1 != 0 {
		return -s, -c
	}
	return s, c
}

// cosPi returns cos πx.
func cosPi(x float64) float64 {
	if !(math.Abs(x) < 1<<52) {
		return math.Cos(math.Pi * x)
	}
	m := math.Round(x)
	c := cosPiReduced(x - m)
	if int64(m)&1 != 0 {
		return -c
	}
	return c
}

// maxChebyshevN is the largest whole N whose sincg is evaluated by the
// Chebyshev recurrence; beyond it the ratio of sines is cheaper.
const maxChebyshevN = 32

// chebyshevU returns U_{n−1}(c) for whole n ≥ 1: with c = cos πh that is
// sin(nπh)/sin(πh), the lattice factor sincg, without a division and with
// its limit ±n at integer h exact.
func chebyshevU(c float64, n int) float64 {
	u0, u1 := 1.0, 2*c // U_0, U_1
	if n == 1 {
		return u0
	}
	c2 := 2 * c
	for j := 2; j < n; j++ {
		u0, u1 = u1, c2*u1-u0
	}
	return u1
}
