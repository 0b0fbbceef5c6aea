package graph

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/physics"
)

// model builds a validated model from a nanoBragg command line, in a
// fresh directory: reading -hkl writes the reference's Fdump.bin cache to
// the working directory, and a later model without -hkl would read it.
func model(t testing.TB, argv ...string) *models.Model {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	m, err := parseModel(argv)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// parseModel is the validated model of a nanoBragg command line, read in
// the working directory (model's, or, without -hkl, any).
func parseModel(argv []string) (*models.Model, error) {
	a, err := models.ParseArgs(argv)
	if err != nil {
		return nil, err
	}
	return a.Model(io.Discard)
}

func cubic(pixels int, distance float64) []string {
	return []string{"-cell", "100", "100", "100", "90", "90", "90", "-lambda", "6.2", "-N", "5",
		"-default_F", "100", "-distance", fmt.Sprint(distance), "-pixel", "0.1", "-detpixels", fmt.Sprint(pixels)}
}

// TestProgramReuse: simulators that differ only in parameter values share
// one compiled program; a structural change compiles a new one.
func TestProgramReuse(t *testing.T) {
	before := Compiles()
	s1, err := New(model(t, cubic(48, 100)...))
	if err != nil {
		t.Fatal(err)
	}
	if got := Compiles() - before; got != 1 {
		t.Fatalf("first simulator compiled %d programs, want 1", got)
	}
	// Same structure, other values: distance, cell, wavelength, misset.
	other := append(cubic(48, 120), "-misset", "5", "6", "7", "-cell", "90", "95", "100", "88", "91", "93", "-lambda", "5")
	s2, err := New(model(t, other...))
	if err != nil {
		t.Fatal(err)
	}
	if got := Compiles() - before; got != 1 {
		t.Fatalf("second simulator with the same structure compiled: %d programs in all, want 1", got)
	}
	if s1.Program() != s2.Program() {
		t.Fatal("simulators with one key do not share their program")
	}
	// A different pixel count is a different structure.
	if _, err := New(model(t, cubic(40, 100)...)); err != nil {
		t.Fatal(err)
	}
	if got := Compiles() - before; got != 2 {
		t.Fatalf("a new shape compiled %d programs in all, want 2", got)
	}
	// The shared program must give each simulator its own values.
	i1, err := s1.Image()
	if err != nil {
		t.Fatal(err)
	}
	i2, err := s2.Image()
	if err != nil {
		t.Fatal(err)
	}
	same := true
	for i := range i1 {
		if i1[i] != i2[i] {
			same = false
			break
		}
	}
	if same {
		t.Fatal("two simulators with different parameters gave the same image")
	}
}

// TestProgramMatchesRender: the compiled forward program (parameters bound
// by G.Let, paramsOp, the tables, the pixel op) renders the bits of the
// kernel run directly on FloatInputs: binding adds nothing and mixes up no
// input. (That the primitive-op parameter graph of the gradient programs
// gives the same packed parameters is TestPackedBits.)
func TestProgramMatchesRender(t *testing.T) {
	for _, argv := range [][]string{
		append(cubic(32, 100), "-misset", "10", "20", "30", "-detector_rotx", "5", "-twotheta", "12"),
		{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "-3", "4", "50", "-default_F", "10", "-N", "4",
			"-lambda", "1.2", "-detpixels", "32", "-xds", "-ORGX", "10", "-ORGY", "20", "-polar", "0.7"},
	} {
		m := model(t, argv...)
		s, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Image()
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.Program().Key().Pixels
		want := make([]float64, len(got))
		physics.Render(&cfg, FloatInputs(m), want)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%v: pixel %d program %g kernel %g", argv, i, got[i], want[i])
			}
		}
	}
}

// TestDeterministic: repeated runs are bit-identical.
func TestDeterministic(t *testing.T) {
	s, err := New(model(t, append(cubic(64, 100), "-misset", "1", "2", "3")...))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Image()
	b, err := s.Image()
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("pixel %d differs between runs: %g %g", i, a[i], b[i])
		}
	}
}

func benchSimulate(b *testing.B, pixels int) { benchImage(b, cubic(pixels, 100), pixels) }

// The standard cases: cubic 100 Å, N=5, λ=6.2 Å, default_F 100, 100 mm,
// 0.1 mm pixels (the reference's timing case of the performance issue).
func BenchmarkSimulate256(b *testing.B)  { benchSimulate(b, 256) }
func BenchmarkSimulate1024(b *testing.B) { benchSimulate(b, 1024) }
func BenchmarkSimulate4096(b *testing.B) {
	benchImage(b, append(cubic(4096, 100), maxMemory4096...), 4096)
}

// maxMemory4096 lets the 4096² benchmarks past simulate's memory cap (768
// MB by default; its estimate for 4096² is that, at 48 bytes a pixel).
var maxMemory4096 = []string{"-max_memory", "1024"}

// BenchmarkSimulate4096Float32 is BenchmarkSimulate4096 with the image
// stored in float32 (Float32Image): half the bytes per run.
func BenchmarkSimulate4096Float32(b *testing.B) {
	s, err := New(model(b, append(cubic(4096, 100), maxMemory4096...)...), Float32Image())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Image32(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(4096*4096)*float64(b.N)/b.Elapsed().Seconds(), "pixels/s")
}

// BenchmarkNewSimulatorHit times a simulator instance whose program is in
// the cache; BenchmarkNewSimulatorMiss builds and compiles a program.
func BenchmarkNewSimulatorHit(b *testing.B) {
	m := model(b, cubic(1024, 100)...)
	if _, err := New(m); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := New(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewSimulatorMiss(b *testing.B) {
	m := model(b, cubic(1024, 100)...)
	key := KeyOf(m)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := build(key, m); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFloat32Image: a program that stores its image in float32 gives
// exactly the float64 image rounded once per pixel (the accuracy of the
// option: relative error ≤ 2⁻²⁴ per pixel), including the interpolation
// switch-off case; it refuses gradients.
func TestFloat32Image(t *testing.T) {
	for _, argv := range [][]string{
		append(cubic(48, 100), "-misset", "10", "20", "30", "-mosaic", "0.5", "-mosaic_domains", "3"),
		{"-hkl", inputs + "/P1.hkl", "-matrix", inputs + "/A.mat", "-lambda", "6.2", "-N", "5", "-distance", "100",
			"-detpixels", "40", "-pixel", "0.4", "-interpolate"},
	} {
		m := model(t, argv...)
		s64, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		s32, err := New(m, Float32Image())
		if err != nil {
			t.Fatal(err)
		}
		if s32.Program() == s64.Program() {
			t.Fatal("float32 and float64 storage share a program")
		}
		if !math.IsNaN(s32.SolidAngle()) {
			t.Error("a solid angle before the first run")
		}
		want, err := s64.Image()
		if err != nil {
			t.Fatal(err)
		}
		got, err := s32.Image32()
		if err != nil {
			t.Fatal(err)
		}
		nonzero := 0
		for i := range want {
			if got[i] != float32(want[i]) {
				t.Fatalf("%v: pixel %d float32 storage %g, float64 image rounded %g", argv, i, got[i], float32(want[i]))
			}
			if want[i] != 0 {
				nonzero++
			}
		}
		if nonzero == 0 {
			t.Fatalf("%v: blank image", argv)
		}
		cfg := s64.Program().Key().Pixels
		if want := physics.SolidAngle(&cfg, FloatInputs(m)); s32.SolidAngle() != want || s64.SolidAngle() != want {
			t.Errorf("%v: solid angle %g (float32) %g (float64), physics.SolidAngle %g", argv, s32.SolidAngle(), s64.SolidAngle(), want)
		}
		if _, _, err := s32.Gradient(&Loss{Kind: LossSum}); err == nil {
			t.Error("a float32 program gave a gradient")
		}
	}
}

// TestImageIsFresh: every run hands over a new image; changing one does
// not reach the next.
func TestImageIsFresh(t *testing.T) {
	s, err := New(model(t, cubic(16, 100)...))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Image()
	want := append([]float64(nil), a...)
	for i := range a {
		a[i] = -1
	}
	b, err := s.Image()
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		if b[i] != want[i] {
			t.Fatalf("pixel %d: %g after the previous image was overwritten, want %g", i, b[i], want[i])
		}
	}
}

// TestConcurrentGradients: gradient runs of several simulators that share
// one program, started at once from many goroutines, give each the bits a
// run alone gives (each run takes its own machine from the program's
// pool), and every machine returns to the pool.
func TestConcurrentGradients(t *testing.T) {
	base := model(t, triclinic()...)
	obs := image(t, base)
	l := &Loss{Kind: LossPoisson, Observed: obs}
	const n = 6
	sims := make([]*Simulator, n)
	want := make([][]float64, n)
	wantLoss := make([]float64, n)
	for i := range sims {
		m, err := base.With("a", 70+0.01*float64(i))
		if err != nil {
			t.Fatal(err)
		}
		if sims[i], err = New(m); err != nil {
			t.Fatal(err)
		}
		if wantLoss[i], want[i], err = sims[i].Gradient(l); err != nil {
			t.Fatal(err)
		}
	}
	if sims[0].Program() != sims[n-1].Program() {
		t.Fatal("the simulators do not share a program")
	}
	p := sims[0].Program()
	lk := lossKey{kind: LossPoisson}
	p.mu.Lock()
	before := len(p.grads[lk])
	p.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, 3*n)
	for r := 0; r < 3; r++ {
		for i := range sims {
			wg.Add(1)
			go func(k, i int) {
				defer wg.Done()
				v, g, err := sims[i].Gradient(l)
				switch {
				case err != nil:
					errs[k] = err
				case v != wantLoss[i] || !slices.Equal(g, want[i]):
					errs[k] = fmt.Errorf("simulator %d: loss %v gradient %v at once, %v %v alone", i, v, g, wantLoss[i], want[i])
				}
			}(r*n+i, i)
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// Every machine came back; at most one more per run at once.
	if idle := len(p.grads[lk]); idle < max(before, 1) || idle > before+3*n {
		t.Errorf("%d idle gradient programs after %d runs at once (%d before)", idle, 3*n, before)
	}
}

// BenchmarkGradientProgramMiss builds and compiles a gradient program
// (cubic 1024², summed-image loss), as the first gradient run of each
// loss structure does.
func BenchmarkGradientProgramMiss(b *testing.B) {
	m := model(b, cubic(1024, 100)...)
	p, err := build(KeyOf(m), m)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.buildGrad(lossKey{kind: LossSum}); err != nil {
			b.Fatal(err)
		}
	}
}
