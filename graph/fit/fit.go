// Package fit refines model parameters against an observed image: a
// graph.Objective (loss and gradient from one run of the cached gradient
// program) minimised with gonum's optimize package.
//
// A fit runs in stages. Sharp spots make the loss a landscape of narrow
// valleys: a start a few per cent off in the cell predicts spots where
// none were observed. The first stages therefore fit a coarse model whose
// crystal is smaller (N halved, once or more, with the fluence raised so
// that each reflection keeps its integrated intensity, and the distance
// held): its spots are broader and its loss smooth over a wider range; the
// first of them fits only the lowest-resolution spot boxes
// (innerFraction). Each stage starts where the last ended; the last fits
// the model itself. A fit makes up to AutoStarts starts and ends when two
// have converged to the same best minimum.
//
// Every parameter lives in a bounded range (Bound, DefaultBound), reached
// through a smooth map of the optimiser's unbounded variables (space), so
// that no trial point is ever invalid; near the start the variables are
// rescaled coordinates (1 % of a length, 1°, 0.1 mm, … per unit, Scale).
// Gaussian restraints (Restraint) add their negative log-likelihood.
//
// A fit is converged when, at its end, the Hessian of the loss (central
// differences of the analytic gradient) is positive definite, the Newton
// step predicts a further decrease of the loss below ConvergedDecrease,
// in likelihood units (for squared residuals: the loss over 2σ_d²), no
// parameter sits at its bound and the model explains the observed spots
// (SpotCheck, MaxUnexplained): the parameters are then within a few
// hundredths of a standard error of a minimum that accounts for the data.
// When the optimiser stops short of the decrease, up to three Newton
// steps finish the work. Standard errors come from the same Hessian: the
// covariance is H⁻¹ for the likelihoods (poisson, gauss) and, for squared
// residuals, whose pixels do not share one variance, the sandwich
// H⁻¹·(Σ g_i g_iᵀ)·H⁻¹ over the pixels' gradients g_i with quasi-Poisson
// variances.
//
// The README's capture study (BenchmarkCapture) and TestStdErrs measure
// all of this.
package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strings"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/graph/fit/spots"
	"github.com/gobragg/gobragg/models"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// Method is an optimisation method.
type Method int

// The methods.
const (
	// BFGS keeps the whole inverse-Hessian estimate: fits have few
	// parameters, often strongly correlated (the cell's scale and the
	// distance), where it needed 105–160 evaluations against L-BFGS's
	// 130–170 (cell and orientation) and ~200 against 550–670 (sixteen
	// parameters).
	BFGS Method = iota
	LBFGS
	GradientDescent
)

var methodNames = [...]string{"bfgs", "lbfgs", "gd"}

func (m Method) String() string { return methodNames[m] }

// ParseMethod reads bfgs, lbfgs or gd.
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if s == n {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("unknown method %q: want bfgs, lbfgs or gd", s)
}

// Restraint is a Gaussian prior on a parameter: centre and σ in its unit.
type Restraint struct {
	Centre, Sigma float64
}

// confirmLoss is how much lower (likelihood units) a second converged
// start's loss must be to count as a different, better minimum.
const confirmLoss = 1

// AutoStarts is how many starts a fit tries at most by default
// (Settings.Starts 0). Two converged starts end it: on sparse data (~1,200
// photons) a first start can converge, explaining every spot, in a
// minimum 27 likelihood units worse than the optimum (N of 4 cells and
// twice the fluence, for 6 and 1×), which the second start finds.
const AutoStarts = 5

// ConvergedDecrease is the largest decrease of the loss (likelihood
// units) that the Newton step may still predict at a converged fit.
const ConvergedDecrease = 1e-3

// MaxUnexplained is the largest fraction of the judged spot boxes a
// converged fit may leave unexplained (SpotCheck). Over the fits of the
// README's benchmark, fits at the optimum left none and fits in wrong
// minima 30–90 %.
const MaxUnexplained = 0.1

// Settings control a fit. Zero values take the defaults.
type Settings struct {
	Method Method
	// MaxIter bounds the major iterations and MaxEvals the loss-and-
	// gradient evaluations of each start, over its stages together
	// (defaults 500 and 1000). The convergence test's Hessians count as
	// evaluations but are not stopped by the limit.
	MaxIter, MaxEvals int
	// Bounds override DefaultBound by parameter name.
	Bounds map[string]Bound
	// Restraints add ½((x − centre)/σ)² per named parameter to the
	// negative log-likelihood (for squared residuals, that times 2σ²_d,
	// σ²_d the mean of observed + read-out variance over the fitted pixels).
	Restraints map[string]Restraint
	// Coarse is the number of coarse stages (N halved each): 0 chooses
	// (halving while N stays at least 2.5 cells; see CoarseStages), a
	// negative number turns them off.
	Coarse int
	// Starts is the number of starts. Starts after the first are drawn
	// around the start (uniform within ±2 of each parameter's scale, inside
	// its bound; seeded by Seed), and the converged fit with the lowest
	// loss wins. 0 (the default) runs up to AutoStarts starts and stops
	// when a second start has converged to no better minimum than the best
	// so far (lower by at most confirmLoss): a fit is confirmed by two.
	Starts int
	Seed   int64
	// Boxes, when set, are the boxes of the observed spots (package
	// spots): a fit is converged only if its model explains all but
	// MaxUnexplained of those with a significant spot (SpotCheck).
	Boxes []spots.Box
	// Progress, when set, is called after every major iteration.
	Progress func(it Iteration)
	// Context, when set, stops the fit when it is done: the result is
	// then "interrupted", with the best point so far.
	Context context.Context
}

// Iteration is one major iteration of the optimiser.
type Iteration struct {
	Start       int    // which start (0 for the first)
	Stage       string // "coarse N=…" or "full"
	Iter, Evals int    // over the whole fit
	Loss        float64
	GradNorm    float64   // of the gradient in the optimiser's variables
	X           []float64 // the fit's parameters (Names order), in their units
}

// Status is a fit's verdict.
type Status string

// The verdicts.
const (
	Converged    Status = "converged"
	NotConverged Status = "not converged"
	Interrupted  Status = "interrupted"
	Failed       Status = "failed" // no fit was possible (e.g. the loss is not finite at the start)
)

// Result is a fit's outcome.
type Result struct {
	Status Status
	// Reason says why a fit is not converged (empty when it is).
	Reason string
	Loss   float64
	// Decrement is the decrease of the loss the last Newton step
	// predicted, in likelihood units (NaN when there was no Hessian).
	Decrement   float64
	Evaluations int
	Iterations  int
	Names       []string
	Start, X    []float64
	StdErr      []float64 // NaN where the Hessian gives none
	Bounds      []Bound
	History     []Iteration
	Stages      []StageReport
	// Spots is the spot check at X (with Settings.Boxes).
	Spots SpotCheck
	// Model is the model at X (the start's model when no fit ran).
	Model *models.Model
	// Err is set for every status but Converged: why.
	Err error
}

// StageReport summarises one stage of one start.
type StageReport struct {
	Start              int
	Name               string
	Evaluations, Iters int
	Loss               float64
	Status             string // optimize's status
}

// ErrNotConverged wraps every reason a fit is not converged.
var ErrNotConverged = errors.New("the fit did not converge")

// CoarseStages is the automatic number of coarse stages for a crystal of
// na×nb×nc cells: halvings of N while the geometric mean of the three
// stays at least 2.5 cells.
func CoarseStages(na, nb, nc float64) int {
	n := math.Cbrt(na * nb * nc)
	k := 0
	for n/math.Pow(2, float64(k+1)) >= 2.5 && k < 4 {
		k++
	}
	return k
}

// Run minimises o's loss (plus restraints) over o.Names from o.Start().
func Run(o *graph.Objective, s Settings) *Result {
	if s.MaxIter <= 0 {
		s.MaxIter = 500
	}
	if s.MaxEvals <= 0 {
		s.MaxEvals = 1000
	}
	auto := s.Starts <= 0
	if auto {
		s.Starts = AutoStarts
	}
	if s.Context == nil {
		s.Context = context.Background()
	}
	x0 := o.Start()
	n := len(x0)
	r := &Result{Status: Failed, Names: o.Names, Start: x0, X: append([]float64(nil), x0...), StdErr: nanSlice(n),
		Loss: math.NaN(), Decrement: math.NaN(), Model: o.Model}
	master, err := newSpace(o.Names, x0, s.Bounds)
	if err != nil {
		r.Err = err
		return r
	}
	for i := range o.Names {
		r.Bounds = append(r.Bounds, master.Bound(i))
	}
	for name := range s.Restraints {
		if !contains(o.Names, name) {
			r.Err = fmt.Errorf("restraint on %s, which is not refined", name)
			return r
		}
		if rs := s.Restraints[name]; !(rs.Sigma > 0) || math.IsInf(rs.Sigma, 0) || math.IsNaN(rs.Centre) || math.IsInf(rs.Centre, 0) {
			r.Err = fmt.Errorf("restraint on %s: want a finite centre and σ > 0", name)
			return r
		}
	}
	f0, _, err := o.Gradient(x0)
	if err == nil && !finite(f0) {
		err = fmt.Errorf("the loss is not finite (%g)", f0)
	}
	if err != nil {
		r.Err = fmt.Errorf("at the starting model: %w", err)
		return r
	}
	if err := predictsPhotons(o); err != nil {
		r.Err = err
		return r
	}
	rn := &runner{o: o, s: &s, master: master, unit: restraintUnit(&o.Loss), result: r}
	if w := innerWeights(o, s.Boxes, innerFraction); w != nil {
		rn.inner = [][]float64{w}
	}
	rng := rand.New(rand.NewSource(s.Seed))
	var best *startResult
	for k := 0; k < s.Starts; k++ {
		start := x0
		if k > 0 {
			start = make([]float64, n)
			for i := range start {
				b := master.Bound(i)
				v := x0[i] + (4*rng.Float64()-2)*master.scale[i]
				lo, hi := b.Lo+1e-3*(b.Hi-b.Lo), b.Hi-1e-3*(b.Hi-b.Lo)
				start[i] = math.Max(lo, math.Min(hi, v))
			}
		}
		sr := rn.runStart(k, start)
		confirmed := false
		if auto && best != nil && best.converged && sr.converged {
			// A second converged start: the same minimum, or a worse
			// one, confirms the best; a better one replaces it and needs
			// confirming in turn.
			confirmed = sr.loss >= best.loss-confirmLoss
		}
		if best == nil || better(sr, best) {
			best = sr
		}
		if sr.interrupted || confirmed {
			break
		}
	}
	rn.finish(best)
	return r
}

// innerFraction is the fraction of the spot boxes, lowest resolution
// first, that the first coarse stage fits. Low-resolution spots move
// least for a given error of the cell, so they keep that stage's loss
// smooth over the widest range of starts. Over 30 starts at the corners
// of ±4 % / ±3° / ±2° (cell and orientation) on the reference's moderate
// and sparse images, one start each, the fits captured 13 and 22 of 30
// without such a stage, and 28 and 27 with 40 % of the boxes (25 and 29
// with 25 %, 25 and 24 with 50 %).
const innerFraction = 0.4

// innerWeights are o's loss weights restricted to the boxes whose
// centres lie at or below the quantile frac of the resolution |q| of all
// the boxes' centres (under o's model); nil for fewer than 12 boxes.
func innerWeights(o *graph.Objective, boxes []spots.Box, frac float64) []float64 {
	if len(boxes) < 12 {
		return nil
	}
	g := geometryOf(o.Model)
	res := make([]float64, len(boxes))
	for k, b := range boxes {
		c := float64(b.Size) / 2
		q := g.scattering(float64(b.F0)+c, float64(b.S0)+c)
		res[k] = math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2])
	}
	sorted := append([]float64(nil), res...)
	sort.Float64s(sorted)
	limit := sorted[min(len(sorted)-1, int(frac*float64(len(sorted))))]
	w := o.Model.Detector.FPixels
	out := make([]float64, w*o.Model.Detector.SPixels)
	for k, b := range boxes {
		if res[k] <= limit {
			b.Pixels(w, func(i int) {
				out[i] = 1
				if o.Loss.Weights != nil {
					out[i] = o.Loss.Weights[i]
				}
			})
		}
	}
	return out
}

// predictsPhotons fails when the starting model puts no photon on the
// fitted pixels: there is nothing to fit then (a fluence of 0, say).
func predictsPhotons(o *graph.Objective) error {
	s, err := graph.New(o.Model)
	if err != nil {
		return err
	}
	img, err := s.Image()
	if err != nil {
		return err
	}
	for i, v := range img {
		if v > 0 && (o.Loss.Weights == nil || o.Loss.Weights[i] != 0) {
			return nil
		}
	}
	return errors.New("the starting model puts no photons on the fitted pixels (is the fluence 0?)")
}

// startResult is the outcome of one start.
type startResult struct {
	x           []float64
	loss        float64
	status      optimize.Status
	err         error // the optimiser's, or the first invalid evaluation's
	interrupted bool
	limit       bool
	converged   bool
	decrement   float64
	hess        *mat.SymDense // at x, when computed
	reason      string
	spots       SpotCheck
}

func better(a, b *startResult) bool {
	if a.converged != b.converged {
		return a.converged
	}
	return a.loss < b.loss
}

// runner carries a fit's state across stages and starts.
type runner struct {
	o      *graph.Objective
	s      *Settings
	master *space
	unit   float64 // restraint weight: 1, or 2σ²_d for squared residuals
	result *Result
	// inner are the loss's weights left on the boxes of the inner half of
	// the spots (by resolution), nil without boxes.
	inner [][]float64
	iters int // of the whole fit
	// The current start's budget spent.
	startIters, startEvals int
}

// runStart runs the stages from start x (master parameters).
func (rn *runner) runStart(k int, x []float64) *startResult {
	o, s := rn.o, rn.s
	rn.startIters, rn.startEvals = 0, 0
	cur, err := o.At(x)
	if err != nil {
		return &startResult{x: x, loss: math.Inf(1), err: err}
	}
	c := cur.Crystal
	nc := s.Coarse
	if nc == 0 {
		nc = CoarseStages(c.Na, c.Nb, c.Nc)
	}
	sr := &startResult{x: x, loss: math.Inf(1)}
	type plan struct {
		level int
		inner []float64
	}
	var plans []plan
	for level := nc; level >= 1; level-- {
		if level == nc {
			for _, w := range rn.inner {
				plans = append(plans, plan{level, w})
			}
		}
		plans = append(plans, plan{level, nil})
	}
	for _, pl := range plans {
		if rn.exhausted() {
			break
		}
		if cur, err = o.At(x); err != nil {
			sr.err = err
			return sr
		}
		f := math.Pow(2, -float64(pl.level))
		var st *stage
		st, err = rn.coarseStage(cur, f, pl.inner)
		if err != nil {
			sr.err = err
			return sr
		}
		res := st.minimise(rn, k, false)
		rn.result.Stages = append(rn.result.Stages, StageReport{Start: k, Name: st.name, Evaluations: res.evals, Iters: res.iters,
			Loss: res.loss, Status: res.statusText()})
		if res.interrupted {
			sr.x, sr.loss, sr.interrupted = st.masterX(res.x, x), math.NaN(), true
			return sr
		}
		x = st.masterX(res.x, x)
	}
	// The full model (unless a coarse stage spent the budget).
	st, err := rn.fullStage(x)
	if err != nil {
		sr.err = err
		return sr
	}
	if rn.exhausted() {
		sr.x, sr.limit = x, true
		sr.loss, _, sr.err = st.value(x)
	} else {
		res := st.minimise(rn, k, true)
		rn.result.Stages = append(rn.result.Stages, StageReport{Start: k, Name: st.name, Evaluations: res.evals, Iters: res.iters,
			Loss: res.loss, Status: res.statusText()})
		sr.x, sr.loss, sr.status, sr.err = st.masterX(res.x, x), res.loss, res.status, res.err
		sr.interrupted = res.interrupted
		sr.limit = res.status == optimize.FunctionEvaluationLimit || res.status == optimize.IterationLimit || rn.exhausted()
	}
	if sr.interrupted || !finite(sr.loss) {
		return sr
	}
	rn.verify(sr)
	if sr.limit {
		// The limit is why, whatever the test found.
		sr.converged = false
		sr.reason = fmt.Sprintf("stopped at its limit after %d evaluations and %d iterations (limits %d and %d)",
			rn.startEvals, rn.startIters, rn.s.MaxEvals, rn.s.MaxIter)
	}
	return sr
}

func (rn *runner) exhausted() bool {
	return rn.startEvals >= rn.s.MaxEvals || rn.startIters >= rn.s.MaxIter
}

// coarseFixed are the parameters coarse stages leave at their start: N,
// which makes the stage coarse, and the distance, which low-resolution
// spots cannot tell from the cell's scale (a cell and a distance both
// larger by the same factor put them in the same places): left free there,
// the two drifted together to their bounds on the sparse reference image,
// from the truth.
var coarseFixed = map[string]bool{"Na": true, "Nb": true, "Nc": true, "distance": true, "close_distance": true}

// coarseStage is the stage that fits the model at x with N scaled by f
// (at least 1 cell) and the fluence raised to keep every reflection's
// integrated intensity. It refines the fit's parameters but N; the
// fluence is refined too (as a nuisance, when no scale is refined).
func (rn *runner) coarseStage(cur *models.Model, f float64, inner []float64) (*stage, error) {
	c := cur.Crystal
	m := cur
	var err error
	vol := 1.0
	for _, p := range []struct {
		name string
		v    float64
	}{{"Na", c.Na}, {"Nb", c.Nb}, {"Nc", c.Nc}} {
		nv := math.Max(1, p.v*f)
		vol *= p.v / nv
		if m, err = m.With(p.name, nv); err != nil {
			return nil, err
		}
	}
	if m, err = m.With("fluence", cur.Beam.Fluence*vol); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range rn.o.Names {
		if !coarseFixed[n] {
			names = append(names, n)
		}
	}
	if !contains(names, "fluence") && !contains(names, "default_F") {
		names = append(names, "fluence")
	}
	mc := m.Crystal
	st := &stage{name: fmt.Sprintf("coarse N=%.3g,%.3g,%.3g", mc.Na, mc.Nb, mc.Nc), names: names,
		fluenceFactor: vol, master: rn.master, masterNames: rn.o.Names, loss: rn.o.Loss}
	if inner != nil {
		st.name += ", inner spots"
		st.loss.Weights = inner
	}
	return st, st.init(m, rn)
}

// fullStage fits the model itself.
func (rn *runner) fullStage(x []float64) (*stage, error) {
	m, err := rn.o.At(x)
	if err != nil {
		return nil, err
	}
	st := &stage{name: "full", names: rn.o.Names, fluenceFactor: 1, master: rn.master, masterNames: rn.o.Names, loss: rn.o.Loss}
	return st, st.init(m, rn)
}

// stage is one minimisation: an objective over some of the fit's
// parameters (and perhaps a nuisance fluence) with its own map.
type stage struct {
	name          string
	names         []string
	obj           *graph.Objective
	sp            *space
	fluenceFactor float64 // the stage model's fluence over the fit's
	master        *space
	masterNames   []string
	restr         []restraintTerm
	loss          graph.Loss
}

type restraintTerm struct {
	i              int
	centre, weight float64 // weight: unit/σ²
}

func (st *stage) init(m *models.Model, rn *runner) error {
	obj, err := graph.NewObjective(m, st.names, st.loss)
	if err != nil {
		return err
	}
	st.obj = obj
	x := obj.Start()
	bounds := map[string]Bound{}
	for i, n := range st.masterNames {
		bounds[n] = st.master.Bound(i)
	}
	if i := indexOf(st.names, "fluence"); i >= 0 {
		if j := indexOf(st.masterNames, "fluence"); j >= 0 {
			b := st.master.Bound(j)
			bounds["fluence"] = Bound{b.Lo * st.fluenceFactor, b.Hi * st.fluenceFactor}
		} else {
			bounds["fluence"] = DefaultBound("fluence", x[i])
		}
	}
	if st.sp, err = newSpace(st.names, x, bounds); err != nil {
		return err
	}
	for name, rs := range rn.s.Restraints {
		if i := indexOf(st.names, name); i >= 0 {
			st.restr = append(st.restr, restraintTerm{i: i, centre: rs.Centre, weight: rn.unit / (rs.Sigma * rs.Sigma)})
		}
	}
	return nil
}

// masterX maps the stage's parameters back onto the fit's: the shared
// ones are copied, N keeps the fit's value and a refined fluence loses
// the stage's factor.
func (st *stage) masterX(xs, prev []float64) []float64 {
	out := append([]float64(nil), prev...)
	for i, n := range st.names {
		if j := indexOf(st.masterNames, n); j >= 0 {
			v := xs[i]
			if n == "fluence" {
				v /= st.fluenceFactor
			}
			out[j] = v
		}
	}
	return out
}

// value is the stage's loss and gradient (by the stage's parameters) at
// x, restraints included.
func (st *stage) value(x []float64) (float64, []float64, error) {
	f, g, err := st.obj.Gradient(x)
	if err != nil {
		return math.NaN(), nil, err
	}
	for _, t := range st.restr {
		d := x[t.i] - t.centre
		f += 0.5 * t.weight * d * d
		g[t.i] += t.weight * d
	}
	return f, g, nil
}

// stageResult is the outcome of one stage's minimisation.
type stageResult struct {
	x            []float64
	loss         float64
	status       optimize.Status
	err          error
	evals, iters int
	interrupted  bool
	stopped      string // why the optimiser stopped, when not its status
}

// statusText is what the stage report says of how the stage ended.
func (r *stageResult) statusText() string {
	if r.stopped != "" {
		return r.stopped
	}
	return r.status.String()
}

var errInterrupted = errors.New("interrupted")

// minimise runs the optimiser on the stage from its start. The final
// stage stops when the loss has fallen by less than 1e-6 likelihood
// units over three iterations; coarse stages, which only need to reach
// the right valley, at a relative change of 1e-7.
func (st *stage) minimise(rn *runner, start int, final bool) stageResult {
	n := len(st.names)
	res := stageResult{loss: math.Inf(1), x: st.obj.Start()}
	var lastZ, lastG []float64
	var lastF float64
	var badErr error
	bestF := math.Inf(1)
	bestX := res.x
	eval := func(z []float64) (float64, []float64) {
		if lastZ != nil && equal(z, lastZ) {
			return lastF, lastG
		}
		rn.result.Evaluations++
		rn.startEvals++
		res.evals++
		x := st.sp.X(z)
		f, g, err := st.value(x)
		if err == nil && !finite(f) {
			err = fmt.Errorf("the loss is %g at %s", f, describe(st.names, x))
		}
		if err != nil {
			if badErr == nil {
				badErr = err
			}
			f, g = math.Inf(1), make([]float64, n)
		} else {
			j := st.sp.Jac(z)
			for i := range g {
				g[i] *= j[i]
			}
			if f < bestF {
				bestF, bestX = f, x
			}
		}
		lastZ, lastF, lastG = append(lastZ[:0], z...), f, g
		return f, g
	}
	p := optimize.Problem{
		Func: func(z []float64) float64 { f, _ := eval(z); return f },
		Grad: func(dst, z []float64) { _, g := eval(z); copy(dst, g) },
	}
	conv := &optimize.FunctionConverge{Relative: 1e-7, Iterations: 3}
	if final {
		conv = &optimize.FunctionConverge{Absolute: 1e-6 * rn.lossUnit(), Iterations: 3}
	}
	rec := &recorder{ctx: rn.s.Context, stage: st, rn: rn, start: start, res: &res}
	settings := &optimize.Settings{
		MajorIterations: max(1, rn.s.MaxIter-rn.startIters),
		FuncEvaluations: max(1, rn.s.MaxEvals-rn.startEvals),
		Recorder:        rec,
		Converger:       conv,
	}
	var method optimize.Method
	switch rn.s.Method {
	case LBFGS:
		// A short memory: curvature pairs gathered while the predicted
		// spots are still far from the observed ones mislead the later,
		// near-quadratic steps.
		method = &optimize.LBFGS{Linesearcher: &optimize.MoreThuente{}, Store: 5}
	case GradientDescent:
		method = &optimize.GradientDescent{}
	default:
		method = &optimize.BFGS{}
	}
	out, err := optimize.Minimize(p, make([]float64, n), settings, method)
	res.x, res.loss = bestX, bestF
	if out != nil {
		res.status = out.Status
		if finite(out.F) && out.F <= bestF {
			res.x, res.loss = st.sp.X(out.X), out.F
		}
	}
	switch {
	case errors.Is(err, errInterrupted):
		res.interrupted = true
	case errors.Is(err, optimize.ErrLinesearcherFailure):
		// At the resolution of the loss no step lowers it: the
		// convergence test decides.
		res.stopped = "no step lowers the loss"
	case err != nil && badErr == nil:
		res.err = err
	}
	if badErr != nil && !finite(res.loss) {
		res.err = badErr
	}
	return res
}

// recorder keeps the major iterations, reports them and stops the
// optimiser when the context is done.
type recorder struct {
	ctx   context.Context
	stage *stage
	rn    *runner
	start int
	res   *stageResult
}

func (rc *recorder) Init() error { return nil }

func (rc *recorder) Record(loc *optimize.Location, op optimize.Operation, st *optimize.Stats) error {
	if rc.ctx.Err() != nil {
		return errInterrupted
	}
	if op != optimize.MajorIteration {
		return nil
	}
	rc.rn.iters++
	rc.rn.startIters++
	rc.res.iters++
	xs := rc.stage.sp.X(loc.X)
	it := Iteration{Start: rc.start, Stage: rc.stage.name, Iter: rc.rn.iters, Evals: rc.rn.result.Evaluations, Loss: loc.F,
		GradNorm: norm(loc.Gradient), X: rc.stage.masterX(xs, rc.rn.master.x0)}
	// Parameters the stage does not refine: show the fit's start.
	rc.rn.result.History = append(rc.rn.result.History, it)
	if rc.rn.s.Progress != nil {
		rc.rn.s.Progress(it)
	}
	return nil
}

// lossUnit is the size of one likelihood unit in the loss: 1 for the
// likelihoods, 2σ² for squared residuals (σ² = restraintUnit/2: the
// mean variance of the fitted pixels).
func (rn *runner) lossUnit() float64 { return rn.unit }

// restraintUnit is 1 for the likelihoods and, for squared residuals,
// 2σ²_d with σ²_d the mean over the fitted pixels of the observed counts
// (their Poisson variance) plus the read-out variance, at least 1e-12.
func restraintUnit(l *graph.Loss) float64 {
	if l.Kind != graph.LossSSE {
		return 1
	}
	var sum, cnt float64
	for i, v := range l.Observed {
		w := 1.0
		if l.Weights != nil {
			w = l.Weights[i]
		}
		if w != 0 {
			sum += math.Max(v, 0) + l.ReadNoise*l.ReadNoise
			cnt++
		}
	}
	if cnt == 0 {
		return 1
	}
	return 2 * math.Max(sum/cnt, 1e-12)
}

// verify applies the convergence test at sr.x: the Hessian and the
// Newton decrement, with up to three Newton steps when the decrement is
// too large.
func (rn *runner) verify(sr *startResult) {
	st, err := rn.fullStage(sr.x)
	if err != nil {
		sr.reason = err.Error()
		return
	}
	x := sr.x
	if why := atBound(rn.master, x); why != "" {
		// The minimum is the bound's: no Newton test, no errors.
		sr.reason = why
		return
	}
	for step := 0; ; step++ {
		f, g, err := st.value(x)
		rn.result.Evaluations++
		if err != nil || !finite(f) {
			sr.reason = fmt.Sprintf("the loss at the end is not finite (%v)", err)
			return
		}
		// In the rescaled coordinates y = (x − x0)/scale, which keep
		// Å, degrees, millimetres and photons/m² alike.
		h, err := st.hessian(rn, x)
		if err != nil {
			sr.reason = err.Error()
			return
		}
		sc := st.sp.scale
		gy := make([]float64, len(g))
		for i := range g {
			gy[i] = g[i] * sc[i]
		}
		sr.hess = h
		if os.Getenv("DEBUGH") != "" {
			for i := range st.names {
				fmt.Fprintf(os.Stderr, "%s diag %g g %g row %v\n", st.names[i], h.At(i, i), gy[i], mat.Row(nil, i, h))
			}
		}
		var chol mat.Cholesky
		if !chol.Factorize(h) {
			sr.reason = "not at a minimum: the Hessian is not positive definite (" + weakest(h, st.names) + ")"
			return
		}
		var dy mat.VecDense
		if err := chol.SolveVecTo(&dy, mat.NewVecDense(len(gy), gy)); err != nil {
			sr.reason = "the Hessian is singular"
			return
		}
		dx := mat.NewVecDense(len(g), nil)
		for i := range g {
			dx.SetVec(i, dy.AtVec(i)*sc[i])
		}
		dec := 0.5 * mat.Dot(&dy, mat.NewVecDense(len(gy), gy)) / rn.lossUnit()
		sr.decrement = dec
		sr.x, sr.loss = x, f
		if dec <= ConvergedDecrease {
			switch {
			case sr.limit:
			case atBound(rn.master, x) != "": // after a Newton step
				sr.reason = atBound(rn.master, x)
			default:
				sr.converged = true
			}
			if len(rn.s.Boxes) > 0 {
				sr.spots, err = rn.checkSpots(x)
				if err != nil {
					sr.converged, sr.reason = false, err.Error()
				} else if f := sr.spots.Fraction(); f > MaxUnexplained && sr.converged {
					sr.converged = false
					sr.reason = fmt.Sprintf("the model leaves %d of %d observed spots unexplained (a wrong minimum)", sr.spots.Unexplained, sr.spots.Boxes)
				}
			}
			return
		}
		if step == 3 {
			sr.reason = fmt.Sprintf("the loss still falls: the Newton step predicts %.3g likelihood units more", dec)
			return
		}
		// A Newton step, halved until the loss falls and the point is
		// inside the bounds.
		moved := false
		for t := 1.0; t >= 1.0/16; t /= 2 {
			xn := make([]float64, len(x))
			inside := true
			for i := range xn {
				xn[i] = x[i] - t*dx.AtVec(i)
				if b := rn.master.Bound(i); !(xn[i] > b.Lo && xn[i] < b.Hi) {
					inside = false
				}
			}
			if !inside {
				continue
			}
			fn, _, err := st.value(xn)
			rn.result.Evaluations++
			if err == nil && finite(fn) && fn < f {
				x, moved = xn, true
				break
			}
		}
		if !moved {
			sr.reason = fmt.Sprintf("no Newton step lowers the loss, which the step predicts would fall by %.3g likelihood units", dec)
			return
		}
	}
}

// checkSpots is the spot check of the model at x.
func (rn *runner) checkSpots(x []float64) (SpotCheck, error) {
	m, err := rn.o.At(x)
	if err != nil {
		return SpotCheck{}, err
	}
	s, err := graph.New(m)
	if err != nil {
		return SpotCheck{}, err
	}
	img, err := s.Image()
	if err != nil {
		return SpotCheck{}, err
	}
	return checkSpots(&rn.o.Loss, img, m.Detector.FPixels, rn.s.Boxes), nil
}

// atBound names a parameter within 1e-3 of its range from a bound ("" for
// none): the minimum found there is the bound's, not the data's.
func atBound(sp *space, x []float64) string {
	for i, v := range x {
		b := sp.Bound(i)
		if sp.unbounded[i] {
			continue
		}
		lo, hi, u := b.Lo, b.Hi, v
		if sp.log[i] {
			lo, hi, u = math.Log(lo), math.Log(hi), math.Log(v)
		}
		if d := 1e-3 * (hi - lo); u < lo+d || u > hi-d {
			return fmt.Sprintf("%s = %.8g is at its bound %g:%g", sp.names[i], v, b.Lo, b.Hi)
		}
	}
	return ""
}

// hessianStep is the central-difference step of the Hessian, in units of
// each parameter's scale. The gradient of a loss of ~10⁵ photons carries
// rounding of a few 1e-9 of itself, which steps of 1e-3 turned into
// Hessian errors of ~0.5 (scaled units): enough to make a valley of
// curvature 0.1 (a cell's scale against the distance, on 120,000 photons)
// look indefinite. At 1e-2 the spots move by ~0.01 pixel, where the loss
// is still quadratic to a part in 10⁴.
var hessianStep = 1e-2

// hessian is the loss's Hessian at x by the stage's parameters in units of
// their scales (y = (x − x0)/scale): central differences of the analytic
// gradient, steps hessianStep of each scale.
func (st *stage) hessian(rn *runner, x []float64) (*mat.SymDense, error) {
	n := len(x)
	cols := make([][]float64, n)
	for j := 0; j < n; j++ {
		step := hessianStep * st.sp.scale[j]
		xp := append([]float64(nil), x...)
		xm := append([]float64(nil), x...)
		xp[j] += step
		xm[j] -= step
		_, gp, err1 := st.value(xp)
		_, gm, err2 := st.value(xm)
		rn.result.Evaluations += 2
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("the Hessian: %w", err)
		}
		cols[j] = make([]float64, n)
		for i := range cols[j] {
			cols[j][i] = (gp[i] - gm[i]) / (2 * step) * st.sp.scale[i] * st.sp.scale[j]
		}
	}
	h := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			h.SetSym(i, j, 0.5*(cols[j][i]+cols[i][j]))
		}
	}
	return h, nil
}

// weakest names the parameter along the Hessian's least eigenvector.
func weakest(h *mat.SymDense, names []string) string {
	var eig mat.EigenSym
	if !eig.Factorize(h, true) {
		return "no eigen-decomposition"
	}
	var v mat.Dense
	eig.VectorsTo(&v)
	vals := eig.Values(nil)
	k := 0
	big := 0.0
	for i := range names {
		if a := math.Abs(v.At(i, 0)); a > big {
			big, k = a, i
		}
	}
	return fmt.Sprintf("least eigenvalue %.3g, mostly along %s", vals[0], names[k])
}

// finish fills the result from the best start.
func (rn *runner) finish(sr *startResult) {
	r := rn.result
	r.X, r.Loss, r.Decrement, r.Spots = sr.x, sr.loss, sr.decrement, sr.spots
	r.Iterations = rn.iters
	if m, err := rn.o.At(sr.x); err == nil {
		r.Model = m
	}
	switch {
	case sr.interrupted:
		r.Status, r.Err = Interrupted, errInterrupted
		if f, err := rn.o.Value(sr.x); err == nil {
			r.Loss = f
		}
		return
	case sr.err != nil && !finite(sr.loss):
		r.Status, r.Err = Failed, sr.err
		return
	case !sr.converged:
		r.Status = NotConverged
		r.Reason = sr.reason
		if r.Reason == "" {
			r.Reason = fmt.Sprintf("the optimiser stopped (%s)", sr.status)
			if sr.err != nil {
				r.Reason += ": " + sr.err.Error()
			}
		}
		r.Err = fmt.Errorf("%w: %s", ErrNotConverged, r.Reason)
	default:
		r.Status = Converged
	}
	if sr.hess != nil {
		r.StdErr = rn.stdErrs(sr.x, sr.hess)
	}
}

// stdErrs is the covariance's diagonal at x (H the loss's Hessian there,
// in scaled coordinates).
func (rn *runner) stdErrs(x []float64, h *mat.SymDense) []float64 {
	sc := rn.master.scale
	out := rn.stdErrsScaled(x, h)
	for i := range out {
		out[i] *= sc[i]
	}
	return out
}

// stdErrsScaled is stdErrs in scaled coordinates.
func (rn *runner) stdErrsScaled(x []float64, h *mat.SymDense) []float64 {
	n := len(x)
	out := nanSlice(n)
	var chol mat.Cholesky
	if !chol.Factorize(h) {
		return out
	}
	var cov mat.SymDense
	if err := chol.InverseTo(&cov); err != nil {
		return out
	}
	if rn.o.Loss.Kind == graph.LossSSE {
		meat, err := rn.sseMeat(x)
		if err != nil {
			return out
		}
		var t, c mat.Dense
		t.Mul(&cov, meat)
		c.Mul(&t, &cov)
		for i := range out {
			if v := c.At(i, i); v >= 0 {
				out[i] = math.Sqrt(v)
			}
		}
		return out
	}
	for i := range out {
		if v := cov.At(i, i); v >= 0 {
			out[i] = math.Sqrt(v)
		}
	}
	return out
}

// sseMeat is the variance of the squared residuals' gradient by the
// scaled coordinates y: Σ_i 4w_i²·φV_i·∇I_i∇I_iᵀ over the fitted pixels,
// with each pixel's variance taken as φ·V_i (V_i = μ_i + σ_read², φ the
// dispersion the residuals give; the Jacobian by central differences of
// forward images, steps 1e-3 of each scale), plus the restraints'
// (unit/σ)² on the diagonal.
func (rn *runner) sseMeat(x []float64) (*mat.Dense, error) {
	o, l := rn.o, &rn.o.Loss
	n := len(x)
	img := func(x []float64) ([]float64, error) {
		m, err := o.At(x)
		if err != nil {
			return nil, err
		}
		s, err := graph.New(m)
		if err != nil {
			return nil, err
		}
		return s.Image()
	}
	at, err := img(x)
	if err != nil {
		return nil, err
	}
	// The fitted pixels, their weights and model counts μ (with the
	// background).
	var pix []int
	var wts, mu []float64
	for i := range at {
		if l.Weights == nil || l.Weights[i] != 0 {
			w, m := 1.0, at[i]
			if l.Weights != nil {
				w = l.Weights[i]
			}
			if l.Background != nil {
				m += l.Background[i]
			}
			pix, wts, mu = append(pix, i), append(wts, w), append(mu, m)
		}
	}
	// The dispersion φ = Σ w·r²/Σ w·V, V = μ + σ_read²: the pixels'
	// variances are taken as φ·V (quasi-Poisson), which the squared
	// residuals estimate with far less noise than each r² alone.
	var rss, vs float64
	for k, i := range pix {
		r := mu[k] - l.Observed[i]
		rss += wts[k] * r * r
		vs += wts[k] * (mu[k] + l.ReadNoise*l.ReadNoise)
	}
	phi := rss / vs
	jac := mat.NewDense(len(pix), n, nil)
	for j := 0; j < n; j++ {
		step := 1e-3 * rn.master.scale[j]
		xp := append([]float64(nil), x...)
		xm := append([]float64(nil), x...)
		xp[j] += step
		xm[j] -= step
		ip, err1 := img(xp)
		im, err2 := img(xm)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		for k, i := range pix {
			sd := math.Sqrt(phi * (mu[k] + l.ReadNoise*l.ReadNoise))
			jac.Set(k, j, 2*wts[k]*sd*(ip[i]-im[i])/2e-3) // by y_j: (step = 1e-3·scale)
		}
	}
	var meat mat.Dense
	meat.Mul(jac.T(), jac)
	for name, rs := range rn.s.Restraints {
		if i := indexOf(o.Names, name); i >= 0 {
			sc := rn.master.scale[i]
			meat.Set(i, i, meat.At(i, i)+rn.unit*rn.unit*sc*sc/(rs.Sigma*rs.Sigma))
		}
	}
	return &meat, nil
}

// describe lists names=values.
func describe(names []string, x []float64) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%.8g", n, x[i])
	}
	return b.String()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func contains(s []string, v string) bool { return indexOf(s, v) >= 0 }

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
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
