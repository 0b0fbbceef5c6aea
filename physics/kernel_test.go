package physics

import (
	"math"
	"testing"
)

// TestSincg checks the lattice transform against its definition
// sin(Nπh)/sin(πh) away from integers, and against the analytic limit
// (−1)^{(N−1)n}·N at integer h = n, where the quotient is 0/0.
func TestSincg(t *testing.T) {
	for _, n := range []float64{1, 2, 3, 5, 10} {
		for _, h := range []float64{0.1, 0.37, -1.3, 2.5, 7.77, -12.01} {
			want := math.Sin(n*math.Pi*h) / math.Sin(math.Pi*h)
			if got := Sincg(h, n); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("Sincg(%g, %g) = %.15g, definition gives %.15g", h, n, got, want)
			}
		}
		for _, m := range []float64{0, 1, -1, 2, 3, -7} {
			want := n
			if math.Mod(math.Abs((n-1)*m), 2) == 1 {
				want = -n
			}
			if got := Sincg(m, n); got != want {
				t.Errorf("Sincg(%g, %g) = %g, limit is %g", m, n, got, want)
			}
		}
	}
	// Non-integer N (continuous N for gradients): the definition, N at 0.
	if got, want := Sincg(0.3, 4.5), math.Sin(4.5*math.Pi*0.3)/math.Sin(math.Pi*0.3); math.Abs(got-want) > 1e-12 {
		t.Errorf("Sincg(0.3, 4.5) = %g, want %g", got, want)
	}
	if got := Sincg(0, 4.5); got != 4.5 {
		t.Errorf("Sincg(0, 4.5) = %g, want 4.5", got)
	}
}

// TestPolarization checks the Kahn factor on geometries with textbook
// answers: unpolarized ½(1+cos²2θ); fully polarized (K=1) scattering in
// the plane of the E-vector gives cos²2θ, perpendicular to it gives 1.
func TestPolarization(t *testing.T) {
	inc := [3]float64{1, 0, 0}
	axis := [3]float64{0, 0, 1} // E-vector along z
	tt := 30 * math.Pi / 180
	inPlane := [3]float64{math.Cos(tt), 0, math.Sin(tt)}
	perp := [3]float64{math.Cos(tt), math.Sin(tt), 0}
	c2 := math.Cos(tt) * math.Cos(tt)
	for _, c := range []struct {
		name string
		k    float64
		d    [3]float64
		want float64
	}{
		{"unpolarized", 0, inPlane, 0.5 * (1 + c2)},
		{"K=1 in E plane", 1, inPlane, c2},
		{"K=1 perpendicular", 1, perp, 1},
		{"K=0.5 perpendicular", 0.5, perp, 0.5 * (1 + c2 + 0.5*(1-c2))},
		{"forward", 1, inc, 1},
	} {
		if got := Polarization(c.k, inc, c.d, axis); math.Abs(got-c.want) > 1e-14 {
			t.Errorf("%s: %.16g, want %.16g", c.name, got, c.want)
		}
	}
}
