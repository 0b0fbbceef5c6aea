package fit

import (
	"sort"
	"testing"
	"time"

	"github.com/gobragg/gobragg/graph"
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
