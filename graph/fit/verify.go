package fit

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gobragg/gobragg/graph"
	"gonum.org/v1/gonum/mat"
)

// verify applies the convergence test at sr.x: the Hessian and the
// Newton decrement, with up to three Newton steps when the decrement is
// too large, then the spot check.
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
	names, _ := st.set.names()
	// The test can take tens of evaluations (two per parameter for the
	// Hessian, then Newton steps): it stops, as the optimiser does, when
	// the fit's context is done, with the point reached so far.
	stop := func() bool {
		if rn.interrupted() {
			sr.x, sr.interrupted = x, true
		}
		return sr.interrupted
	}
	for step := 0; ; step++ {
		if stop() {
			return
		}
		f, g, err := st.value(x)
		rn.result.Evaluations++
		if err != nil || !finite(f) {
			sr.reason = fmt.Sprintf("the loss at the end is not finite (%v)", err)
			return
		}
		// In the rescaled coordinates y = (x − x0)/scale, which keep
		// Å, degrees, millimetres and photons/m² alike.
		h, err := st.hessian(x)
		if errors.Is(err, errInterrupted) {
			sr.x, sr.interrupted = x, true
			return
		}
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
		var chol mat.Cholesky
		if !chol.Factorize(h) {
			sr.reason = "not at a minimum: the Hessian is not positive definite (" + weakest(h, names) + ")"
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
		dec := 0.5 * mat.Dot(&dy, mat.NewVecDense(len(gy), gy)) / rn.unit
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
			sr.spots, err = rn.checkSpots(x)
			if err != nil {
				sr.converged, sr.reason = false, err.Error()
			} else if f := sr.spots.Fraction(); f > MaxUnexplained && sr.converged {
				sr.converged = false
				sr.reason = fmt.Sprintf("the model leaves %d of %d observed spots unexplained (a wrong minimum)", sr.spots.Unexplained, sr.spots.Boxes)
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
			if stop() {
				return
			}
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

// checkSpots is the spot check of the models at x, over every image's
// boxes (each image judged on the rank that owns it).
func (rn *runner) checkSpots(x []float64) (SpotCheck, error) {
	K := len(rn.all.objs)
	blocks, errs, err := gatherImages(rn.s.Comm, K, 2, func(k int) ([]float64, error) {
		if len(rn.boxes[k]) == 0 {
			return []float64{0, 0}, nil
		}
		m, err := rn.all.objs[k].At(rn.all.local(x, k))
		if err != nil {
			return nil, err
		}
		s, err := graph.New(m)
		if err != nil {
			return nil, err
		}
		img, err := s.Image()
		if err != nil {
			return nil, err
		}
		c := checkSpots(&rn.all.objs[k].Loss, img, m.Detector.FPixels, rn.boxes[k])
		return []float64{float64(c.Boxes), float64(c.Unexplained)}, nil
	})
	if err != nil {
		return SpotCheck{}, err
	}
	var c SpotCheck
	for k, b := range blocks {
		if math.IsNaN(b[0]) {
			return SpotCheck{}, fmt.Errorf("the spot check: %w", blockErr(K, k, errs))
		}
		c.Boxes += int(b[0])
		c.Unexplained += int(b[1])
	}
	return c, nil
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
// gradient, steps hessianStep of each scale. A shared parameter's column
// takes two evaluations of every image; an image's own parameter only
// touches that image's loss, so its column takes two evaluations of that
// image alone (all of them at once, each on the rank that owns it). It
// returns errInterrupted when the fit's context is done, checked before
// each shared column and before the images' own.
func (st *stage) hessian(x []float64) (*mat.SymDense, error) {
	s := st.set
	n := s.n()
	ns, np, K := len(s.shared), len(s.per), len(s.objs)
	sc := st.sp.scale
	cols := make([][]float64, n)
	for j := 0; j < ns; j++ {
		if st.rn.interrupted() {
			return nil, errInterrupted
		}
		step := hessianStep * sc[j]
		xp := append([]float64(nil), x...)
		xm := append([]float64(nil), x...)
		xp[j] += step
		xm[j] -= step
		_, gp, err1 := st.value(xp)
		_, gm, err2 := st.value(xm)
		st.rn.result.Evaluations += 2
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("the Hessian: %w", err)
		}
		cols[j] = make([]float64, n)
		for i := range cols[j] {
			cols[j][i] = (gp[i] - gm[i]) / (2 * step) * sc[i] * sc[j]
		}
	}
	if np > 0 {
		if st.rn.interrupted() {
			return nil, errInterrupted
		}
		// Image k's own columns, on the rank that owns it: by its local
		// vector (shared values, then its own), restraints added below.
		width := np * (ns + np)
		blocks, errs, err := gatherImages(s.comm, K, width, func(k int) ([]float64, error) {
			xl := s.local(x, k)
			out := make([]float64, 0, width)
			for jj := 0; jj < np; jj++ {
				j := ns + jj // in the local vector
				gi := ns + k*np + jj
				step := hessianStep * sc[gi]
				xp := append([]float64(nil), xl...)
				xm := append([]float64(nil), xl...)
				xp[j] += step
				xm[j] -= step
				_, gp, err1 := s.objs[k].Gradient(xp)
				_, gm, err2 := s.objs[k].Gradient(xm)
				if err := errors.Join(err1, err2); err != nil {
					return nil, err
				}
				for i := range gp {
					out = append(out, (gp[i]-gm[i])/(2*step))
				}
			}
			return out, nil
		})
		if err != nil {
			return nil, err
		}
		st.rn.result.Evaluations += 2 * np
		for k, b := range blocks {
			if math.IsNaN(b[0]) {
				return nil, fmt.Errorf("the Hessian: %w", blockErr(K, k, errs))
			}
			for jj := 0; jj < np; jj++ {
				gj := ns + k*np + jj
				col := make([]float64, n)
				for i := 0; i < ns+np; i++ {
					gi := i
					if i >= ns {
						gi = ns + k*np + (i - ns)
					}
					col[gi] = b[jj*(ns+np)+i] * sc[gi] * sc[gj]
				}
				cols[gj] = col
			}
		}
		for _, t := range st.restr {
			if t.i >= ns {
				cols[t.i][t.i] += t.weight * sc[t.i] * sc[t.i]
			}
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
	if ms, err := rn.models(sr.x); err == nil {
		r.Models, r.Model = ms, ms[0]
	}
	switch {
	case sr.interrupted:
		r.Status, r.Err = Interrupted, errInterrupted
		if f, _, err := rn.all.eval(sr.x); err == nil {
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
		// A signal during the standard errors ends the fit interrupted
		// (sse's take two images a parameter and image: minutes for
		// large ones, which stop at the signal).
		if rn.interrupted() {
			r.Status, r.Err = Interrupted, errInterrupted
		}
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
	if rn.all.objs[0].Loss.Kind == graph.LossSSE {
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
// scaled coordinates y: Σ_i 4w_i²·φV_i·∇I_i∇I_iᵀ over every image's
// fitted pixels, with each pixel's variance taken as φ·V_i (V_i = μ_i +
// σ_read², φ the dispersion the residuals of all the images give; the
// Jacobian by central differences of forward images, steps 1e-3 of each
// scale), plus the restraints' (unit/σ)² on the diagonal. Each image's
// part is computed on the rank that owns it.
func (rn *runner) sseMeat(x []float64) (*mat.Dense, error) {
	s := rn.all
	n, ns, np, K := len(x), len(s.shared), len(s.per), len(s.objs)
	sc := rn.master.scale
	img := func(k int, xl []float64) ([]float64, error) {
		m, err := s.objs[k].At(xl)
		if err != nil {
			return nil, err
		}
		sim, err := graph.New(m)
		if err != nil {
			return nil, err
		}
		return sim.Image()
	}
	// First the dispersion: Σ w·r² and Σ w·V per image.
	type pixels struct {
		at, w, mu []float64
		pix       []int
	}
	px := make([]*pixels, K)
	sums, errs, err := gatherImages(s.comm, K, 2, func(k int) ([]float64, error) {
		l := &s.objs[k].Loss
		at, err := img(k, s.local(x, k))
		if err != nil {
			return nil, err
		}
		p := &pixels{at: at}
		var rss, vs float64
		for i := range at {
			if l.Weights != nil && l.Weights[i] == 0 {
				continue
			}
			w, m := 1.0, at[i]
			if l.Weights != nil {
				w = l.Weights[i]
			}
			if l.Background != nil {
				m += l.Background[i]
			}
			p.pix, p.w, p.mu = append(p.pix, i), append(p.w, w), append(p.mu, m)
			r := m - l.Observed[i]
			rss += w * r * r
			vs += w * (m + l.ReadNoise*l.ReadNoise)
		}
		px[k] = p
		return []float64{rss, vs}, nil
	})
	if err != nil {
		return nil, err
	}
	var rss, vs float64
	for k, b := range sums {
		if math.IsNaN(b[0]) {
			return nil, blockErr(K, k, errs)
		}
		rss += b[0]
		vs += b[1]
	}
	phi := rss / vs
	// Then each image's meat over its local vector.
	w := ns + np
	meats, errs, err := gatherImages(s.comm, K, w*w, func(k int) ([]float64, error) {
		l := &s.objs[k].Loss
		p := px[k]
		xl := s.local(x, k)
		jac := mat.NewDense(len(p.pix), w, nil)
		for j := 0; j < w; j++ {
			if rn.s.Context.Err() != nil {
				// (This rank's images only: finish asks all of them.)
				return nil, errInterrupted
			}
			gj := j
			if j >= ns {
				gj = ns + k*np + (j - ns)
			}
			step := 1e-3 * sc[gj]
			xp := append([]float64(nil), xl...)
			xm := append([]float64(nil), xl...)
			xp[j] += step
			xm[j] -= step
			ip, err1 := img(k, xp)
			im, err2 := img(k, xm)
			if err := errors.Join(err1, err2); err != nil {
				return nil, err
			}
			for q, i := range p.pix {
				sd := math.Sqrt(phi * (p.mu[q] + l.ReadNoise*l.ReadNoise))
				jac.Set(q, j, 2*p.w[q]*sd*(ip[i]-im[i])/2e-3) // by y_j: (step = 1e-3·scale)
			}
		}
		var m mat.Dense
		m.Mul(jac.T(), jac)
		return m.RawMatrix().Data, nil
	})
	if err != nil {
		return nil, err
	}
	meat := mat.NewDense(n, n, nil)
	for k, b := range meats {
		if math.IsNaN(b[0]) {
			return nil, blockErr(K, k, errs)
		}
		glob := func(j int) int {
			if j < ns {
				return j
			}
			return ns + k*np + (j - ns)
		}
		for i := 0; i < w; i++ {
			for j := 0; j < w; j++ {
				gi, gj := glob(i), glob(j)
				meat.Set(gi, gj, meat.At(gi, gj)+b[i*w+j])
			}
		}
	}
	base := rn.p.base()
	for i, name := range base {
		if rs, ok := rn.s.Restraints[name]; ok {
			meat.Set(i, i, meat.At(i, i)+rn.unit*rn.unit*sc[i]*sc[i]/(rs.Sigma*rs.Sigma))
		}
	}
	return meat, nil
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
