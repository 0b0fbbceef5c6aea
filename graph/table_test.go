package graph

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
)

// writeHalfHKL writes an -hkl file listing every other reflection with
// |h|, |k|, |l| ≤ n (F from its indices), so that half of the grid's
// cells have no data and take the default F.
func writeHalfHKL(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	i := 0
	for h := -n; h <= n; h++ {
		for k := -n; k <= n; k++ {
			for l := -n; l <= n; l++ {
				if i++; i%2 == 0 {
					fmt.Fprintf(&b, "%d %d %d %g\n", h, k, l, 10+math.Abs(float64(3*h+5*k+7*l)))
				}
			}
		}
	}
	path := filepath.Join(t.TempDir(), "half.hkl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTableReuse: a fit's evaluations build a simulator per evaluation
// from models that share one structure-factor grid. They must not copy
// the table each time (three table-sized copies a gradient did, most of
// a box fit's time with a table of half a million cells), and the kept
// fill must give the bits a fresh model gives, also when the default F,
// which fills the cells without data, changes between evaluations.
func TestTableReuse(t *testing.T) {
	const n = 24 // 49³ cells, 950 kB a copy
	hkl := writeHalfHKL(t, n)
	argv := []string{"-hkl", hkl, "-cell", "40", "40", "40", "90", "90", "90", "-lambda", "1", "-N", "5",
		"-default_F", "20", "-distance", "60", "-pixel", "0.2", "-detpixels", "48", "-misset", "10", "20", "30"}
	m := model(t, argv...)
	cells := len(m.Crystal.HKL.F)
	if cells < (2*n+1)*(2*n+1)*(2*n+1) {
		t.Fatalf("the grid has %d cells", cells)
	}
	names := []string{"a", "misset_x", "default_F"}
	loss := Loss{Kind: LossSum}
	x := []float64{40, 10, 20}
	// Bytes allocated by one evaluation (after a first one: the fill for
	// a default F is made once, and every evaluation here is at the same
	// one), against those of the same model without the table: the least
	// of three rounds of four, since TotalAlloc counts the whole process
	// (one run of the package's tests in the Go 1.26 vector build once
	// found 480 kB more an evaluation, which nine more runs did not).
	perEval := func(m *models.Model) float64 {
		o, err := NewObjective(m, names, loss)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := o.Gradient(x); err != nil {
			t.Fatal(err)
		}
		least := math.Inf(1)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const evals = 4
			for range evals {
				if _, _, err := o.Gradient(x); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			least = min(least, float64(after.TotalAlloc-before.TotalAlloc)/evals)
		}
		return least
	}
	with, without := perEval(m), perEval(model(t, argv[2:]...))
	if table := 8 * float64(cells); with-without > table/4 {
		t.Errorf("an evaluation allocated %.0f bytes, %.0f without the table of %.0f: copied per evaluation", with, without, table)
	}
	o, err := NewObjective(m, names, loss)
	if err != nil {
		t.Fatal(err)
	}
	// The same values as from a model read afresh (its own grid, whose
	// fill is made for it), at two default Fs taken in turn.
	for _, def := range []float64{20, 35, 20} {
		x := []float64{40.1, 10.2, def}
		v, g, err := o.Gradient(x)
		if err != nil {
			t.Fatal(err)
		}
		fresh := append(append([]string{}, argv...), "-default_F", fmt.Sprint(def))
		mf := model(t, fresh...)
		of, err := NewObjective(mf, names, loss)
		if err != nil {
			t.Fatal(err)
		}
		vf, gf, err := of.Gradient(x)
		if err != nil {
			t.Fatal(err)
		}
		if v != vf || fmt.Sprint(g) != fmt.Sprint(gf) {
			t.Errorf("default F %g: loss %v gradient %v, a fresh model's %v %v", def, v, g, vf, gf)
		}
		if g[2] == 0 {
			t.Errorf("default F %g: no derivative by the default F: the cells without data were not found", def)
		}
	}
}
