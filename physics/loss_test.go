package physics

import (
	"math"
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
