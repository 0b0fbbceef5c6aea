package spots

import (
	"math"
	"math/rand"
	"testing"
)

// poisson draws a Poisson count of mean mu (Knuth's product of
// uniforms; the means here are below 100).
func poisson(rng *rand.Rand, mu float64) float64 {
	l, k, p := math.Exp(-mu), 0.0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// gaussSpot adds to img (w wide) the expected photons of a round
// Gaussian spot of total n photons and width sigma centred at (f, s) in
// pixel coordinates, integrated over each pixel.
func gaussSpot(img []float64, w int, f, s, n, sigma float64) {
	cdf := func(x float64) float64 { return 0.5 * (1 + math.Erf(x/(sigma*math.Sqrt2))) }
	for i := range img {
		pf, ps := float64(i%w), float64(i/w)
		img[i] += n * (cdf(pf+1-f) - cdf(pf-f)) * (cdf(ps+1-s) - cdf(ps-s))
	}
}

func draw(rng *rand.Rand, mean []float64) []float64 {
	out := make([]float64, len(mean))
	for i, m := range mean {
		out[i] = poisson(rng, m)
	}
	return out
}

// TestBackgroundFlat: a flat Poisson background of 0.8 photons a pixel
// and nothing else: the estimate is within 10 % of 0.8 on every pixel and
// within 2 % on average (a block of 32² pixels holds ~820 photons, ±3.5 %),
// and at most 2 of 16384 pixels are strong (the test's false-alarm rate is
// 1e-5 a pixel: 0.16 expected).
func TestBackgroundFlat(t *testing.T) {
	const w, h = 128, 128
	mean := make([]float64, w*h)
	for i := range mean {
		mean[i] = 0.8
	}
	im := &Image{W: w, H: h, Data: draw(rand.New(rand.NewSource(3)), mean)}
	r, err := Find(im, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for i, b := range r.Background {
		sum += b
		if math.Abs(b-0.8) > 0.08 {
			t.Fatalf("background %g at pixel %d", b, i)
		}
	}
	if avg := sum / float64(w*h); math.Abs(avg-0.8) > 0.016 {
		t.Errorf("mean background %g, true 0.8", avg)
	}
	strong := 0
	for _, s := range r.Strong {
		if s {
			strong++
		}
	}
	if strong > 2 || len(r.Spots) > 1 {
		t.Errorf("%d strong pixels, %d spots on a blank image", strong, len(r.Spots))
	}
}

// TestFindSpots: Gaussian spots (σ 1 pixel) of 50–400 photons on a
// background of 0.5, two of them 5 pixels apart so that their tails
// touch: every spot is found once. A spot of n ≥ 150 photons lies at its
// centre within 3/√n + 0.1 pixel (the centroid of n photons scatters by
// σ/√n per axis, and the strong pixels cut the spot's tails, pulling the
// centroid towards the peak pixel's centre by up to ~0.1) and holds its
// photons within 25 % (its strong pixels hold ~90 % of it); the weak one
// (50 photons), of which only the core is strong, lies within a pixel
// and holds at least half its photons (enough to centre a box on it).
// The background under the spots stays near 0.5. (Seeds 1–12 all pass.)
func TestFindSpots(t *testing.T) {
	const w, h = 96, 80
	mean := make([]float64, w*h)
	for i := range mean {
		mean[i] = 0.5
	}
	truth := []struct{ f, s, n float64 }{{20.3, 30.7, 400}, {25.3, 30.9, 300}, {60.5, 20.2, 150}, {70.8, 60.4, 50}, {40.1, 55.6, 200}}
	for _, sp := range truth {
		gaussSpot(mean, w, sp.f, sp.s, sp.n, 1)
	}
	im := &Image{W: w, H: h, Data: draw(rand.New(rand.NewSource(5)), mean)}
	r, err := Find(im, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Spots) != len(truth) {
		t.Errorf("%d spots found, %d made: %+v", len(r.Spots), len(truth), r.Spots)
	}
	for _, want := range truth {
		found := 0
		for _, got := range r.Spots {
			if math.Hypot(got.F-want.f, got.S-want.s) < 2 {
				found++
				tol, low, high := 1.0, 0.5*want.n, 1.25*want.n
				if want.n >= 150 {
					tol, low = 3/math.Sqrt(want.n)+0.1, 0.75*want.n
				}
				if d := math.Hypot(got.F-want.f, got.S-want.s); d > tol {
					t.Errorf("spot at %g %g found at %g %g", want.f, want.s, got.F, got.S)
				}
				if got.Photons < low || got.Photons > high {
					t.Errorf("spot at %g %g: %g photons, made with %g", want.f, want.s, got.Photons, want.n)
				}
			}
		}
		if found != 1 {
			t.Errorf("spot at %g %g found %d times", want.f, want.s, found)
		}
	}
	for i, b := range r.Background {
		if math.Abs(b-0.5) > 0.1 {
			t.Fatalf("background %g at pixel %d %d", b, i%w, i/w)
		}
	}
	// Brightest first.
	for i := 1; i < len(r.Spots); i++ {
		if r.Spots[i].Photons > r.Spots[i-1].Photons {
			t.Errorf("spots not in order of photons: %+v", r.Spots)
		}
	}
}

// TestSparseSpots: no background at all; a spot of 7 photons over a few
// pixels is found, while single photons scattered over the image (one in
// 200 pixels) are not spots.
func TestSparseSpots(t *testing.T) {
	const w, h = 64, 64
	data := make([]float64, w*h)
	rng := rand.New(rand.NewSource(7))
	for i := range data {
		if rng.Float64() < 0.005 {
			data[i] = 1
		}
	}
	for _, p := range [][3]int{{30, 30, 3}, {31, 30, 2}, {30, 31, 1}, {31, 31, 1}} {
		data[p[1]*w+p[0]] = float64(p[2])
	}
	r, err := Find(&Image{W: w, H: h, Data: data}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Spots) != 1 || math.Hypot(r.Spots[0].F-30.9, r.Spots[0].S-30.8) > 0.3 {
		t.Errorf("spots %+v, want one near 30.9 30.8", r.Spots)
	}
}

// TestBoxes: boxes are centred on the spots and dropped at the image's
// edge, on an unusable pixel and on a saturated one; overlapping boxes
// count once in the weights.
func TestBoxes(t *testing.T) {
	const w, h = 40, 40
	im := &Image{W: w, H: h, Data: make([]float64, w*h), Mask: make([]float64, w*h), Overload: 100}
	for i := range im.Mask {
		im.Mask[i] = 1
	}
	im.Mask[30*w+30] = 0
	im.Data[10*w+12] = 100 // saturated, in the box of the spot at (11, 10)
	spots := []Spot{{F: 20, S: 20}, {F: 23, S: 20}, {F: 2, S: 20}, {F: 29.5, S: 30.5}, {F: 11, S: 10}}
	boxes := Boxes(im, spots, 6)
	if len(boxes) != 2 || boxes[0] != (Box{F0: 17, S0: 17, Size: 6, Spot: 0}) || boxes[1] != (Box{F0: 20, S0: 17, Size: 6, Spot: 1}) {
		t.Errorf("boxes %+v", boxes)
	}
	n := 0.0
	for _, v := range Weights(w, h, boxes) {
		n += v
	}
	if n != 6*9 {
		t.Errorf("%g weighted pixels, want 54 (two 6×6 boxes overlapping by 3 columns)", n)
	}
}

// TestCheck: images that are not photon counts are refused.
func TestCheck(t *testing.T) {
	for _, im := range []*Image{{W: 2, H: 2, Data: make([]float64, 3)}, {W: 1, H: 1, Data: []float64{math.NaN()}},
		{W: 1, H: 1, Data: []float64{1}, Mask: []float64{1, 1}}} {
		if _, err := Find(im, Settings{}); err == nil {
			t.Errorf("%+v accepted", im)
		}
	}
}

// TestTailBelow: the strong-pixel test decided from bounds agrees with
// the tail probability itself (upperTail, gonum's regularised incomplete
// gamma function) on whole and fractional counts from 0.3 to 2·10⁶
// photons over means from 0.01 up, at three false-alarm rates, and at a
// subnormal one; each
// bound holds at every point (within a relative 1e-9); and the bounds
// decide most of the points (else they would save nothing): the lower one
// near the mean, the upper one far above it.
func TestTailBelow(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	points, byLower, byUpper := 0, 0, 0
	for trial := 0; trial < 20000; trial++ {
		mu := math.Exp(rng.Float64()*math.Log(1e6/0.01)) * 0.01
		// Up to 3 σ over the mean (noise, most of the pixels over their
		// background) or up to 12 (spots).
		k := mu + []float64{3, 12}[trial%4/2]*rng.Float64()*(math.Sqrt(mu)+1)
		if trial%2 == 0 {
			k = math.Ceil(k) // whole counts, as detectors give
		}
		if !(k > mu) {
			continue
		}
		p := upperTail(k, mu)
		lower, upper, _ := tailBounds(k, mu)
		if math.Exp(lower) > p*(1+1e-9) || p > math.Exp(upper)*(1+1e-9) {
			t.Fatalf("k %g, mu %g: P %.17g outside its bounds %.17g, %.17g", k, mu, p, math.Exp(lower), math.Exp(upper))
		}
		for _, alpha := range []float64{1e-5, 1e-3, 0.05} {
			points++
			if got, want := tailBelow(k, mu, alpha, math.Log(alpha)), p < alpha; got != want {
				t.Fatalf("k %g, mu %g, alpha %g: strong %v, the tail (%.17g) says %v", k, mu, alpha, got, p, want)
			}
			_, _, margin := tailBounds(k, mu)
			switch la := math.Log(alpha); {
			case lower > la+margin:
				byLower++
			case upper < la-margin:
				byUpper++
			}
		}
	}
	// A subnormal alpha (a review's case: ln of it is inexact in Go on
	// amd64, and the upper bound decided wrongly): P equals alpha here.
	if k, mu, alpha := 80658360.730790809, 80315996.775684699, 3.6665599709170589e-319; tailBelow(k, mu, alpha, math.Log(alpha)) != (upperTail(k, mu) < alpha) {
		t.Errorf("k %v, mu %v, alpha %v: the bounds decide against the function", k, mu, alpha)
	}
	t.Logf("%d points: %d decided by the lower bound, %d by the upper", points, byLower, byUpper)
	if points < 50000 || byLower < points/5 || byUpper < points/5 || byLower+byUpper < points*7/10 {
		t.Errorf("%d points: %d decided by the lower bound, %d by the upper", points, byLower, byUpper)
	}
}

// BenchmarkFind512 times Find on a 512² image of Poisson counts: a
// background of 1–3 photons a pixel (a water ring's range in the
// reference series) and 400 spots of 50–2000 photons.
func BenchmarkFind512(b *testing.B) {
	const W = 512
	rng := rand.New(rand.NewSource(3))
	mean := make([]float64, W*W)
	for i := range mean {
		mean[i] = 1 + 2*float64(i%W)/W
	}
	for n := 0; n < 400; n++ {
		f0, s0, total := rng.Float64()*W, rng.Float64()*W, 50+1950*rng.Float64()
		for s := max(0, int(s0)-4); s < min(W, int(s0)+5); s++ {
			for f := max(0, int(f0)-4); f < min(W, int(f0)+5); f++ {
				d2 := (float64(f)-f0)*(float64(f)-f0) + (float64(s)-s0)*(float64(s)-s0)
				mean[s*W+f] += total * math.Exp(-d2/2) / (2 * math.Pi)
			}
		}
	}
	im := &Image{W: W, H: W, Data: make([]float64, W*W)}
	for i, m := range mean {
		im.Data[i] = poisson(rng, m)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Find(im, Settings{}); err != nil {
			b.Fatal(err)
		}
	}
}
