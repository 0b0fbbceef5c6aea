package fit

import (
	"math"
	"math/rand"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
)

// BenchmarkBoxes1024 compares one fit evaluation (Poisson loss and its
// gradient by cell and orientation, Objective.Gradient) on ~200 spot
// boxes of 10² with the same on the whole 1024² image, pair by pair on
// one model (the machine's drift cancels in each pair), and reports the
// median ratio ("box/whole") and the boxes' pixels.
func BenchmarkBoxes1024(b *testing.B) {
	args := refArgs("1e29")
	for i, a := range args {
		if a == "-detpixels" {
			args[i+1] = "1024"
		}
		if a == "-pixel" {
			args[i+1] = "0.05"
		}
	}
	m := model(b, args...)
	obs := noisy(b, m, nil, 1)
	whole := graph.Loss{Kind: graph.LossPoisson, Observed: obs, Background: make([]float64, len(obs))}
	for i := range whole.Background {
		whole.Background[i] = 0.01
	}
	boxed := whole
	_, boxes, err := Prepare(&boxed, 1024, 1024, Pixels{})
	if err != nil {
		b.Fatal(err)
	}
	// The 200 brightest spots' boxes (Prepare keeps them brightest first).
	if len(boxes) > 200 {
		boxes = boxes[:200]
	}
	boxed.Weights = make([]float64, len(obs))
	pixels := 0
	for _, bx := range boxes {
		bx.Pixels(1024, func(i int) {
			if boxed.Weights[i] == 0 {
				pixels++
			}
			boxed.Weights[i] = 1
		})
	}
	ow, _ := graph.NewObjective(m, cellOrient, whole)
	ob, _ := graph.NewObjective(m, cellOrient, boxed)
	x := ow.Start()
	for _, o := range []*graph.Objective{ow, ob} { // build both programs
		if _, _, err := o.Gradient(x); err != nil {
			b.Fatal(err)
		}
	}
	ratios := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, _, err := ow.Gradient(x); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, _, err := ob.Gradient(x); err != nil {
			b.Fatal(err)
		}
		ratios = append(ratios, time.Since(t1).Seconds()/t1.Sub(t0).Seconds())
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "box/whole")
	b.ReportMetric(float64(len(boxes)), "boxes")
	b.ReportMetric(float64(pixels), "box-pixels")
}

// stillsBench is n stills of the reference's crystal at the fluence
// (over the reference's background), each in
// its own random orientation, the cell shared and started 1 % / 1° off,
// each orientation 0.5° off about every axis (random signs): issue 16's
// benchmark problem. It returns the problem and the truths.
func stillsBench(b testing.TB, n int, fluence string) (*Problem, []*models.Model) {
	p := &Problem{Shared: cellNames, PerImage: []string{"orient_x", "orient_y", "orient_z"}}
	rng := rand.New(rand.NewSource(16))
	bg := referenceBackground(b)
	var truths []*models.Model
	sign := func() float64 { return float64(2*rng.Intn(2) - 1) }
	var cellOff []float64
	for k := 0; k < n; k++ {
		args := refArgs(fluence)
		for i, a := range args {
			if a == "-misset" {
				for j := 1; j <= 3; j++ {
					args[i+j] = strconv.FormatFloat(360*rng.Float64()-180, 'f', 3, 64)
				}
			}
		}
		truth := model(b, args...)
		truths = append(truths, truth)
		l, boxes := prepared(b, truth, graph.LossPoisson, noisy(b, truth, bg, int64(16000+k)))
		off := []float64{0.01 * sign(), 0.01 * sign(), 0.01 * sign(), sign(), sign(), sign(), 0.5 * sign(), 0.5 * sign(), 0.5 * sign()}
		if k > 0 {
			copy(off[:6], cellOff) // one start for the cell: it is shared
		} else {
			cellOff = append([]float64(nil), off[:6]...)
		}
		start := with(b, truth, append(append([]string{}, cellNames...), p.PerImage...), off)
		o, err := graph.NewObjective(start, append(append([]string{}, p.Shared...), p.PerImage...), l)
		if err != nil {
			b.Fatal(err)
		}
		p.Images = append(p.Images, Image{Objective: o, Boxes: boxes})
	}
	return p, truths
}

// BenchmarkStills50 fits 50 stills (stillsBench) in one process and
// reports the wall time, the evaluations, the time per image evaluation,
// and the largest errors against the truth: of the shared cell (lengths
// in %, angles in degrees) and of the images' orientations (degrees). The
// stills hold ~120,000 photons each (fluence 1e29) and, in the Bright
// variant, ~1.2 million (1e30).
func BenchmarkStills50(b *testing.B)       { benchStills(b, "1e29") }
func BenchmarkStills50Bright(b *testing.B) { benchStills(b, "1e30") }

func benchStills(b *testing.B, fluence string) {
	for i := 0; i < b.N; i++ {
		p, truths := stillsBench(b, 50, fluence)
		t0 := time.Now()
		r := RunProblem(p, Settings{})
		reportStills(b, r, p, truths, time.Since(t0))
	}
}

func reportStills(b *testing.B, r *Result, p *Problem, truths []*models.Model, wall time.Duration) {
	if r.Status != Converged {
		b.Fatalf("%s: %v", r.Status, r.Err)
	}
	var lenErr, angErr, orErr float64
	for i, n := range cellNames {
		want, _ := truths[0].Get(n)
		if i < 3 {
			lenErr = math.Max(lenErr, 100*math.Abs(r.X[i]-want)/want)
		} else {
			angErr = math.Max(angErr, math.Abs(r.X[i]-want))
		}
	}
	// Each image's orientation error: the angle of the rotation between
	// its refined and its true orientation (misset and correction
	// together).
	ms, err := p.Models(r.X)
	if err != nil {
		b.Fatal(err)
	}
	for k, m := range ms {
		orErr = math.Max(orErr, rotationAngle(m.Crystal, truths[k].Crystal))
	}
	b.ReportMetric(wall.Seconds(), "s/fit")
	b.ReportMetric(float64(r.Evaluations), "evaluations")
	b.ReportMetric(wall.Seconds()/float64(r.Evaluations*len(p.Images))*1e3, "ms/image-evaluation")
	b.ReportMetric(lenErr, "max-length-err-%")
	b.ReportMetric(angErr, "max-angle-err-deg")
	b.ReportMetric(orErr, "max-orientation-err-deg")
}

// rotationAngle is the angle (degrees) of the rotation taking b's
// orientation to a's: both crystals' misset followed by their correction.
func rotationAngle(a, b *models.Crystal) float64 {
	ra, rb := orientationMatrix(a), orientationMatrix(b)
	// trace(Ra·Rbᵀ) = 1 + 2 cos θ.
	tr := 0.0
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			tr += ra[i][j] * rb[i][j]
		}
	}
	c := math.Max(-1, math.Min(1, (tr-1)/2))
	return math.Acos(c) * 180 / math.Pi
}

func orientationMatrix(c *models.Crystal) [3][3]float64 {
	var r [3][3]float64
	A := models.Float{}
	for j := 0; j < 3; j++ {
		var e models.V3[float64]
		e[j] = 1
		v := models.RotateXYZ[float64](A, e, c.MissetX, c.MissetY, c.MissetZ)
		v = models.RotateXYZ[float64](A, v, c.OrientX, c.OrientY, c.OrientZ)
		for i := 0; i < 3; i++ {
			r[i][j] = v[i]
		}
	}
	return r
}
