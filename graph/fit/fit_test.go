package fit

import (
	"io"
	"math"
	"os"
	"testing"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/physics"
)

func model(t testing.TB, argv ...string) *models.Model {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	a, err := models.ParseArgs(argv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Model(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func image(t testing.TB, m *models.Model) []float64 {
	t.Helper()
	s, err := graph.New(m)
	if err != nil {
		t.Fatal(err)
	}
	img, err := s.Image()
	if err != nil {
		t.Fatal(err)
	}
	return img
}

var cellNames = []string{"a", "b", "c", "alpha", "beta", "gamma"}

// offset returns m with every cell length 1 % off and every angle 1° off
// (alternating signs).
func offset(t testing.TB, m *models.Model) *models.Model {
	t.Helper()
	for i, n := range cellNames {
		v, _ := m.Get(n)
		sign := float64(1 - 2*(i%2))
		if i < 3 {
			v *= 1 + 0.01*sign
		} else {
			v += sign
		}
		var err error
		if m, err = m.With(n, v); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// The fits of issue 5: a triclinic cell with misset, 256² pixels (λ = 2 Å,
// 100 mm, 0.1 mm pixels, N = 5), started 1 % off on every length and 1° off
// on every angle. The true values are the command line's.
func TestFitNoiseFree(t *testing.T) {
	truth := model(t, "-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30", "-default_F", "100",
		"-N", "5", "-lambda", "2", "-distance", "100", "-pixel", "0.1", "-detpixels", "256")
	obs := image(t, truth)
	o, err := graph.NewObjective(offset(t, truth), cellNames, graph.Loss{Kind: graph.LossSSE, Observed: obs})
	if err != nil {
		t.Fatal(err)
	}
	r := Run(o, Settings{})
	t.Logf("status %s loss %g evals %d iters %d err %v", r.Status, r.Loss, r.Evaluations, r.Iterations, r.Err)
	if r.Err != nil || r.Evaluations > 100 {
		t.Errorf("%d evaluations, error %v", r.Evaluations, r.Err)
	}
	for i, n := range cellNames {
		want, _ := truth.Get(n)
		t.Logf("%s: %.9g (true %g) ± %.3g", n, r.X[i], want, r.StdErr[i])
		if math.Abs(r.X[i]-want) > 1e-6*math.Abs(want) {
			t.Errorf("%s = %.9g, true %g", n, r.X[i], want)
		}
	}
}

// TestFitPoisson: the same from Poisson counts (the reference's noise
// generator, seed 12345; fluence 1e31 gives up to 12000 photons a pixel),
// fitted with the Poisson likelihood: lengths within 0.1 %, angles within
// 0.05°, at most 100 evaluations, and within 5 standard errors.
func TestFitPoisson(t *testing.T) { fitPoisson(t, "256", "0.1") }

// TestFitPoisson512 covers the same area with 512² pixels of 0.05 mm.
func TestFitPoisson512(t *testing.T) {
	if testing.Short() {
		t.Skip("512² fit: run without -short")
	}
	fitPoisson(t, "512", "0.05")
}

func fitPoisson(t *testing.T, pixels, pitch string) {
	truth := model(t, "-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30", "-default_F", "100",
		"-N", "5", "-lambda", "2", "-distance", "100", "-pixel", pitch, "-detpixels", pixels, "-fluence", "1e31")
	img := image(t, truth)
	f32 := make([]float32, len(img))
	mx := 0.0
	for i, v := range img {
		f32[i] = float32(v)
		mx = math.Max(mx, v)
	}
	data, photons, over := physics.NoiseImage(f32, truth.Detector.FPixels, truth.Detector.ROI, 0, 12345)
	t.Logf("max %g photons %g overloads %d", mx, photons, over)
	obs := make([]float64, len(data))
	for i, v := range data {
		obs[i] = float64(v)
	}
	o, err := graph.NewObjective(offset(t, truth), cellNames, graph.Loss{Kind: graph.LossPoisson, Observed: obs})
	if err != nil {
		t.Fatal(err)
	}
	r := Run(o, Settings{Progress: func(it Iteration) { t.Logf("%d %d %.12g %.3g", it.Iter, it.Evals, it.Loss, it.GradNorm) }})
	t.Logf("status %s loss %g evals %d iters %d err %v", r.Status, r.Loss, r.Evaluations, r.Iterations, r.Err)
	if r.Err != nil || r.Evaluations > 100 {
		t.Errorf("%d evaluations, error %v", r.Evaluations, r.Err)
	}
	for i, n := range cellNames {
		want, _ := truth.Get(n)
		t.Logf("%s: %.9g (true %g) ± %.3g", n, r.X[i], want, r.StdErr[i])
		if i < 3 && math.Abs(r.X[i]-want) > 1e-3*want {
			t.Errorf("%s = %g: more than 0.1 %% from %g", n, r.X[i], want)
		}
		if i >= 3 && math.Abs(r.X[i]-want) > 0.05 {
			t.Errorf("%s = %g: more than 0.05° from %g", n, r.X[i], want)
		}
		if !(r.StdErr[i] > 0) || math.Abs(r.X[i]-want) > 5*r.StdErr[i] {
			t.Errorf("%s: error %g against standard error %g", n, r.X[i]-want, r.StdErr[i])
		}
	}
}
