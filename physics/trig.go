package physics

import "math"

// Sine and cosine of π·x for the lattice factors. The kernel's
// arguments are fractional Miller indices, so the period is exact in them:
// x = m + d with m the nearest integer (exact in float64 for |x| < 2⁵²)
// and |d| ≤ ½, and sin πx = (−1)^m sin πd, cos πx = (−1)^m cos πd. On
// |d| ≤ ½ two polynomials replace math.Sin's general range reduction,
// which was 40 % of a forward run (pprof, cubic 1024²): the Taylor series
// of sin πd cut after the (πd)²¹ term (within 2e-17), and for cos πd, which
// every lattice factor needs, a minimax polynomial of degree 16 (below).

// Taylor coefficients of sin πd in powers of d: spN is the coefficient of
// d^N, (−1)^((N−1)/2)·π^N/N!. Go evaluates constant expressions exactly and
// rounds once to float64.
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
)

// cpN is the coefficient of d^N in the minimax polynomial of cos πd on
// |d| ≤ ½ with cp0 = 1 (so that cos 0 is exactly 1 and the lattice factor
// at a reflection exactly ±N). They come from a Remez exchange in 40-digit
// arithmetic (physics/internal/cosfit/cosfit.py, mpmath): each coefficient
// rounded to float64 in turn, from cp2 up, and the later ones fitted again
// around it. In exact arithmetic these float64 coefficients are within
// 5.2e-18 of cos πd; evaluated in float64 as cosPiLanes does, within
// 2.1e-16 (24 001 points against 40-digit values; the degree-20 Taylor
// series it replaces: 2.7e-16). Nine coefficients instead of the Taylor
// series' eleven: 5 % fewer instructions in a cubic 1024² forward image
// (vector build; 2–4 % of its time), 8 % of the time with 10 mosaic
// domains.
const (
	cp0  = 1
	cp2  = -4.934802200544677
	cp4  = 4.058712126416504
	cp6  = -1.3352627688431513
	cp8  = 0.2353306301195173
	cp10 = -0.025806888617033216
	cp12 = 0.0019295555738011165
	cp14 = -0.00010456456166745871
	cp16 = 4.1473385362379046e-06
)

// sinCosPiReduced returns sin πd and cos πd for |d| ≤ ½ (a few ulp
// beyond is fine).
func sinCosPiReduced(d float64) (s, c float64) {
	return sinPiReduced(d), cosPiReduced(d)
}

// sinPiReduced and cosPiReduced are sinPiLanes and cosPiLanes on one
// lane: the polynomials in y = d² in independent pieces (Estrin's
// scheme), which shortens the chain of dependent multiply-adds.
func sinPiReduced(d float64) float64 { return sinPiLanes(d) }

func cosPiReduced(d float64) float64 { return cosPiLanes(d) }

// roundMagic is 1.5·2⁵²: for |x| < 2⁵¹, x + roundMagic rounds x to the
// nearest integer m (ties to even), held exactly with unit spacing, so
// the low bit of its representation is the parity of m.
const roundMagic = 3 << 51

// invPi is 1/π (rotateAxisLanes' angles in units of π; sincgGradLanes'
// peaks: π·invPi is 1 exactly).
const invPi = 1 / math.Pi

// Constants of logLanes: Go's amd64 math.Log's (its assembly, archLog:
// fdlibm's coefficients), and the bit fields it takes x apart by, held
// in float64 constants whose bit patterns they are (the mantissa field;
// the exponent field after a shift by 52; the 1 of the sign bit after a
// shift by 63; the shift counts) and 2⁵², whose bit pattern takes an
// 11-bit integer into its low mantissa bits exactly.
const (
	logHSqrt2  = 7.07106781186547524401e-01
	logL1      = 6.666666666666735130e-01
	logL2      = 3.999999999940941908e-01
	logL3      = 2.857142874366239149e-01
	logL4      = 2.222219843214978396e-01
	logL5      = 1.818357216161805012e-01
	logL6      = 1.531383769920937332e-01
	logL7      = 1.479819860511658591e-01
	logMant    = 0x0.fffffffffffffp-1022 // bits 0x000FFFFFFFFFFFFF
	logExp     = 0x7ffp-1074             // bits 0x7FF
	logSign    = 0x1p-1074               // bits 1
	logShift52 = 0x34p-1074              // bits 52: shift counts (vshrv)
	logShift63 = 0x3fp-1074              // bits 63
	twoP52     = 0x1p52
	maxF64     = math.MaxFloat64
)

// Constants of expLanes: its clamp of x, Cody and Waite's ln 2 in two
// parts (fdlibm's: the high part has 21 trailing zero bits), the round
// magic that holds k + 1023 in its low bits, the powers 2^∓600 of the
// scaling near the ends of the range, and the Taylor coefficients 1/n!
// of e^r.
const (
	expMax   = 710
	expMin   = -746
	log2E    = math.Log2E
	ln2Hi    = 6.93147180369123816490e-01
	ln2Lo    = 1.90821492927058770002e-10
	expMagic = 3<<51 + 1023
	twoM600  = 0x1p-600
	twoP600  = 0x1p600
	ec2      = 1.0 / 2
	ec3      = ec2 / 3
	ec4      = ec3 / 4
	ec5      = ec4 / 5
	ec6      = ec5 / 6
	ec7      = ec6 / 7
	ec8      = ec7 / 8
	ec9      = ec8 / 9
	ec10     = ec9 / 10
	ec11     = ec10 / 11
	ec12     = ec11 / 12
	ec13     = ec12 / 13
)

// The spot shapes' constants (kernel.lattice, shapeLatticeLanes): the
// Gaussian's width 0.63, the top-hat's radius² 0.3969 (0.63²) and the
// round shape's scale √(the volume ratio of cube to sphere), as the
// reference has them.
const (
	gaussWidth = 0.63
	tophatR2   = 0.3969
	roundScale = 0.723601254558268
)

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
