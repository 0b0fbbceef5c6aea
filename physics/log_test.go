package physics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// logInputs are TestLogLanes' and TestPoissonLanes' arguments: powers of
// two and their neighbours, the switch at √2/2 of the reduced argument
// and its neighbours, 1 and its neighbours, random mantissas over the
// whole exponent range, subnormals, and the special values.
func logInputs() []float64 {
	var xs []float64
	for e := -1074; e <= 1023; e++ {
		p := math.Ldexp(1, e)
		xs = append(xs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)))
		if e >= -1021 {
			h := math.Ldexp(math.Sqrt2/2, e)
			xs = append(xs, h, math.Nextafter(h, 0), math.Nextafter(h, math.Inf(1)))
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		xs = append(xs, math.Float64frombits(rng.Uint64()>>1)) // any positive pattern, NaNs and +Inf among them
	}
	for range 20000 {
		xs = append(xs, rng.Float64()*2, rng.ExpFloat64()*1e3, -rng.Float64())
	}
	return append(xs, 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(),
		math.Float64frombits(0xFFF8000000000001), math.MaxFloat64, math.SmallestNonzeroFloat64, 1, math.Nextafter(1, 2), math.Nextafter(1, 0))
}

// TestLogLanes: logLanes (its one-lane copy) against math.Log: bit for
// bit on amd64, where math.Log is the assembly logLanes follows
// operation for operation; elsewhere Go's portable Log, whose reduction
// differs only at the switch point and for subnormals: within 1 ulp
// there for normal arguments (the specials alike).
func TestLogLanes(t *testing.T) {
	exact := runtime.GOARCH == "amd64"
	for _, x := range logInputs() {
		got, want := logLanes(x), math.Log(x)
		if exact || math.IsNaN(want) || math.IsInf(want, 0) || x < 0x1p-1022 {
			if exact && math.Float64bits(got) != math.Float64bits(want) || !exact && (math.IsNaN(got) != math.IsNaN(want) || !math.IsNaN(want) && x >= 0x1p-1022 && got != want) {
				t.Fatalf("logLanes(%v = %#x) = %v (%#x), math.Log %v (%#x)", x, math.Float64bits(x), got, math.Float64bits(got), want, math.Float64bits(want))
			}
			continue
		}
		if math.Abs(got-want) > math.Abs(math.Nextafter(want, math.Inf(1))-want) {
			t.Fatalf("logLanes(%v) = %v, math.Log %v: more than 1 ulp apart", x, got, want)
		}
	}
}

// TestPoissonLanes: poissonLanes on every lane kernel this binary runs
// against poissonTerm pixel by pixel, bit for bit (terms and
// derivatives), for intensities from logInputs (positive, zero,
// negative, infinite, NaN), without and with a background (0, ±0.5,
// random, and the negated intensity, which makes 0), counts 0, 1, 7 and
// random ones, weights 1, 0 and ½; and a vector of pixels without counts
// (whose logarithm poissonLanes leaves out) beside one where a single
// such pixel is at +Inf (w·(+Inf − 0·ln +Inf) is NaN: it needs it).
func TestPoissonLanes(t *testing.T) {
	defer func(old string) { UseVectorLanes(old) }(VectorLanes())
	xs := logInputs()
	rng := rand.New(rand.NewPCG(7, 8))
	// Whole vectors: the inputs, then quiet values (unchecked).
	n := (len(xs) + maxLanes - 1) / maxLanes * maxLanes
	v, b, o, w := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range v {
		v[i] = 1
		if i < len(xs) {
			v[i] = xs[i]
			o[i] = [...]float64{0, 1, 7, float64(rng.IntN(1000))}[rng.IntN(4)]
			w[i] = [...]float64{1, 0, 0.5}[rng.IntN(3)]
			b[i] = [...]float64{0, 0.5, -0.5, rng.ExpFloat64(), -v[i]}[rng.IntN(5)]
		}
	}
	// A vector of pixels without counts at finite positive intensities
	// (poissonLanes leaves their logarithm out), and one with a single
	// pixel at +Inf among them (which needs it).
	for i := range 2 * maxLanes {
		v[i], o[i], w[i], b[i] = float64(i+1), 0, 1, 0
	}
	v[maxLanes+3] = math.Inf(1)
	for _, tier := range AvailableVectorLanes() {
		if err := UseVectorLanes(tier); err != nil {
			t.Fatal(err)
		}
		for _, bg := range []bool{false, true} {
			tt, gg := make([]float64, n), make([]float64, n)
			poisson(v, b, o, w, tt, gg, n, bg)
			for i := range xs {
				x := v[i]
				if bg {
					x += b[i]
				}
				wt, wg := poissonTerm(x, o[i], w[i])
				if math.Float64bits(tt[i]) != math.Float64bits(wt) || math.Float64bits(gg[i]) != math.Float64bits(wg) {
					t.Fatalf("%s background %v: x %v (%#x) o %v w %v: %v, %v; poissonTerm %v, %v", tier, bg, x, math.Float64bits(x), o[i], w[i], tt[i], gg[i], wt, wg)
				}
			}
		}
	}
}
