// Package fit refines model parameters against an observed image: a
// graph.Objective (loss and gradient from one run of the cached gradient
// program) minimised with gonum's optimize package.
//
// The optimiser works on rescaled coordinates z = (x − x0)/s, with s a
// typical change of each parameter (1 % of a length, 1°, 0.1 mm, …), so that
// Å, degrees and millimetres are equally conditioned. Standard errors come
// from the Hessian at the minimum, by central differences of the analytic
// gradient: the covariance is H⁻¹ for the Poisson likelihood and
// 2·σ²·H⁻¹ for squared residuals (σ² = loss/(pixels − parameters)), the
// Gauss–Newton estimate of each.
package fit

import (
	"errors"
	"fmt"
	"math"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// Method is an optimisation method.
type Method int

// The methods.
const (
	LBFGS Method = iota
	BFGS
	GradientDescent
)

var methodNames = [...]string{"lbfgs", "bfgs", "gd"}

func (m Method) String() string { return methodNames[m] }

// ParseMethod reads lbfgs, bfgs or gd.
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if s == n {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("unknown method %q: want lbfgs, bfgs or gd", s)
}

// Settings control a fit. Zero values take the defaults.
type Settings struct {
	Method   Method
	MaxIter  int // major iterations (default 100)
	MaxEvals int // loss-and-gradient evaluations (default 200)
	// Progress, when set, is called after every major iteration.
	Progress func(it Iteration)
}

// Iteration is one major iteration of the optimiser.
type Iteration struct {
	Iter, Evals int
	Loss        float64
	GradNorm    float64   // of the gradient in the rescaled coordinates
	X           []float64 // parameters, in their units
}

// Result is a fit's outcome. Partial results are filled in when the fit
// fails (Err).
type Result struct {
	Status      string // optimize's status, or why the fit stopped
	Loss        float64
	Evaluations int
	Iterations  int
	Start, X    []float64
	StdErr      []float64 // NaN where the Hessian gives none
	History     []Iteration
	Err         error
}

// Scale is the typical change of parameter name at value v: the unit of
// the optimiser's coordinates.
func Scale(name string, v float64) float64 {
	p, _ := models.LookupParam(name)
	switch p.Unit {
	case "Å":
		if name == "lambda" {
			return 1e-3 * math.Abs(v)
		}
		return 0.01 * math.Abs(v)
	case "deg":
		return 1
	case "mm":
		return 0.1
	case "cells":
		return 0.5
	}
	return 0.1 * math.Max(math.Abs(v), 1e-300)
}

// ErrDiverged reports a fit whose loss grew far beyond its start;
// ErrNotConverged one that reached its iteration or evaluation limit.
var (
	ErrDiverged     = errors.New("the fit diverged")
	ErrNotConverged = errors.New("the fit did not converge")
)

// Run minimises o's loss from o.Start().
func Run(o *graph.Objective, s Settings) *Result {
	if s.MaxIter <= 0 {
		s.MaxIter = 100
	}
	if s.MaxEvals <= 0 {
		s.MaxEvals = 200
	}
	x0 := o.Start()
	n := len(x0)
	scale := make([]float64, n)
	for i, name := range o.Names {
		scale[i] = Scale(name, x0[i])
	}
	r := &Result{Start: x0, X: append([]float64(nil), x0...), StdErr: nanSlice(n), Loss: math.NaN()}
	toX := func(z []float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = x0[i] + scale[i]*z[i]
		}
		return x
	}
	// One gradient-program run gives loss and gradient; gonum asks for
	// them separately at the same point.
	var lastZ, lastG []float64
	var lastF float64
	var evalErr error
	start := math.NaN()
	eval := func(z []float64) (float64, []float64) {
		if lastZ != nil && equal(z, lastZ) {
			return lastF, lastG
		}
		r.Evaluations++
		f, g, err := o.Gradient(toX(z))
		if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			err = fmt.Errorf("the loss is not finite (%g)", f)
		}
		if err != nil {
			if evalErr == nil {
				evalErr = err
			}
			f, g = math.Inf(1), make([]float64, n)
		}
		for i := range g {
			g[i] *= scale[i]
		}
		lastZ, lastF, lastG = append(lastZ[:0], z...), f, g
		if math.IsNaN(start) {
			start = f
		}
		return f, g
	}
	p := optimize.Problem{
		Func: func(z []float64) float64 { f, _ := eval(z); return f },
		Grad: func(dst, z []float64) { _, g := eval(z); copy(dst, g) },
	}
	rec := &recorder{toX: toX, progress: s.Progress, result: r}
	settings := &optimize.Settings{
		MajorIterations: s.MaxIter,
		FuncEvaluations: s.MaxEvals,
		Recorder:        rec,
		Converger:       &optimize.FunctionConverge{Absolute: 0, Relative: 1e-11, Iterations: 3},
	}
	var method optimize.Method
	switch s.Method {
	case BFGS:
		method = &optimize.BFGS{}
	case GradientDescent:
		method = &optimize.GradientDescent{}
	default:
		// A short memory: curvature pairs gathered while the predicted
		// spots are still far from the observed ones mislead the later,
		// near-quadratic steps. Over eight noise seeds of the 256² Poisson
		// test case the evaluations needed were at most 79 with 5 pairs
		// and up to 169 with gonum's default of 15.
		method = &optimize.LBFGS{Linesearcher: &optimize.MoreThuente{}, Store: 5}
	}

	// Stop at once when the loss is not finite at the start.
	f0, g0 := eval(make([]float64, n))
	if math.IsInf(f0, 0) {
		r.Status, r.Err = "failed", fmt.Errorf("at the starting model: %w", evalErr)
		return r
	}
	// Converged when the gradient has fallen by 1e9 (the parameters are
	// then good to ~1e-12 of their scales on a noise-free image).
	settings.GradientThreshold = 1e-9 * norm(g0)
	res, err := optimize.Minimize(p, make([]float64, n), settings, method)
	if res != nil {
		r.X, r.Loss, r.Status = toX(res.X), res.F, res.Status.String()
		r.Iterations = res.Stats.MajorIterations
	}
	switch {
	case evalErr != nil && (res == nil || math.IsInf(res.F, 0)):
		r.Status, r.Err = "failed", evalErr
	case errors.Is(err, optimize.ErrLinesearcherFailure):
		// At the resolution of the loss: no step lowers it further.
		r.Status = "converged (no step lowers the loss further)"
	case err != nil:
		r.Status, r.Err = "failed", err
	case r.Loss > 1e3*math.Abs(start) && r.Loss > start:
		r.Status, r.Err = "diverged", ErrDiverged
	case res != nil && (res.Status == optimize.FunctionEvaluationLimit || res.Status == optimize.IterationLimit):
		r.Err = fmt.Errorf("%w after %d evaluations and %d iterations (%s)", ErrNotConverged, r.Evaluations, r.Iterations, res.Status)
	}
	if r.Err != nil {
		return r
	}
	r.StdErr = stdErrs(o, r.X, scale)
	return r
}

// recorder keeps the major iterations and reports them.
type recorder struct {
	toX      func(z []float64) []float64
	progress func(Iteration)
	result   *Result
}

func (rc *recorder) Init() error { return nil }

func (rc *recorder) Record(loc *optimize.Location, op optimize.Operation, st *optimize.Stats) error {
	if op != optimize.MajorIteration {
		return nil
	}
	it := Iteration{Iter: st.MajorIterations, Evals: rc.result.Evaluations, Loss: loc.F, X: rc.toX(loc.X)}
	it.GradNorm = norm(loc.Gradient)
	rc.result.History = append(rc.result.History, it)
	if rc.progress != nil {
		rc.progress(it)
	}
	return nil
}

// stdErrs estimates standard errors at x from the Hessian of the loss,
// by central differences of the gradient (steps 1e-3 of each scale).
func stdErrs(o *graph.Objective, x, scale []float64) []float64 {
	n := len(x)
	out := nanSlice(n)
	h := mat.NewSymDense(n, nil)
	cols := make([][]float64, n)
	for j := 0; j < n; j++ {
		step := 1e-3 * scale[j]
		xp := append([]float64(nil), x...)
		xm := append([]float64(nil), x...)
		xp[j] += step
		xm[j] -= step
		_, gp, err1 := o.Gradient(xp)
		_, gm, err2 := o.Gradient(xm)
		if err1 != nil || err2 != nil {
			return out
		}
		cols[j] = make([]float64, n)
		for i := range cols[j] {
			cols[j][i] = (gp[i] - gm[i]) / (2 * step)
		}
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			h.SetSym(i, j, 0.5*(cols[j][i]+cols[i][j]))
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(h) {
		return out // not positive definite: no estimate
	}
	var cov mat.SymDense
	if err := chol.InverseTo(&cov); err != nil {
		return out
	}
	factor := 1.0
	if o.Loss.Kind == graph.LossSSE {
		loss, err := o.Value(x)
		if err != nil {
			return out
		}
		pixels := len(o.Loss.Observed)
		if o.Loss.Weights != nil {
			pixels = 0
			for _, w := range o.Loss.Weights {
				if w != 0 {
					pixels++
				}
			}
		}
		if pixels <= n {
			return out
		}
		factor = 2 * loss / float64(pixels-n)
	}
	for i := range out {
		if v := factor * cov.At(i, i); v >= 0 {
			out[i] = math.Sqrt(v)
		}
	}
	return out
}

func norm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
