package physics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPoissonTermNoCounts: the shortcut for pixels without counts gives
// the bits of the full formula w·(v − o·ln v), w·(1 − o/v) at o = ±0, for
// v across the float64 range, its edges (the smallest subnormal, the
// largest finite) and beyond (+Inf and NaN, where the formula's NaN must
// stay), and for weights 1, 0.37 and 0.
func TestPoissonTermNoCounts(t *testing.T) {
	vs := []float64{5e-324, 2.2e-308, 1e-200, 1e-9, 0.5, 1, 1 + 0x1p-52, 2, 3.7, 1e9, 1e300, math.MaxFloat64,
		math.Inf(1), math.NaN(), 0, math.Copysign(0, -1), -1, math.Inf(-1)}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	for _, o := range []float64{0, math.Copysign(0, -1)} {
		for _, w := range []float64{1, 0.37, 0} {
			for _, v := range vs {
				// The formula as poissonTerm had it before the shortcut.
				wt, wdt := math.Inf(1), math.Inf(-1)
				switch {
				case v > 0:
					wt, wdt = w*(v-o*math.Log(v)), w*(1-o/v)
				case o == 0:
					wt, wdt = w*v, w
				}
				gt, gdt := poissonTerm(v, o, w)
				if !same(gt, wt) || !same(gdt, wdt) {
					t.Errorf("poissonTerm(%g, %g, %g) = %g, %g; the formula gives %g, %g", v, o, w, gt, gdt, wt, wdt)
				}
			}
		}
	}
}

// TestLanesLossSums: lossSums, with every lane kernel this binary runs,
// against the definition of a tile's sums (written out here): the p-th
// value added to sum p mod 8 by Neumaier's step (x = s + v; the
// compensation gains (s − x) + v where |s| ≥ |v|, else (v − x) + s), in
// order, starting from the sums a previous chunk left; bit for bit, on
// values that take both branches (magnitudes from 1e-300 to 1e300 of both
// signs, and values that cancel the one eight before, in the same sum),
// ±0, ±Inf and NaN; with ones set the values
// become 1, without they stay, and values past n are not read or written.
// Then lossSum.value: the sums added with compensation in slot order,
// then the compensations.
func TestLanesLossSums(t *testing.T) {
	defer UseVectorLanes(VectorLanes())
	step := func(s, c, v float64) (float64, float64) {
		x := s + v
		if math.Abs(s) >= math.Abs(v) {
			return x, c + ((s - x) + v)
		}
		return x, c + ((v - x) + s)
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	rng := rand.New(rand.NewPCG(5, 6))
	value := func() float64 {
		switch rng.IntN(12) {
		case 0:
			return math.Copysign(0, -1)
		case 1:
			return 0
		default:
			return math.Copysign(math.Pow(10, 600*rng.Float64()-300), rng.Float64()-0.5)
		}
	}
	for _, tier := range AvailableVectorLanes() {
		if err := UseVectorLanes(tier); err != nil {
			t.Fatal(err)
		}
		for _, special := range []float64{1, math.Inf(1), math.Inf(-1), math.NaN()} {
			for _, n := range []int{0, 8, 16, 64, 1024} {
				vals := make([]float64, n+5)
				for p := range vals {
					vals[p] = value()
					if p >= 8 && rng.IntN(5) == 0 {
						vals[p] = -vals[p-8] // cancels in the same sum
					}
				}
				if special != 1 && n > 0 {
					vals[rng.IntN(n)] = special
				}
				var start lossSum
				for q := range lossSlots {
					start.s[q], start.c[q] = value(), value()*1e-17
				}
				for _, ones := range []bool{false, true} {
					want := start
					for p := range n {
						q := p % 8
						want.s[q], want.c[q] = step(want.s[q], want.c[q], vals[p])
					}
					got := start
					v := append([]float64(nil), vals...)
					lossSums(v, n, ones, &got)
					for q := range lossSlots {
						if !same(got.s[q], want.s[q]) || !same(got.c[q], want.c[q]) {
							t.Fatalf("%s, n %d, %v, ones %v: slot %d: (%g, %g), want (%g, %g)", tier, n, special, ones, q, got.s[q], got.c[q], want.s[q], want.c[q])
						}
					}
					for p := range v {
						w := vals[p]
						if ones && p < n {
							w = 1
						}
						if !same(v[p], w) {
							t.Fatalf("%s, n %d, ones %v: value %d is %g, want %g", tier, n, ones, p, v[p], w)
						}
					}
				}
			}
		}
	}
	var a lossSum
	var s, c float64
	for q := range lossSlots {
		a.s[q], a.c[q] = value(), value()*1e-17
	}
	for q := range lossSlots {
		s, c = step(s, c, a.s[q])
	}
	for q := range lossSlots {
		c += a.c[q]
	}
	if got := a.value(); !same(got, s+c) {
		t.Errorf("value %g, want %g", got, s+c)
	}
}
