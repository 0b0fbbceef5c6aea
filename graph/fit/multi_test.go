package fit

import (
	"math"
	"math/rand"
	"strconv"
	"sync"
	"testing"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
)

// seriesArgs is a 256² rotation frame of the reference's triclinic
// crystal: φ from phi, 1° in 3 steps.
func seriesArgs(phi float64) []string {
	return append(refArgs("1e29"), "-phi", strconv.FormatFloat(phi, 'g', -1, 64), "-osc", "1", "-phisteps", "3")
}

// frames makes n noisy frames (φ 0, 1, …) of the truth over the
// reference's background and returns their images with the problem of
// fitting them: names shared, per per image, each frame's model the
// truth at its φ changed by off (with), and its loss as the fit command
// sets it up.
func frames(t testing.TB, n int, shared, per []string, off func(k int) (names []string, offsets []float64)) ([]*models.Model, *Problem) {
	bg := referenceBackground(t)
	var truths []*models.Model
	p := &Problem{Shared: shared, PerImage: per}
	for k := 0; k < n; k++ {
		truth := model(t, seriesArgs(float64(k))...)
		truths = append(truths, truth)
		obs := noisy(t, truth, bg, int64(100+k))
		l, boxes := prepared(t, truth, graph.LossPoisson, obs)
		names, offsets := off(k)
		o, err := graph.NewObjective(with(t, truth, names, offsets), append(append([]string{}, shared...), per...), l)
		if err != nil {
			t.Fatal(err)
		}
		p.Images = append(p.Images, Image{Objective: o, Boxes: boxes})
	}
	return truths, p
}

// TestRotationSeries: four 1° frames of one crystal (cell and orientation
// shared, each frame's fluence its own), started 2 % / 2° / 1° off (the
// same start for every frame: it is one crystal): converged, every
// parameter within 4 standard errors of the truth, and the shared
// parameters' errors smaller than a single frame's.
func TestRotationSeries(t *testing.T) {
	off := []float64{0.02, -0.02, 0.02, -2, 2, -2, 1, -1, 1}
	truths, p := frames(t, 4, cellOrient, []string{"fluence"}, func(int) ([]string, []float64) { return cellOrient, off })
	r := RunProblem(p, Settings{})
	t.Logf("%s after %d evaluations (%v)", r.Status, r.Evaluations, r.Err)
	if r.Status != Converged {
		t.Fatalf("%s: %v", r.Status, r.Err)
	}
	for i, n := range r.Names {
		k := 0
		if i >= len(cellOrient) {
			k = i - len(cellOrient)
		}
		want, _ := truths[k].Get(p.base()[i])
		t.Logf("%s: %.6g (true %g) ± %.3g", n, r.X[i], want, r.StdErr[i])
		if !(math.Abs(r.X[i]-want) <= 4*r.StdErr[i]) {
			t.Errorf("%s = %g ± %g: more than 4σ from the truth %g", n, r.X[i], r.StdErr[i], want)
		}
	}
	// One frame alone, from the truth: its errors are larger.
	one := &Problem{Shared: cellOrient, PerImage: []string{"fluence"}, Images: p.Images[:1]}
	o1, _ := graph.NewObjective(truths[0], one.Images[0].Objective.Names, one.Images[0].Objective.Loss)
	one.Images[0].Objective = o1
	r1 := RunProblem(one, Settings{Starts: 1})
	for i, n := range cellOrient {
		if !(r.StdErr[i] < r1.StdErr[i]) {
			t.Errorf("%s: σ %g from four frames, %g from one", n, r.StdErr[i], r1.StdErr[i])
		}
	}
}

// TestStills: four stills, each crystal in its own random orientation
// (per-image orient_*), one cell (shared), started 1 % / 1° off on the
// cell and 0.5° on each orientation: converged, and every parameter within
// 4 standard errors of the truth.
func TestStills(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var truths []*models.Model
	bg := referenceBackground(t)
	p := &Problem{Shared: cellNames, PerImage: []string{"orient_x", "orient_y", "orient_z"}}
	for k := 0; k < 4; k++ {
		args := refArgs("1e29")
		for i, a := range args {
			if a == "-misset" {
				for j := 1; j <= 3; j++ {
					args[i+j] = strconv.FormatFloat(360*rng.Float64()-180, 'f', 3, 64)
				}
			}
		}
		truth := model(t, args...)
		truths = append(truths, truth)
		l, boxes := prepared(t, truth, graph.LossPoisson, noisy(t, truth, bg, int64(200+k)))
		start := with(t, truth, append(append([]string{}, cellNames...), p.PerImage...),
			[]float64{0.01, -0.01, 0.01, -1, 1, -1, 0.5, -0.5, 0.5})
		o, _ := graph.NewObjective(start, append(append([]string{}, p.Shared...), p.PerImage...), l)
		p.Images = append(p.Images, Image{Objective: o, Boxes: boxes})
	}
	r := RunProblem(p, Settings{})
	t.Logf("%s after %d evaluations (%v); spots %d/%d unexplained", r.Status, r.Evaluations, r.Err, r.Spots.Unexplained, r.Spots.Boxes)
	if r.Status != Converged {
		t.Fatalf("%s: %v", r.Status, r.Err)
	}
	base := p.base()
	for i, n := range r.Names {
		k := 0
		if i >= len(cellNames) {
			k = (i - len(cellNames)) / 3
		}
		want, _ := truths[k].Get(base[i])
		t.Logf("%s: %.6g (true %g) ± %.3g", n, r.X[i], want, r.StdErr[i])
		if !(math.Abs(r.X[i]-want) <= 4*r.StdErr[i]) {
			t.Errorf("%s = %g ± %g: more than 4σ from the truth %g", n, r.X[i], r.StdErr[i], want)
		}
	}
}

// chanComm is an in-process Comm: rank r of size goroutines, exchanging
// through a shared barrier, as MPI ranks would.
type chanComm struct {
	rank, size int
	hub        *hub
}

type hub struct {
	mu    sync.Mutex
	cond  *sync.Cond
	round int
	data  [][]float64
	in    int
}

func newHub(size int) *hub {
	h := &hub{data: make([][]float64, size)}
	h.cond = sync.NewCond(&h.mu)
	return h
}

func (c chanComm) Rank() int { return c.rank }
func (c chanComm) Size() int { return c.size }
func (c chanComm) Allgather(d []float64) ([]float64, error) {
	h := c.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	round := h.round
	h.data[c.rank] = append([]float64(nil), d...)
	h.in++
	if h.in == c.size {
		h.round++
		h.in = 0
		h.cond.Broadcast()
	} else {
		for h.round == round {
			h.cond.Wait()
		}
	}
	var out []float64
	for _, x := range h.data {
		out = append(out, x...)
	}
	// Nobody writes the next round's data until everyone has read this
	// round's: a second barrier.
	h.in++
	if h.in == c.size {
		h.round++
		h.in = 0
		h.cond.Broadcast()
	} else {
		for h.round == round+1 {
			h.cond.Wait()
		}
	}
	return out, nil
}

// stills is a problem of n stills of the reference's crystal, each in a
// random orientation (seeded), over no background, with a shared cell
// started 1 % / 1° off and each orientation 0.5° off.
func stills(t testing.TB, n int, seed int64) *Problem {
	p := &Problem{Shared: cellNames, PerImage: []string{"orient_x", "orient_y", "orient_z"}}
	r := rand.New(rand.NewSource(seed))
	for k := 0; k < n; k++ {
		args := refArgs("1e29")
		for i, a := range args {
			if a == "-misset" {
				for j := 1; j <= 3; j++ {
					args[i+j] = strconv.FormatFloat(360*r.Float64()-180, 'f', 3, 64)
				}
			}
		}
		truth := model(t, args...)
		l, boxes := prepared(t, truth, graph.LossPoisson, noisy(t, truth, nil, seed*1000+int64(k)))
		start := with(t, truth, append(append([]string{}, cellNames...), p.PerImage...),
			[]float64{0.01, -0.01, 0.01, -1, 1, -1, 0.5, -0.5, 0.5})
		o, err := graph.NewObjective(start, append(append([]string{}, p.Shared...), p.PerImage...), l)
		if err != nil {
			t.Fatal(err)
		}
		p.Images = append(p.Images, Image{Objective: o, Boxes: boxes})
	}
	return p
}

// TestRanks: three stills fitted by two ranks (an in-process Comm: each
// rank evaluates its images and the per-image results are gathered) give
// the single-process result bit for bit, on both ranks.
func TestRanks(t *testing.T) {
	want := RunProblem(stills(t, 3, 11), Settings{Starts: 1})
	if want.Status != Converged {
		t.Fatalf("one process: %s: %v", want.Status, want.Err)
	}
	h := newHub(2)
	got := make([]*Result, 2)
	var wg sync.WaitGroup
	for rank := 0; rank < 2; rank++ {
		p := stills(t, 3, 11)
		wg.Add(1)
		go func(rank int) {
			defer wg.Done()
			got[rank] = RunProblem(p, Settings{Starts: 1, Comm: chanComm{rank: rank, size: 2, hub: h}})
		}(rank)
	}
	wg.Wait()
	for rank, r := range got {
		if r.Status != want.Status || r.Loss != want.Loss || !equal(r.X, want.X) || !equal(r.StdErr, want.StdErr) ||
			r.Evaluations != want.Evaluations {
			t.Errorf("rank %d: %s loss %v x %v σ %v (%d evaluations); one process: %s %v %v %v (%d)", rank, r.Status, r.Loss, r.X,
				r.StdErr, r.Evaluations, want.Status, want.Loss, want.X, want.StdErr, want.Evaluations)
		}
	}
}
