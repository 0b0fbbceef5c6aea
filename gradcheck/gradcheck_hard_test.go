package gradcheck

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestJSONNotFinite: a row whose numbers are not finite is written as
// JSON with nulls for them (encoding/json refuses NaN), and fails.
func TestJSONNotFinite(t *testing.T) {
	p := &Problem{
		Params: []Param{{Name: "x", Unit: "m", Step: 1e-3}},
		Func:   func(v []float64) (float64, error) { return math.NaN(), nil },
		Grad:   func(v []float64) (float64, []float64, error) { return math.NaN(), []float64{math.NaN()}, nil },
	}
	r, err := Check(p, []float64{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	if len(rows) != 1 || rows[0]["analytic"] != nil || rows[0]["numeric"] != nil || rows[0]["rel_err"] != nil ||
		rows[0]["ok"] != false || rows[0]["note"] != "not finite" {
		t.Errorf("rows %v", rows)
	}
	if r.OK() {
		t.Error("a row that is not finite passed")
	}
}

// TestStepTooSmall: a step lost in the rounding of x ± step is refused;
// taken, the rounding floor (which grows as 1/step) passed the row
// whatever the difference gave. One just above MinRelStep of x is
// checked.
func TestStepTooSmall(t *testing.T) {
	x := []float64{1.5, 0.7}
	p := quadratic(false)
	p.Params[0].Step = 1e-300
	if _, err := Check(p, x, nil); err == nil || !strings.Contains(err.Error(), "too small") {
		t.Errorf("step 1e-300: %v, want too small", err)
	}
	p.Params[0].Step = 2 * MinRelStep * x[0]
	if _, err := Check(p, x, &Settings{Tol: 1e-3}); err != nil {
		t.Errorf("step %g: %v", p.Params[0].Step, err)
	}
}
