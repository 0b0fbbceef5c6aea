package graph

import (
	"sort"
	"testing"
	"time"

	"github.com/gobragg/gobragg/physics"
)

// mosaic10 is the cubic case with a 1° mosaic spread in 10 domains.
func mosaic10(pixels int) []string {
	return append(cubic(pixels, 100), "-mosaic", "1", "-mosaic_domains", "10")
}

func benchImage(b *testing.B, argv []string, pixels int) {
	s, err := New(model(b, argv...))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Image(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(pixels*pixels)*float64(b.N)/b.Elapsed().Seconds(), "pixels/s")
}

// benchGradient times one run of the gradient program: forward image, the
// summed-image loss and its gradient with respect to every parameter input.
func benchGradient(b *testing.B, argv []string, pixels int) {
	s, l := gradientReady(b, argv)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := s.Gradient(l); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(pixels*pixels)*float64(b.N)/b.Elapsed().Seconds(), "pixels/s")
}

// gradientReady returns a simulator for argv with its gradient program for
// the summed-image loss built (one run), and that loss.
func gradientReady(b *testing.B, argv []string) (*Simulator, *Loss) {
	s, err := New(model(b, argv...))
	if err != nil {
		b.Fatal(err)
	}
	l := &Loss{Kind: LossSum}
	if _, _, err := s.Gradient(l); err != nil {
		b.Fatal(err)
	}
	return s, l
}

// Forward only against forward + full gradient: the cubic standard case at
// 256² and 1024², and with 10 mosaic domains at 512².
func BenchmarkGradient256(b *testing.B)      { benchGradient(b, cubic(256, 100), 256) }
func BenchmarkGradient1024(b *testing.B)     { benchGradient(b, cubic(1024, 100), 1024) }
func BenchmarkSimulateMosaic10(b *testing.B) { benchImage(b, mosaic10(512), 512) }
func BenchmarkGradientMosaic10(b *testing.B) { benchGradient(b, mosaic10(512), 512) }

// benchRatio times forward image and gradient run (summed-image loss)
// alternately on one simulator and reports the median of the pairwise
// ratios gradient/forward ("grad/fwd"): the machine's drift between
// minutes cancels in each pair, as it does not between two benchmarks
// run one after the other.
func benchRatio(b *testing.B, argv []string) {
	s, l := gradientReady(b, argv)
	ratios := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := s.Image(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, _, err := s.Gradient(l); err != nil {
			b.Fatal(err)
		}
		ratios = append(ratios, time.Since(t1).Seconds()/t1.Sub(t0).Seconds())
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "grad/fwd")
}

// The gradient run's cost against the forward image's, pair by pair.
func BenchmarkGradientRatio256(b *testing.B)      { benchRatio(b, cubic(256, 100)) }
func BenchmarkGradientRatio1024(b *testing.B)     { benchRatio(b, cubic(1024, 100)) }
func BenchmarkGradientRatioMosaic10(b *testing.B) { benchRatio(b, mosaic10(512)) }

// benchLanes times the forward image (or, with gradient, the gradient run
// of the summed-image loss) with each lane kernel this binary runs here
// (physics.AvailableVectorLanes), one after another in every iteration, and
// reports each one's median time ("ms/<lanes>") and the median pairwise
// ratio of the widest to the next ("<widest>/<next>"): the drift of the
// machine cancels in each pair.
func benchLanes(b *testing.B, argv []string, gradient bool) {
	tiers := physics.AvailableVectorLanes()
	defer physics.UseVectorLanes(physics.VectorLanes())
	s, l := gradientReady(b, argv)
	times := make([][]float64, len(tiers))
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, tier := range tiers {
			if err := physics.UseVectorLanes(tier); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			var err error
			if gradient {
				_, _, err = s.Gradient(l)
			} else {
				_, err = s.Image()
			}
			if err != nil {
				b.Fatal(err)
			}
			times[j] = append(times[j], time.Since(t0).Seconds())
		}
		if n := len(tiers); n > 1 {
			ratios = append(ratios, times[n-1][i]/times[n-2][i])
		}
	}
	for j, tier := range tiers {
		sort.Float64s(times[j])
		b.ReportMetric(1e3*times[j][len(times[j])/2], "ms/"+tier)
	}
	if n := len(tiers); n > 1 {
		sort.Float64s(ratios)
		b.ReportMetric(ratios[len(ratios)/2], tiers[n-1]+"/"+tiers[n-2])
	}
}

// Each lane kernel on the standard cases, pair by pair.
func BenchmarkLanesSimulate1024(b *testing.B)     { benchLanes(b, cubic(1024, 100), false) }
func BenchmarkLanesGradient1024(b *testing.B)     { benchLanes(b, cubic(1024, 100), true) }
func BenchmarkLanesSimulateMosaic10(b *testing.B) { benchLanes(b, mosaic10(512), false) }
func BenchmarkLanesGradientMosaic10(b *testing.B) { benchLanes(b, mosaic10(512), true) }
