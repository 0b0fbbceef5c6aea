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

// Taylor coefficients of sin πd and cos πd in powers of d: spN is the
// coefficient of d^N, (−1)^((N−1)/2)·π^N/N!; cpN of d^N, (−1)^(N/2)·π^N/N!.
// Go evaluates constant expressions exactly and rounds once to float64.
const (
	pi2  = math.Pi * math.Pi
	sp1  = math.Pi
	sp3  = -sp1 * pi2 / (2 * 3)
	sp5  = -sp3 * pi2 / (4 * 5)
	sp7  = -sp5 * pi2 / (6 * 7)
	sp9  = -sp7 * pi2 / (8 * 9)
	sp11 = -sp9 * pi2 / (10 * 11)
	sp13 = -sp11 * pi2 / (12 * 13)
	sp15 = -sp13 * pi2 / (14 * 15)
	sp17 = -sp15 * pi2 / (16 * 17)
	sp19 = -sp17 * pi2 / (18 * 19)
	sp21 = -sp19 * pi2 / (20 * 21)
	cp0  = 1
	cp2  = -cp0 * pi2 / (1 * 2)
	cp4  = -cp2 * pi2 / (3 * 4)
	cp6  = -cp4 * pi2 / (5 * 6)
	cp8  = -cp6 * pi2 / (7 * 8)
	cp10 = -cp8 * pi2 / (9 * 10)
	cp12 = -cp10 * pi2 / (11 * 12)
	cp14 = -cp12 * pi2 / (13 * 14)
	cp16 = -cp14 * pi2 / (15 * 16)
	cp18 = -cp16 * pi2 / (17 * 18)
	cp20 = -cp18 * pi2 / (19 * 20)
)

// sinCosPiReduced returns sin πd and cos πd for |d| ≤ ½ (a few ulp
// beyond is fine).
func sinCosPiReduced(d float64) (s, c float64) {
	return sinPiReduced(d), cosPiReduced(d)
}

// sinPiReduced and cosPiReduced are sinPiLanes and cosPiLanes on one
// lane: the series in y = d² in four independent pieces (Estrin's
// scheme), which shortens the chain of dependent multiply-adds.
func sinPiReduced(d float64) float64 { return sinPiLanes(d) }

func cosPiReduced(d float64) float64 { return cosPiLanes(d) }

// roundMagic is 1.5·2⁵²: for |x| < 2⁵¹, x + roundMagic rounds x to the
// nearest integer m (ties to even), held exactly with unit spacing, so
// the low bit of its representation is the parity of m.
const roundMagic = 3 << 51

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

// maxChebyshevN is the largest whole N whose sincg is evaluated by the
// Chebyshev recurrence; beyond it the ratio of sines is cheaper.
const maxChebyshevN = 32

// chebyshevU returns U_{n−1}(c) for whole n ≥ 1: with c = cos πh that is
// sin(nπh)/sin(πh), the lattice factor sincg, without a division and with
// its limit ±n at integer h exact.
func chebyshevU(c float64, n int) float64 {
	if n == 1 {
		return 1 // U_0
	}
	_, u1 := chebyshevU2(2*c, n)
	return u1
}
