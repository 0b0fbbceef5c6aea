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
	// Bounds override DefaultBound by parameter name; each must pass
	// CheckBound.
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
	// spots) of Run's image: a fit is converged only if its model explains
	// all but MaxUnexplained of those with a significant spot (SpotCheck).
	// RunProblem takes them from its images.
	Boxes []spots.Box
	// Comm spreads the images over processes (nil: one process).
	Comm Comm
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
	X           []float64 // the fit's parameters (Result.Names order), in their units
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
	// Names are the fit's parameters (Problem.Names): the shared ones,
	// then each image's own; Start, X, StdErr and Bounds follow them.
	Names    []string
	Start, X []float64
	StdErr   []float64 // NaN where the Hessian gives none
	Bounds   []Bound
	History  []Iteration
	Stages   []StageReport
	// Spots is the spot check at X, over all the images' boxes.
	Spots SpotCheck
	// Model is the (first) image's model at X, Models every image's (the
	// start's models when no fit ran).
	Model  *models.Model
	Models []*models.Model
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

// Run minimises o's loss (plus restraints) over o.Names from o.Start():
// RunProblem with one image, whose spot boxes are s.Boxes.
func Run(o *graph.Objective, s Settings) *Result {
	return RunProblem(&Problem{Shared: o.Names, Images: []Image{{Objective: o, Boxes: s.Boxes}}}, s)
}

// RunProblem minimises the problem's loss (plus restraints) over its
// parameters from their start.
func RunProblem(p *Problem, s Settings) *Result {
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
	if s.Comm == nil {
		s.Comm = single{}
	}
	r := &Result{Status: Failed, Loss: math.NaN(), Decrement: math.NaN()}
	if err := p.check(); err != nil {
		r.Err = err
		return r
	}
	objs := objectives(p)
	x0 := p.Start()
	n := len(x0)
	base := p.base()
	r.Names, r.Start, r.X, r.StdErr = p.Names(), x0, append([]float64(nil), x0...), nanSlice(n)
	for _, o := range objs {
		r.Models = append(r.Models, o.Model)
	}
	r.Model = r.Models[0]
	for _, name := range append(append([]string{}, p.Shared...), p.PerImage...) {
		if b, ok := s.Bounds[name]; ok {
			if err := CheckBound(r.Model, name, b); err != nil {
				r.Err = fmt.Errorf("bound of %s: %g:%g: %w", name, b.Lo, b.Hi, err)
				return r
			}
		}
	}
	master, err := newSpace(r.Names, base, x0, resolveBounds(base, x0, s.Bounds))
	if err != nil {
		r.Err = err
		return r
	}
	r.Bounds = master.bounds
	for name, rs := range s.Restraints {
		if !contains(base, name) {
			r.Err = fmt.Errorf("restraint on %s, which is not refined", name)
			return r
		}
		if !(rs.Sigma > 0) || math.IsInf(rs.Sigma, 0) || math.IsNaN(rs.Centre) || math.IsInf(rs.Centre, 0) {
			r.Err = fmt.Errorf("restraint on %s: want a finite centre and σ > 0", name)
			return r
		}
	}
	all := newSet(p.Shared, p.PerImage, objs, s.Comm)
	if _, _, err := all.eval(x0); err != nil {
		r.Err = fmt.Errorf("at the starting model: %w", err)
		return r
	}
	if err := predictsPhotons(objs); err != nil {
		r.Err = err
		return r
	}
	var losses []*graph.Loss
	boxes := make([][]spots.Box, len(p.Images))
	for k, im := range p.Images {
		losses = append(losses, &im.Objective.Loss)
		boxes[k] = im.Boxes
	}
	rn := &runner{p: p, all: all, s: &s, master: master, unit: restraintUnit(losses), result: r, boxes: boxes,
		inner: innerWeights(objs, boxes)}
	rng := rand.New(rand.NewSource(s.Seed))
	var best *startResult
	for k := 0; k < s.Starts; k++ {
		start := x0
		if k > 0 {
			start = make([]float64, n)
			for i := range start {
				b := master.Bound(i)
				v := x0[i] + (4*rng.Float64()-2)*master.scale[i]
				if !master.unbounded[i] {
					lo, hi := b.Lo+1e-3*(b.Hi-b.Lo), b.Hi-1e-3*(b.Hi-b.Lo)
					v = math.Max(lo, math.Min(hi, v))
				}
				start[i] = v
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
		if sr.interrupted && best != sr {
			// Stopped in a later start (confirming or bettering the
			// best): the fit is interrupted, with the best point so far,
			// not converged by a start whose confirmation never ended.
			b := *best
			b.interrupted = true
			best = &b
		}
		if sr.interrupted || confirmed {
			break
		}
	}
	rn.finish(best)
	return r
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
	hess        *mat.SymDense // at x, when computed (scaled coordinates)
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
	p      *Problem
	all    *set // the problem's images at the fit's vectors
	s      *Settings
	master *space
	unit   float64 // restraint weight: 1, or 2σ²_d for squared residuals
	result *Result
	boxes  [][]spots.Box
	// inner are each image's loss weights left on the boxes of the
	// lowest-resolution spots, nil without (enough) boxes.
	inner [][]float64
	iters int // of the whole fit
	// The current start's budget spent.
	startIters, startEvals int
}

// models returns the images' models at the fit's vector x.
func (rn *runner) models(x []float64) ([]*models.Model, error) {
	out := make([]*models.Model, len(rn.all.objs))
	for k, o := range rn.all.objs {
		m, err := o.At(rn.all.local(x, k))
		if err != nil {
			return nil, imageErr(len(out), k, err)
		}
		out[k] = m
	}
	return out, nil
}

// runStart runs the stages from start x (the fit's vector).
func (rn *runner) runStart(k int, x []float64) *startResult {
	s := rn.s
	rn.startIters, rn.startEvals = 0, 0
	sr := &startResult{x: x, loss: math.Inf(1)}
	cur, err := rn.models(x)
	if err != nil {
		sr.err = err
		return sr
	}
	c := cur[0].Crystal
	nc := s.Coarse
	if nc == 0 {
		nc = CoarseStages(c.Na, c.Nb, c.Nc)
	}
	type plan struct {
		level int
		inner bool
	}
	var plans []plan
	for level := nc; level >= 1; level-- {
		if level == nc && rn.inner != nil {
			plans = append(plans, plan{level, true})
		}
		plans = append(plans, plan{level, false})
	}
	for _, pl := range plans {
		if rn.exhausted() {
			break
		}
		if cur, err = rn.models(x); err != nil {
			sr.err = err
			return sr
		}
		st, err := rn.coarseStage(cur, math.Pow(2, -float64(pl.level)), pl.inner)
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
	before := rn.result.Evaluations
	rn.verify(sr)
	if sr.limit {
		// The limit is why, whatever the test found. The test's own
		// evaluations (its Hessian, its Newton steps) come after the
		// optimiser's and are not bound by the limit: say so, or the
		// count the fit reports would contradict it.
		which := ""
		if rn.s.Starts > 1 {
			which = fmt.Sprintf(" of start %d", k+1)
		}
		sr.converged = false
		sr.reason = fmt.Sprintf("the optimiser stopped at its limit after %d evaluations and %d iterations%s (limits %d and %d); "+
			"the convergence test then took %d more evaluations, which the limit does not bound",
			rn.startEvals, rn.startIters, which, rn.s.MaxEvals, rn.s.MaxIter, rn.result.Evaluations-before)
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

// coarseStage is the stage that fits the models cur with N scaled by f
// (at least 1 cell) and the fluence raised to keep every reflection's
// integrated intensity, on each image's inner boxes when inner is set. It
// refines the fit's parameters but those of coarseFixed, and each image's
// fluence as its own (a nuisance, whatever the fit refines).
func (rn *runner) coarseStage(cur []*models.Model, f float64, inner bool) (*stage, error) {
	st := &stage{rn: rn, fluenceFactor: make([]float64, len(cur))}
	for _, n := range rn.p.Shared {
		if !coarseFixed[n] && n != "fluence" {
			st.shared = append(st.shared, n)
		}
	}
	for _, n := range rn.p.PerImage {
		if !coarseFixed[n] && n != "fluence" {
			st.per = append(st.per, n)
		}
	}
	st.per = append(st.per, "fluence")
	objs := make([]*graph.Objective, len(cur))
	for k, m0 := range cur {
		c := m0.Crystal
		m := m0
		var err error
		vol := 1.0
		for _, p := range []struct {
			name string
			v    float64
		}{{"Na", c.Na}, {"Nb", c.Nb}, {"Nc", c.Nc}} {
			nv := math.Max(1, p.v*f)
			vol *= p.v / nv
			if m, err = m.With(p.name, nv); err != nil {
				return nil, imageErr(len(cur), k, err)
			}
		}
		if m, err = m.With("fluence", m0.Beam.Fluence*vol); err != nil {
			return nil, imageErr(len(cur), k, err)
		}
		st.fluenceFactor[k] = vol
		loss := rn.all.objs[k].Loss
		if inner {
			loss.Weights = rn.inner[k]
		}
		if objs[k], err = graph.NewObjective(m, append(append([]string{}, st.shared...), st.per...), loss); err != nil {
			return nil, err
		}
		if k == 0 {
			mc := m.Crystal
			st.name = fmt.Sprintf("coarse N=%.3g,%.3g,%.3g", mc.Na, mc.Nb, mc.Nc)
			if inner {
				st.name += ", inner spots"
			}
		}
	}
	return st, st.init(objs)
}

// fullStage fits the models themselves, from the fit's vector x.
func (rn *runner) fullStage(x []float64) (*stage, error) {
	cur, err := rn.models(x)
	if err != nil {
		return nil, err
	}
	st := &stage{rn: rn, name: "full", shared: rn.p.Shared, per: rn.p.PerImage, fluenceFactor: make([]float64, len(cur))}
	objs := make([]*graph.Objective, len(cur))
	for k, m := range cur {
		st.fluenceFactor[k] = 1
		if objs[k], err = graph.NewObjective(m, rn.all.objs[k].Names, rn.all.objs[k].Loss); err != nil {
			return nil, err
		}
	}
	return st, st.init(objs)
}

// stage is one minimisation: a set of the images over some of the fit's
// parameters (and perhaps a nuisance fluence per image) with its own map.
type stage struct {
	rn            *runner
	name          string
	shared, per   []string
	set           *set
	sp            *space
	fluenceFactor []float64 // per image, the stage model's fluence over the fit's
	toMaster      []int     // the fit's index of each stage parameter, −1 for none
	restr         []restraintTerm
}

type restraintTerm struct {
	i              int
	centre, weight float64 // weight: unit/σ²
}

// init builds the stage's set, map and restraints from the images'
// objectives over the stage's parameters.
func (st *stage) init(objs []*graph.Objective) error {
	rn := st.rn
	st.set = newSet(st.shared, st.per, objs, rn.s.Comm)
	names, base := st.set.names()
	x := st.set.start()
	mns, mnp := len(rn.p.Shared), len(rn.p.PerImage)
	bounds := make([]Bound, len(names))
	st.toMaster = make([]int, len(names))
	for i := range names {
		k, _ := st.set.image(i)
		mi := -1
		if k < 0 {
			mi = indexOf(rn.p.Shared, base[i])
		} else if at := indexOf(rn.p.PerImage, base[i]); at >= 0 {
			mi = mns + k*mnp + at
		}
		st.toMaster[i] = mi
		switch {
		case mi >= 0 && base[i] == "fluence":
			b := rn.master.Bound(mi)
			f := st.fluenceFactor[max(k, 0)]
			bounds[i] = Bound{b.Lo * f, b.Hi * f}
		case mi >= 0:
			bounds[i] = rn.master.Bound(mi)
		default:
			bounds[i] = DefaultBound(base[i], x[i])
		}
	}
	var err error
	if st.sp, err = newSpace(names, base, x, bounds); err != nil {
		return err
	}
	for i := range names {
		if rs, ok := rn.s.Restraints[base[i]]; ok {
			st.restr = append(st.restr, restraintTerm{i: i, centre: rs.Centre, weight: rn.unit / (rs.Sigma * rs.Sigma)})
		}
	}
	return nil
}

// masterX maps the stage's vector xs onto the fit's, from the fit's prev:
// shared values and each image's are copied, parameters the stage holds
// keep prev's values, and a fluence loses the stage's factor (the fit's
// shared fluence becomes the geometric mean of the images').
func (st *stage) masterX(xs, prev []float64) []float64 {
	out := append([]float64(nil), prev...)
	_, base := st.set.names()
	var shared []float64
	at := indexOf(st.rn.p.Shared, "fluence")
	for i, mi := range st.toMaster {
		k, _ := st.set.image(i)
		if mi >= 0 {
			v := xs[i]
			if base[i] == "fluence" {
				v /= st.fluenceFactor[max(k, 0)]
			}
			out[mi] = v
			continue
		}
		// The coarse stages' own fluence per image, when the fit shares one.
		if base[i] == "fluence" && at >= 0 {
			shared = append(shared, xs[i]/st.fluenceFactor[k])
		}
	}
	if len(shared) > 0 {
		var l float64
		for _, v := range shared {
			l += math.Log(v)
		}
		out[at] = math.Exp(l / float64(len(shared)))
	}
	return out
}

// value is the stage's loss and gradient (by the stage's parameters) at
// x, restraints included.
func (st *stage) value(x []float64) (float64, []float64, error) {
	f, g, err := st.set.eval(x)
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
	n := st.set.n()
	res := stageResult{loss: math.Inf(1), x: st.set.start()}
	var lastZ, lastG []float64
	var lastF float64
	var badErr error
	bestF := math.Inf(1)
	bestX := res.x
	names, _ := st.set.names()
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
			err = fmt.Errorf("the loss is %g at %s", f, describe(names, x))
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
		conv = &optimize.FunctionConverge{Absolute: 1e-6 * rn.unit, Iterations: 3}
	}
	rec := &recorder{stage: st, rn: rn, start: start, res: &res}
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
// optimiser when the fit's context is done (on every rank at once: the
// ranks agree on it at each evaluation).
type recorder struct {
	stage *stage
	rn    *runner
	start int
	res   *stageResult
}

func (rc *recorder) Init() error { return nil }

func (rc *recorder) Record(loc *optimize.Location, op optimize.Operation, st *optimize.Stats) error {
	if rc.rn.interrupted() {
		return errInterrupted
	}
	if op != optimize.MajorIteration {
		return nil
	}
	rc.rn.iters++
	rc.rn.startIters++
	rc.res.iters++
	xs := rc.stage.sp.X(loc.X)
	// Parameters the stage does not refine: show the fit's start.
	it := Iteration{Start: rc.start, Stage: rc.stage.name, Iter: rc.rn.iters, Evals: rc.rn.result.Evaluations, Loss: loc.F,
		GradNorm: norm(loc.Gradient), X: rc.stage.masterX(xs, rc.rn.master.x0)}
	rc.rn.result.History = append(rc.rn.result.History, it)
	if rc.rn.s.Progress != nil {
		rc.rn.s.Progress(it)
	}
	return nil
}

// interrupted reports whether any rank's context is done (all ranks
// agree: they gather the flag).
func (rn *runner) interrupted() bool {
	flag := 0.0
	if rn.s.Context.Err() != nil {
		flag = 1
	}
	if rn.s.Comm.Size() == 1 {
		return flag != 0
	}
	all, err := rn.s.Comm.Allgather([]float64{flag})
	if err != nil {
		return true
	}
	for _, v := range all {
		if v != 0 {
			return true
		}
	}
	return false
}

// restraintUnit is 1 for the likelihoods and, for squared residuals,
// 2σ²_d with σ²_d the mean over the fitted pixels of all the images of
// the observed counts (their Poisson variance) plus the read-out
// variance, at least 1e-12.
func restraintUnit(losses []*graph.Loss) float64 {
	if losses[0].Kind != graph.LossSSE {
		return 1
	}
	var sum, cnt float64
	for _, l := range losses {
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
	}
	if cnt == 0 {
		return 1
	}
	return 2 * math.Max(sum/cnt, 1e-12)
}
