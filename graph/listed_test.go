package graph

import (
	"math"
	"testing"
)

// TestListedLoss: a weighted loss and its pixel list (Loss.Listed) give a
// simulator the same loss and gradient, bit for bit (the full images are
// the independent form; physics' TestPixelList checks the kernels on
// every lane kernel); two lists of different lengths take turns in one
// program cache; an empty list has loss 0. An Objective evaluates its
// weighted Loss as a list and lists it again when a slice, the kind or
// the read-out noise is replaced: its loss is the simulator's on the full
// images each time; and it refuses a loss of the wrong size as the
// simulator does.
func TestListedLoss(t *testing.T) {
	m := model(t, triclinic("-polar", "0.6", "-mosaic", "0.3", "-mosaic_domains", "2")...)
	obs := image(t, must(m.With("a", 70.05)))
	n := len(obs)
	counts, bg := make([]float64, n), make([]float64, n)
	boxes := func(period int) []float64 {
		w := make([]float64, n)
		for i := range w {
			if (i%40)%period < 4 && (i/40)%period < 3 {
				w[i] = 1 + float64(i%3)/2
			}
		}
		return w
	}
	for i, v := range obs {
		counts[i] = math.Round(v)
		bg[i] = 1 + 0.5*math.Sin(float64(i)/37)
	}
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, full := range []Loss{
		{Kind: LossPoisson, Observed: counts, Weights: boxes(7), Background: bg},
		{Kind: LossSSE, Observed: obs, Weights: boxes(9)},
		{Kind: LossSum, Weights: boxes(7)},
		{Kind: LossGauss, Observed: counts, Weights: boxes(9), Background: bg, ReadNoise: 2},
	} {
		listed := full.Listed()
		if len(listed.Pixels) == 0 || len(listed.Pixels) >= n/2 {
			t.Fatalf("%s: %d of %d pixels listed", full.Kind, len(listed.Pixels), n)
		}
		v0, g0, err := s.Gradient(&full)
		if err != nil {
			t.Fatal(err)
		}
		v1, g1, err := s.Gradient(&listed)
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(v0) != math.Float64bits(v1) {
			t.Errorf("%s: loss %.17g listed, %.17g full", full.Kind, v1, v0)
		}
		for j := range g0 {
			if math.Float64bits(g0[j]) != math.Float64bits(g1[j]) {
				t.Errorf("%s: gradient [%d] %.17g listed, %.17g full", full.Kind, j, g1[j], g0[j])
			}
		}
		a, err := s.Loss(&full)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := s.Loss(&listed); err != nil || math.Float64bits(a) != math.Float64bits(b) {
			t.Errorf("%s: forward loss %.17g listed (%v), %.17g full", full.Kind, b, err, a)
		}
	}

	// Two lists of different lengths in turn, and an empty one.
	full := Loss{Kind: LossPoisson, Observed: counts, Background: bg}
	var want []float64
	for _, period := range []int{7, 11, 7} {
		full.Weights = boxes(period)
		l := full.Listed()
		v, _, err := s.Gradient(&l)
		if err != nil {
			t.Fatal(err)
		}
		w, _, _ := s.Gradient(&full)
		want = append(want, w)
		if math.Float64bits(v) != math.Float64bits(w) {
			t.Errorf("boxes of period %d: loss %.17g listed, %.17g full", period, v, w)
		}
	}
	if want[0] == want[1] || want[0] != want[2] {
		t.Errorf("losses %v: the two lists should differ, and the first come back", want)
	}
	empty := (&Loss{Kind: LossPoisson, Observed: counts, Weights: make([]float64, n)}).Listed()
	if v, g, err := s.Gradient(&empty); err != nil || v != 0 || g[0] != 0 || empty.Pixels == nil {
		t.Errorf("no pixel listed: loss %g, gradient %v, error %v (list %v)", v, g, err, empty.Pixels)
	}
	// A NaN weight is not 0: its pixel is listed (the full images keep it).
	nan := make([]float64, n)
	nan[5] = math.NaN()
	if l := (&Loss{Kind: LossSum, Weights: nan}).Listed(); len(l.Pixels) != 1 || l.Pixels[0] != 5 || !math.IsNaN(l.Weights[0]) {
		t.Errorf("a NaN weight: listed %v, weights %v", l.Pixels, l.Weights)
	}

	// The Objective lists its Loss, and again for each slice, kind or
	// read-out noise replaced.
	o, err := NewObjective(m, []string{"a", "misset_x"}, Loss{Kind: LossPoisson, Observed: counts, Background: bg, Weights: boxes(7)})
	if err != nil {
		t.Fatal(err)
	}
	x := o.Start()
	counts2, bg2 := make([]float64, n), make([]float64, n)
	for i := range counts2 {
		counts2[i], bg2[i] = counts[(i+3)%n], 0.5*bg[i]
	}
	for step, change := range []func(){
		func() {},
		func() { o.Loss.Weights = boxes(11) },
		func() { o.Loss.Observed = counts2 },
		func() { o.Loss.Background = bg2 },
		func() { o.Loss.Kind = LossGauss },
		func() { o.Loss.ReadNoise = 3 },
	} {
		change()
		w, _, err := s.Gradient(&o.Loss)
		if err != nil {
			t.Fatal(err)
		}
		wf, err := s.Loss(&o.Loss)
		if err != nil {
			t.Fatal(err)
		}
		v, _, err := o.Gradient(x)
		if err != nil {
			t.Fatal(err)
		}
		f, err := o.Value(x)
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(v) != math.Float64bits(w) || math.Float64bits(f) != math.Float64bits(wf) {
			t.Errorf("objective, change %d: loss %.17g by Gradient, %.17g by Value; %.17g and %.17g on the full images", step, v, f, w, wf)
		}
		if o.listed == nil || len(o.listed.Pixels) == 0 {
			t.Errorf("objective, change %d: not evaluated as a list", step)
		}
	}

	// A loss whose slices are not the image's size is refused by the
	// Objective as by the simulator, with the simulator's message: it is
	// not listed first (which would index past their ends).
	for _, bad := range []Loss{
		{Kind: LossPoisson, Observed: counts, Weights: boxes(7)[:n-1]},
		{Kind: LossPoisson, Observed: counts, Weights: append(boxes(7), 1)},
		{Kind: LossPoisson, Observed: counts[:n-10], Weights: boxes(7)},
		{Kind: LossPoisson, Observed: counts, Weights: boxes(7), Background: bg[:3]},
		{Kind: LossPoisson, Observed: append(append([]float64{}, counts...), 1), Weights: boxes(7)},
		{Kind: LossPoisson, Observed: counts[:n-1], Weights: boxes(7)[:n-1], Background: bg[:n-1]}, // (a list of them would pass)
	} {
		_, want := s.Loss(&bad)
		ob, err := NewObjective(m, []string{"a"}, bad)
		if err != nil {
			t.Fatal(err)
		}
		_, _, gerr := ob.Gradient(ob.Start())
		_, verr := ob.Value(ob.Start())
		if want == nil || gerr == nil || verr == nil || gerr.Error() != want.Error() || verr.Error() != want.Error() {
			t.Errorf("%d observed, %d weights, %d background: objective says %v and %v, the simulator %v",
				len(bad.Observed), len(bad.Weights), len(bad.Background), gerr, verr, want)
		}
	}
}
