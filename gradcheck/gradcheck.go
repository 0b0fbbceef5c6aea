// Package gradcheck compares analytic gradients with central finite
// differences, parameter by parameter, in the shape of gonum's diff/fd: a
// function, a point, Settings with a step per parameter, and a Report with
// the absolute and relative error of every named parameter.
//
// A row passes when its relative error |analytic − numeric| /
// max(|analytic|, |numeric|) is at most Settings.Tol, or when the absolute
// error is below what the difference itself can resolve: rounding in
// f(x±h) makes the difference uncertain by about ε·|f|/h (ε = 2.2e-16);
// the floor is a thousand times that, to cover the loss being a sum of
// many pixels. Rows decided by the floor say so in their Note. A step
// below MinRelStep of its parameter's value is refused: the points x ± h
// would then be rounded by more than about 1e-6 of the step, and the
// floor, which grows as the step shrinks, would pass anything.
package gradcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"gonum.org/v1/gonum/diff/fd"
)

// Param is one named coordinate of the function's argument.
type Param struct {
	Name, Unit string
	// Step is the central-difference step (in Unit).
	Step float64
	// NotDifferentiable, when set, says why the function is not
	// differentiable in this parameter; the row is reported, not checked.
	NotDifferentiable string
}

// Problem is a function with an analytic gradient.
type Problem struct {
	Params []Param
	// Func evaluates the function; Grad the function and its gradient.
	Func func(x []float64) (float64, error)
	Grad func(x []float64) (float64, []float64, error)
}

// Settings control a check. The zero value uses Tol 1e-6 and Central4.
type Settings struct {
	Tol float64
	// Formula is the difference formula (gonum's fd.Central, or
	// Central4); its Step is ignored: each Param has its own.
	Formula fd.Formula
}

// Central4 is the fourth-order central difference
// f'(x) ≈ [f(x−2h) − 8f(x−h) + 8f(x+h) − f(x+2h)]/(12h). Sharp Bragg
// spots make the image strongly curved in the parameters; its truncation
// error (h⁴) lets the steps stay large enough for rounding not to matter.
var Central4 = fd.Formula{
	Stencil:    []fd.Point{{Loc: -2, Coeff: 1.0 / 12}, {Loc: -1, Coeff: -8.0 / 12}, {Loc: 1, Coeff: 8.0 / 12}, {Loc: 2, Coeff: -1.0 / 12}},
	Derivative: 1,
	Step:       1e-3, // fd's default; Check passes each parameter's own step
}

// MinRelStep is the smallest step Check takes, relative to the
// parameter's value: float64 rounds x ± h by up to ε·|x|/2 (ε = 2.2e-16),
// which at h = 1e-10·|x| is 1.1e-6 of h, about the default tolerance.
const MinRelStep = 1e-10

// Row is the result for one parameter. WriteJSON writes its numbers
// that are not finite (NaN, ±Inf) as null, as it does those that are nil.
type Row struct {
	Name     string   `json:"name"`
	Unit     string   `json:"unit"`
	Analytic *float64 `json:"analytic"` // nil when not differentiable
	Numeric  *float64 `json:"numeric"`
	AbsErr   *float64 `json:"abs_err"`
	RelErr   *float64 `json:"rel_err"`
	OK       bool     `json:"ok"`
	Step     float64  `json:"step"`
	// Differentiable is false for parameters the function is not
	// differentiable in; Note says why (or, for a passing row under the
	// rounding floor, that the floor decided it).
	Differentiable bool   `json:"differentiable"`
	Note           string `json:"note,omitempty"`
}

// Report is the outcome of Check.
type Report struct {
	Value float64 // the function at x
	Tol   float64
	Rows  []Row
}

// OK reports whether every checked row passed.
func (r *Report) OK() bool {
	for _, row := range r.Rows {
		if !row.OK {
			return false
		}
	}
	return true
}

// Check evaluates the analytic gradient at x and a central difference for
// every parameter (with gonum's fd.Derivative), and compares them.
func Check(p *Problem, x []float64, s *Settings) (*Report, error) {
	if len(x) != len(p.Params) {
		return nil, fmt.Errorf("gradcheck: %d values for %d parameters", len(x), len(p.Params))
	}
	tol, formula := 1e-6, Central4
	if s != nil && s.Tol > 0 {
		tol = s.Tol
	}
	if s != nil && s.Formula.Stencil != nil {
		formula = s.Formula
	}
	if formula.Derivative != 1 || !(formula.Step > 0) {
		return nil, fmt.Errorf("gradcheck: the formula must be a first derivative with a positive default step")
	}
	f0, grad, err := p.Grad(x)
	if err != nil {
		return nil, err
	}
	if len(grad) != len(x) {
		return nil, fmt.Errorf("gradcheck: gradient has %d values for %d parameters", len(grad), len(x))
	}
	r := &Report{Value: f0, Tol: tol}
	for i, par := range p.Params {
		row := Row{Name: par.Name, Unit: par.Unit, Step: par.Step, Differentiable: par.NotDifferentiable == ""}
		if !row.Differentiable {
			row.OK, row.Note = true, par.NotDifferentiable
			r.Rows = append(r.Rows, row)
			continue
		}
		if !(par.Step > 0) || math.IsInf(par.Step, 0) {
			return nil, fmt.Errorf("gradcheck: %s: step %g must be a positive number", par.Name, par.Step)
		}
		if par.Step < MinRelStep*math.Abs(x[i]) {
			return nil, fmt.Errorf("gradcheck: %s: step %g is below %g of its value %g: too small to resolve", par.Name, par.Step,
				MinRelStep, x[i])
		}
		var ferr error
		xi := append([]float64(nil), x...)
		num := fd.Derivative(func(v float64) float64 {
			xi[i] = v
			f, err := p.Func(xi)
			if err != nil && ferr == nil {
				ferr = err
			}
			return f
		}, x[i], &fd.Settings{Formula: formula, Step: par.Step})
		if ferr != nil {
			return nil, fmt.Errorf("gradcheck: %s ± %g: %w", par.Name, par.Step, ferr)
		}
		ana := grad[i]
		abs := math.Abs(ana - num)
		scale := math.Max(math.Abs(ana), math.Abs(num))
		rel := 0.0
		if scale != 0 { // NaN too: a row that is not finite has no relative error
			rel = abs / scale
		}
		floor := 1e3 * 0x1p-52 * math.Abs(f0) / par.Step
		row.Analytic, row.Numeric, row.AbsErr, row.RelErr = &ana, &num, &abs, &rel
		switch {
		case math.IsNaN(ana) || math.IsNaN(num) || math.IsInf(ana, 0) || math.IsInf(num, 0):
			row.Note = "not finite"
		case rel <= tol:
			row.OK = true
		case abs <= floor:
			row.OK = true
			row.Note = fmt.Sprintf("below the rounding floor %.2g of the difference", floor)
		}
		r.Rows = append(r.Rows, row)
	}
	return r, nil
}

// WriteTable writes one line per parameter: name, analytic, numeric,
// absolute and relative error, ok.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "parameter\tunit\tanalytic\tnumeric\tabs err\trel err\tok\t\n")
	num := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.10g", *v)
	}
	short := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.2g", *v)
	}
	for _, row := range r.Rows {
		ok := "ok"
		switch {
		case !row.Differentiable:
			ok = "n/a"
		case !row.OK:
			ok = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Name, row.Unit, num(row.Analytic), num(row.Numeric),
			short(row.AbsErr), short(row.RelErr), ok)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, row := range r.Rows {
		if row.Note != "" {
			fmt.Fprintf(w, "%s: %s\n", row.Name, row.Note)
		}
	}
	return nil
}

// WriteJSON writes the rows as a JSON array, numbers that are not
// finite as null (JSON has no NaN or infinity; such a row has OK false
// and the note "not finite").
func (r *Report) WriteJSON(w io.Writer) error {
	rows := make([]Row, len(r.Rows))
	for i, row := range r.Rows {
		for _, v := range []**float64{&row.Analytic, &row.Numeric, &row.AbsErr, &row.RelErr} {
			if *v != nil && (math.IsNaN(**v) || math.IsInf(**v, 0)) {
				*v = nil
			}
		}
		rows[i] = row
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(rows)
}
