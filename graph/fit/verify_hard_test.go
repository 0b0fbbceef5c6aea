package fit

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gobragg/gobragg/graph"
)

// smallArgs is a 128² version of the reference images' model: a quick fit.
var smallArgs = []string{"-cell", "64", "77", "83", "81", "87", "99", "-misset", "12", "-7", "31", "-default_F", "100", "-N", "6",
	"-lambda", "1.2", "-distance", "90", "-pixel", "0.1", "-detpixels", "128", "-oversample", "1", "-fluence", "1e29"}

// armedContext is a context whose Err turns to Canceled once armed (the
// fit only asks Err).
type armedContext struct {
	context.Context
	armed atomic.Bool
}

func (c *armedContext) Err() error {
	if c.armed.Load() {
		return context.Canceled
	}
	return nil
}

// armingComm is one process that arms ctx at the evals-th evaluation of
// the fit's images (a gathered block of width, 1 + the parameters).
type armingComm struct {
	ctx          *armedContext
	width, evals int
	seen         int
}

func (c *armingComm) Rank() int { return 0 }
func (c *armingComm) Size() int { return 1 }
func (c *armingComm) Allgather(d []float64) ([]float64, error) {
	if len(d) == c.width {
		if c.seen++; c.seen == c.evals {
			c.ctx.armed.Store(true)
		}
	}
	return d, nil
}

// limitedFit is a fit of smallArgs' noisy image from a start off in cell
// and orientation, stopped by MaxEvals 1 after one evaluation of the full
// model (no coarse stage): the convergence test runs after it.
func limitedFit(t *testing.T, s Settings) *Result {
	t.Helper()
	truth := model(t, smallArgs...)
	l, boxes := prepared(t, truth, graph.LossPoisson, noisy(t, truth, nil, 11))
	o, err := graph.NewObjective(offsetOrient(t, truth), cellOrient, l)
	if err != nil {
		t.Fatal(err)
	}
	s.Boxes, s.Starts, s.Coarse, s.MaxEvals = boxes, 1, -1, 1
	return RunProblem(&Problem{Shared: o.Names, Images: []Image{{Objective: o, Boxes: boxes}}}, s)
}

// TestInterruptDuringVerify: a context that ends during the convergence
// test stops the test (it checks between the Hessian's gradient
// evaluations and before each Newton step), and the fit is interrupted
// with the point it had. The context is armed at the third evaluation of
// the image: the start's, the optimiser's one (its limit), then the
// test's first, at the optimiser's point; the Hessian's 18 follow
// unless the test stops.
func TestInterruptDuringVerify(t *testing.T) {
	ctx := &armedContext{Context: context.Background()}
	r := limitedFit(t, Settings{Context: ctx, Comm: &armingComm{ctx: ctx, width: 1 + len(cellOrient), evals: 3}})
	if n := len(r.Stages); n == 0 || r.Stages[n-1].Status != "FunctionEvaluationLimit" {
		t.Fatalf("the optimiser did not end at its limit, so the interruption did not come in the test: stages %+v", r.Stages)
	}
	t.Logf("%s after %d evaluations, stages %+v", r.Status, r.Evaluations, r.Stages)
	if r.Status != Interrupted || r.Evaluations > 3 || !finite(r.Loss) || r.Model == nil {
		t.Errorf("%s after %d evaluations (loss %g): want interrupted after at most 3", r.Status, r.Evaluations, r.Loss)
	}
}

// TestLimitReason: a fit stopped by MaxEvals says how many evaluations
// the optimiser made and how many the convergence test added, and the two
// make up Result.Evaluations (the test is not bound by the limit).
func TestLimitReason(t *testing.T) {
	r := limitedFit(t, Settings{})
	want := fmt.Sprintf("the optimiser stopped at its limit after 1 evaluations and %d iterations (limits 1 and 500); "+
		"the convergence test then took %d more evaluations", r.Iterations, r.Evaluations-1)
	if r.Status != NotConverged || !strings.Contains(r.Reason, want) || r.Evaluations < 2 {
		t.Errorf("%s after %d evaluations: %q, want it to contain %q", r.Status, r.Evaluations, r.Reason, want)
	}
}

// TestCheckBound: a bound must be finite, ordered, positive for a scale
// and within what the model accepts at both ends (the models package's
// ranges: cell edges 0.001 to 10⁶ Å, angles 0 to 180°, fluence at most
// 1e50), and RunProblem refuses one that is not before any evaluation.
func TestCheckBound(t *testing.T) {
	m := model(t, smallArgs...)
	for _, c := range []struct {
		name   string
		b      Bound
		reason string // "" when good
	}{
		{"a", Bound{60, 70}, ""},
		{"fluence", Bound{1e27, 1e31}, ""},
		{"a", Bound{70, 60}, "lo < hi"},
		{"a", Bound{1e-9, 1e9}, "lengths must lie between"},
		{"a", Bound{60, 1e7}, "lengths must lie between"},
		{"alpha", Bound{-10, 170}, "strictly between 0 and 180"},
		{"fluence", Bound{-1e30, 1e30}, "must be positive"},
		{"fluence", Bound{1e20, 1e60}, "at most 1e+50"},
		{"Na", Bound{0.5, 10}, "at least one unit cell"},
	} {
		err := CheckBound(m, c.name, c.b)
		if (err == nil) != (c.reason == "") || err != nil && !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s %g:%g: %v, want %q", c.name, c.b.Lo, c.b.Hi, err, c.reason)
		}
	}
	o, err := graph.NewObjective(m, []string{"a", "b"}, graph.Loss{Kind: graph.LossSum})
	if err != nil {
		t.Fatal(err)
	}
	r := Run(o, Settings{Starts: 1, Bounds: map[string]Bound{"a": {1e-9, 1e9}}})
	if r.Status != Failed || r.Evaluations != 0 || r.Err == nil || !strings.Contains(r.Err.Error(), "bound of a") {
		t.Errorf("%s after %d evaluations: %v", r.Status, r.Evaluations, r.Err)
	}
}

// TestInterruptInALaterStart: a signal during a later automatic start
// ends the fit interrupted (exit 130 at the command line) with the best
// point so far. It ended with the best earlier start's verdict (here not
// converged, exit 1; converged, exit 0, when the signal came during the
// confirming start).
func TestInterruptInALaterStart(t *testing.T) {
	truth := model(t, smallArgs...)
	l, boxes := prepared(t, truth, graph.LossPoisson, noisy(t, truth, nil, 11))
	o, err := graph.NewObjective(offsetOrient(t, truth), cellOrient, l)
	if err != nil {
		t.Fatal(err)
	}
	ctx := &armedContext{Context: context.Background()}
	s := Settings{Boxes: boxes, Context: ctx, Progress: func(it Iteration) {
		if it.Start > 0 {
			ctx.armed.Store(true)
		}
	}}
	r := RunProblem(&Problem{Shared: o.Names, Images: []Image{{Objective: o, Boxes: boxes}}}, s)
	second := false
	for _, st := range r.Stages {
		second = second || st.Start > 0
	}
	if !second {
		t.Fatalf("%s: no second start began, stages %+v", r.Status, r.Stages)
	}
	if r.Status != Interrupted || !finite(r.Loss) || r.Model == nil {
		t.Errorf("%s (loss %g): want interrupted with the best point", r.Status, r.Loss)
	}
}

// TestInterruptDuringStdErrs: the sse loss's standard errors render two
// images a parameter (sseMeat); a context that ends there stops them,
// and the fit is interrupted. The context is armed at the first gather
// of blocks of 2 (the residuals' dispersion, sseMeat's first step).
func TestInterruptDuringStdErrs(t *testing.T) {
	ctx := &armedContext{Context: context.Background()}
	truth := model(t, smallArgs...)
	l, boxes := prepared(t, truth, graph.LossSSE, noisy(t, truth, nil, 11))
	o, err := graph.NewObjective(truth, cellOrient, l) // (from the truth: a Hessian that is positive definite)
	if err != nil {
		t.Fatal(err)
	}
	comm := &armingComm{ctx: ctx, width: 2, evals: 1}
	r := RunProblem(&Problem{Shared: o.Names, Images: []Image{{Objective: o, Boxes: boxes}}},
		Settings{Boxes: boxes, Starts: 1, Coarse: -1, MaxEvals: 1, Context: ctx, Comm: comm})
	t.Logf("%s: %s; std errors %v", r.Status, r.Reason, r.StdErr)
	if comm.seen == 0 {
		t.Fatal("no standard errors were computed, so the interruption did not come in the test")
	}
	if r.Status != Interrupted || !finite(r.Loss) || r.Model == nil {
		t.Errorf("%s (loss %g): want interrupted", r.Status, r.Loss)
	}
}
