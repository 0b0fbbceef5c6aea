package gradcheck

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// quadratic is f(x, y) = x²·y + sin y, with its gradient; wrong perturbs the
// analytic derivative by y by a relative 1e-4.
func quadratic(wrong bool) *Problem {
	return &Problem{
		Params: []Param{{Name: "x", Unit: "m", Step: 1e-3}, {Name: "y", Unit: "rad", Step: 1e-3}},
		Func:   func(v []float64) (float64, error) { return v[0]*v[0]*v[1] + math.Sin(v[1]), nil },
		Grad: func(v []float64) (float64, []float64, error) {
			dy := v[0]*v[0] + math.Cos(v[1])
			if wrong {
				dy *= 1 + 1e-4
			}
			return v[0]*v[0]*v[1] + math.Sin(v[1]), []float64{2 * v[0] * v[1], dy}, nil
		},
	}
}

// TestCheck: the right gradient passes (the fourth-order difference with
// h = 1e-3 has truncation error ~h⁴), a gradient wrong by 1e-4 fails.
func TestCheck(t *testing.T) {
	x := []float64{1.5, 0.7}
	r, err := Check(quadratic(false), x, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Errorf("right gradient failed: %+v", r.Rows)
	}
	want := []float64{2 * 1.5 * 0.7, 1.5*1.5 + math.Cos(0.7)}
	for i, row := range r.Rows {
		if math.Abs(*row.Numeric-want[i]) > 1e-10 {
			t.Errorf("%s: numeric %g, exact %g", row.Name, *row.Numeric, want[i])
		}
	}
	r, err = Check(quadratic(true), x, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() || !r.Rows[0].OK || r.Rows[1].OK {
		t.Errorf("wrong y derivative: rows %+v", r.Rows)
	}
}

// TestNotDifferentiable: such a row is reported, not evaluated, and does
// not fail the report.
func TestNotDifferentiable(t *testing.T) {
	p := quadratic(true)
	p.Params[1].NotDifferentiable = "a kink"
	r, err := Check(p, []float64{1, 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Rows[1].Differentiable || r.Rows[1].Analytic != nil || r.Rows[1].Note != "a kink" {
		t.Errorf("rows %+v", r.Rows)
	}
}

// TestWriters: the table has one line per parameter, the JSON the named
// fields.
func TestWriters(t *testing.T) {
	r, err := Check(quadratic(true), []float64{1.5, 0.7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	if err := r.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(tb.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[2], "FAIL") {
		t.Errorf("table:\n%s", tb.String())
	}
	var jb bytes.Buffer
	if err := r.WriteJSON(&jb); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(jb.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "unit", "analytic", "numeric", "abs_err", "rel_err", "ok"} {
		if _, ok := rows[1][k]; !ok {
			t.Errorf("JSON row lacks %q: %s", k, jb.String())
		}
	}
	if rows[1]["ok"] != false || rows[1]["name"] != "y" {
		t.Errorf("JSON row %v", rows[1])
	}
}

// TestBadInput: errors, not panics.
func TestBadInput(t *testing.T) {
	p := quadratic(false)
	if _, err := Check(p, []float64{1}, nil); err == nil {
		t.Error("wrong length accepted")
	}
	p.Params[0].Step = 0
	if _, err := Check(p, []float64{1, 1}, nil); err == nil {
		t.Error("zero step accepted")
	}
}
