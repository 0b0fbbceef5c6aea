package app

import (
	"image"
	"image/color"
	"math"
	"math/rand"
	"strconv"
	"testing"
	"time"

	"golang.org/x/image/vector"
)

// TestAxisTicks: the ticks' step, values and labels. Expected values are
// worked by hand from the rule (the smallest step 1, 2 or 5 × 10^e giving at
// most n ticks, e = ⌊log10((hi − lo)/n)⌋; six significant digits; an offset
// at the multiple of 10 steps nearest the middle once the values reach 1e5
// steps).
func TestAxisTicks(t *testing.T) {
	for _, c := range []struct {
		name   string
		lo, hi float64
		n      int
		step   float64
		labels []string
		offset string
	}{
		// (1 − 0)/8 = 0.125: e = −1; 0.1 gives 11 ticks, 0.2 gives 6.
		{"unit", 0, 1, 8, 0.2, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}, ""},
		// The README fit's loss range: 300000/8 = 37500, e = 4; 1e4 and 2e4
		// give 30 and 15 ticks, 5e4 gives 6.
		{"readme fit", -343000, -43000, 8, 5e4, []string{"-300000", "-250000", "-200000", "-150000", "-100000", "-50000"}, ""},
		// Evaluations 1–303 padded by 2 %: 314/10 = 31.4, e = 1; 10 and 20
		// give 31 and 16 ticks, 50 gives 7.
		{"evaluations", -5.04, 309.04, 10, 50, []string{"0", "50", "100", "150", "200", "250", "300"}, ""},
		// A range through 0 whose first multiple of 0.2 is ceil(−0.25) =
		// −0 steps (k0 + 0 is +0: the label is 0, not −0). 1.05/8: e = −1;
		// 0.1 gives 11.
		{"through 0", -0.05, 1, 8, 0.2, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}, ""},
		// 500000–500100: 100/8 = 12.5, e = 1; 10 gives 11 ticks, 20 gives
		// 6; 500100 is 25005 steps from 0, below 1e5: no offset (six digits
		// still tell them apart).
		{"no offset", 500000, 500100, 8, 20, []string{"500000", "500020", "500040", "500060", "500080", "500100"}, ""},
		// 1e6 to 1e6 + 8: e = 0; 1 gives 9 ticks, 2 gives 5, 5e5 steps
		// from 0: offset the multiple of 20 nearest 1000004, 1000000, to
		// 6 − 0 + 1 = 7 digits.
		{"offset", 1e6, 1e6 + 8, 8, 2, []string{"0", "2", "4", "6", "8"}, "loss - 1000000"},
		// A loss of ~5e7 varying in its tenth digit (a DIALS fit's size,
		// before the curve's margins widen it):
		// 0.0162/8 = 0.002025, e = −3; 0.002 gives 9 ticks, 0.005 gives 3
		// (at −…703.965, −.960, −.955). The middle, −49924703.96, is
		// −998494079.2 times 10 steps: the offset is −998494079 × 0.05 =
		// −49924703.95, to 7 − (−3) + 1 = 11 digits.
		{"negative offset", -49924703.9681, -49924703.9519, 8, 0.005, []string{"-0.015", "-0.01", "-0.005"}, "loss + 49924703.95"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newAxisTicks(c.lo, c.hi, c.n, 0, 0)
			if math.Abs(a.step-c.step) > 1e-12*c.step {
				t.Errorf("step %g, want %g", a.step, c.step)
			}
			var got []string
			for _, v := range a.values {
				got = append(got, a.label(v))
			}
			if len(got) != len(c.labels) {
				t.Fatalf("labels %q, want %q", got, c.labels)
			}
			for i := range got {
				if got[i] != c.labels[i] {
					t.Errorf("labels %q, want %q", got, c.labels)
					break
				}
			}
			if c.offset == "" {
				c.offset = "loss"
			}
			if got := a.axisLabel("loss"); got != c.offset {
				t.Errorf("axis label %q, want %q", got, c.offset)
			}
			if w := 7 * len(c.labels[0]); a.width < w {
				t.Errorf("label width %d pixels, below %q's %d", a.width, c.labels[0], w)
			}
		})
	}
}

// TestAxisTicksSpace: with the axis's length given, labels 12 pixels
// apart at least. On 1e6–2e6 (10 ticks at most: e = 5; 1e5 gives 11) a
// step of 2e5 gives labels 1e+06, 1.2e+06, … (six significant digits
// reach 1e6 in exponent form), at most 7 characters, 49 pixels; on 300
// pixels its ticks are 60 apart, below 49 + 12: 5e5 (150 apart) is taken.
func TestAxisTicksSpace(t *testing.T) {
	a := newAxisTicks(1e6, 2e6, 10, 300, 0)
	if a.step != 5e5 || a.width != 49 {
		t.Errorf("step %g, labels %d pixels wide; want 5e5 and 49", a.step, a.width)
	}
	if a = newAxisTicks(1e6, 2e6, 10, 0, 0); a.step != 2e5 {
		t.Errorf("without the length: step %g, want 2e5", a.step)
	}
}

// TestLossCurveImage: a curve from its lowest to its highest loss spans
// the plot area's height less the 5 % margins (396 pixels / 1.1 = 360)
// plus a ring's radius at each end, and a second start's line is dashed
// (fewer pixels of its colour than the first start's, on the same losses).
func TestLossCurveImage(t *testing.T) {
	var r, dashed FitReport
	r.LossKind, r.Method, r.Status = "poisson", "bfgs", "converged"
	for i := 0; i <= 10; i++ {
		h := FitStep{Start: 0, Evaluations: 1 + 10*i, Loss: float64(100 - 10*i)}
		r.History = append(r.History, h)
		h.Start = 1
		dashed.History = append(dashed.History, h)
	}
	img, err := lossCurveImage(&r)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != curveW || b.Dy() != curveH {
		t.Fatalf("size %v", b)
	}
	box, ns := colourBox(img, plotColors[0])
	want := float64(curveBottom-curveTop)/1.1 + 2*curveRing
	if math.Abs(float64(box.Dy())-want) > 3 {
		t.Errorf("the curve spans %d pixels high (%v), want %.0f±3", box.Dy(), box, want)
	}
	if box.Max.X > curveRight || box.Min.Y < curveTop || box.Max.Y > curveBottom {
		t.Errorf("the curve %v leaves the plot area", box)
	}
	// It falls: from the top left (the first evaluation, the largest
	// loss) to the bottom right.
	if top, bottom := rowSpan(img, box.Min.Y+curveRing, plotColors[0]), rowSpan(img, box.Max.Y-1-curveRing, plotColors[0]); !(top.Max.X < box.Min.X+box.Dx()/4 && bottom.Min.X > box.Max.X-box.Dx()/4) {
		t.Errorf("the curve's top row %v, bottom row %v within %v: not falling left to right", top, bottom, box)
	}
	// No stage, no legend: the top right corner is white.
	if _, n := colourBox(img.SubImage(image.Rect(curveRight-200, curveTop+1, curveRight, curveTop+40)).(*image.RGBA), plotColors[0]); n != 0 {
		t.Errorf("%d pixels of the curve's colour where a legend would be", n)
	}
	// With one, its sample line and ring are there.
	named := FitReport{History: append([]FitStep{}, r.History...)}
	for i := range named.History {
		named.History[i].Stage = "full"
	}
	ni, err := lossCurveImage(&named)
	if err != nil {
		t.Fatal(err)
	}
	if _, n := colourBox(ni.SubImage(image.Rect(curveRight-200, curveTop+1, curveRight, curveTop+40)).(*image.RGBA), plotColors[0]); n < 20 {
		t.Errorf("%d pixels of the stage's colour in the legend's corner", n)
	}
	b, err := lossCurveImage(&dashed)
	if err != nil {
		t.Fatal(err)
	}
	if _, nd := colourBox(b, plotColors[0]); !(nd < ns*9/10) {
		t.Errorf("a dashed line has %d pixels of its colour, a solid one %d", nd, ns)
	}
}

// TestLossCurveNoFiniteLoss: a history without a finite loss gives an
// empty frame, not an error; one with a diverged evaluation among finite
// ones (fit.go's finite writes ±Inf as ±MaxFloat64) draws the others.
func TestLossCurveNoFiniteLoss(t *testing.T) {
	r := FitReport{History: []FitStep{{Loss: math.NaN()}, {Loss: math.Inf(1)}, {Loss: math.MaxFloat64}}}
	img, err := lossCurveImage(&r)
	if err != nil {
		t.Fatal(err)
	}
	if _, n := colourBox(img, plotColors[0]); n != 0 {
		t.Errorf("%d pixels of a curve's colour", n)
	}
	r.History = []FitStep{{Evaluations: 1, Loss: 10}, {Evaluations: 2, Loss: finite(math.Inf(1))}, {Evaluations: 3, Loss: 5},
		{Evaluations: 4, Loss: finite(math.Inf(-1))}}
	if img, err = lossCurveImage(&r); err != nil {
		t.Fatal(err)
	}
	if _, n := colourBox(img, plotColors[0]); n == 0 {
		t.Error("no curve")
	}
}

// TestAxisTicksHuge: a flat loss near the largest float64 (its range is
// its 1e-9 margin): the offset's middle does not overflow (lo + hi
// would). 2e299/8: e = 298; 1e298 and 2e298 give 21 and 11 ticks, 5e298
// 5; the offset 1.5e308 (3e8 × 10 steps), to 308 − 298 + 1 = 11 digits
// (trailing zeros dropped).
func TestAxisTicksHuge(t *testing.T) {
	a := newAxisTicks(1.5e308-1e299, 1.5e308+1e299, 8, 0, 0)
	if got := a.axisLabel("loss"); got != "loss - 1.5e+308" {
		t.Errorf("axis label %q", got)
	}
	for _, v := range a.values {
		if x, err := strconv.ParseFloat(a.label(v), 64); err != nil || math.Abs(x) > 1.1e299 {
			t.Errorf("label %q", a.label(v))
		}
	}
}

// TestLossCurveRightLabel: evaluations 1–9810 take ticks to 10000, at the
// plot's right edge (the 2 % margin ends at 10006); "10000", centred
// there, would pass the image's edge: it is moved in, so the image's
// last column stays white in the labels' band.
func TestLossCurveRightLabel(t *testing.T) {
	r := FitReport{History: []FitStep{{Evaluations: 1, Loss: 1}, {Evaluations: 9810, Loss: 0}}}
	img, err := lossCurveImage(&r)
	if err != nil {
		t.Fatal(err)
	}
	y0 := curveBottom + curveTick + 3
	for y := y0; y < y0+curveFace.Height; y++ {
		if c := img.RGBAAt(curveW-1, y); c != (color.RGBA{255, 255, 255, 255}) {
			t.Fatalf("pixel (%d, %d) is %v: a label runs off the image", curveW-1, y, c)
		}
	}
}

// TestDashPattern: a horizontal dashed line 2 wide along y = 10.5 (pixel
// row 10 fully covered where it is drawn) is on for 6 pixels and off
// for 4, from x = 0, and the same whether drawn as one segment or as 40
// of 2.5 pixels (the pattern runs on across points).
func TestDashPattern(t *testing.T) {
	draw := func(pts [][2]float32) []bool {
		z := vector.NewRasterizer(100, 20)
		strokeLine(z, pts, 2, 6)
		a := image.NewAlpha(image.Rect(0, 0, 100, 20))
		z.Draw(a, a.Bounds(), image.Opaque, image.Point{})
		on := make([]bool, 100)
		for x := range on {
			on[x] = a.AlphaAt(x, 10).A > 127
		}
		return on
	}
	one := draw([][2]float32{{0, 10.5}, {100, 10.5}})
	var pts [][2]float32
	for i := 0; i <= 40; i++ {
		pts = append(pts, [2]float32{2.5 * float32(i), 10.5})
	}
	many := draw(pts)
	for x := range one {
		if want := x%10 < 6; one[x] != want || many[x] != want {
			t.Fatalf("pixel %d: one segment %v, 40 segments %v, want %v", x, one[x], many[x], want)
		}
	}
}

// colourBox returns the bounding box of img's pixels at least half
// covered by c over white (each channel 255 − a·(255 − c) within 8, a ≥
// 0.5, a from the channel where c is darkest), and how many there are.
func colourBox(img *image.RGBA, c color.RGBA) (image.Rectangle, int) {
	var box image.Rectangle
	n := 0
	ch := func(p color.RGBA) [3]float64 { return [3]float64{float64(p.R), float64(p.G), float64(p.B)} }
	cv := ch(c)
	k := 0
	for i := range cv {
		if cv[i] < cv[k] {
			k = i
		}
	}
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
			pv := ch(img.RGBAAt(x, y))
			a := (255 - pv[k]) / (255 - cv[k])
			ok := a >= 0.5
			for i := range pv {
				ok = ok && math.Abs(pv[i]-(255-a*(255-cv[i]))) <= 8
			}
			if ok {
				p := image.Rect(x, y, x+1, y+1)
				if n == 0 {
					box = p
				} else {
					box = box.Union(p)
				}
				n++
			}
		}
	}
	return box, n
}

// TestRingOverLine: a ring (outer radius 5, width 2, about (10, 10)) on a
// horizontal line 2 wide through its centre: the ring's hole is clear
// off the line, and the line and the ring both paint where they cross
// (shapes of opposite windings would cancel there). Pixel (x, y) covers
// [x, x+1) × [y, y+1).
func TestRingOverLine(t *testing.T) {
	z := vector.NewRasterizer(20, 20)
	segment(z, [2]float32{0, 10}, [2]float32{20, 10}, 2)
	ring(z, [2]float32{10, 10}, 5, 2)
	a := image.NewAlpha(image.Rect(0, 0, 20, 20))
	z.Draw(a, a.Bounds(), image.Opaque, image.Point{})
	for _, c := range []struct {
		x, y   int
		lo, hi uint8
		what   string
	}{
		{13, 9, 255, 255, "line and ring (centre 3.5 from the ring's, 0.5 from the line's)"},
		{6, 10, 255, 255, "line and ring, left"},
		{10, 9, 255, 255, "line in the hole"},
		{10, 8, 0, 0, "hole off the line (centre 1.5 from the ring's)"},
		{10, 6, 200, 255, "ring off the line (centre 3.5 from the ring's)"},
		{10, 2, 0, 0, "outside the ring"},
	} {
		if v := a.AlphaAt(c.x, c.y).A; v < c.lo || v > c.hi {
			t.Errorf("%s: pixel (%d, %d) covered %d, want %d–%d", c.what, c.x, c.y, v, c.lo, c.hi)
		}
	}
}

// TestAxisTicksFar: values 1e17 steps from 0, where a float counter's
// k + 1 is k (the curve's margins keep its axes within ~1e10 steps):
// the ticks end (a float counter hangs here: the test times out).
func TestAxisTicksFar(t *testing.T) {
	a := ticksAt(1e20, 1e20+1e4, 1e3)
	if len(a.values) == 0 || len(a.values) > 1001 {
		t.Errorf("%d ticks", len(a.values))
	}
}

// rowSpan is the span of pixels of colour c (colourBox's rule) in row y.
func rowSpan(img *image.RGBA, y int, c color.RGBA) image.Rectangle {
	b, _ := colourBox(img.SubImage(image.Rect(img.Rect.Min.X, y, img.Rect.Max.X, y+1)).(*image.RGBA), c)
	return b
}

// TestAxisTicksWhole: the evaluations' axis takes whole steps. Over
// 0.5–2.5 (one or two evaluations) 0.2 would be the step (e = −1; 0.1
// gives 20 ticks); at least 1 it is 1: ticks 1 and 2.
func TestAxisTicksWhole(t *testing.T) {
	a := newAxisTicks(0.5, 2.5, 10, 600, 1)
	if a.step != 1 || len(a.values) != 2 || a.values[0] != 1 {
		t.Errorf("step %g, ticks %v; want 1 and [1 2]", a.step, a.values)
	}
}

// TestStrokeDashEnds: dashed polylines end. The first is a reviewer's
// case: its pattern's phase, summed from the segments' lengths in float32,
// stopped a hair short of a dash's end 16 pixels into the next segment,
// where t + (on − phase) rounded back to t, and the loop never ended. The
// others are 2000 random polylines of 20 points on the curve's canvas
// (seeded).
func TestStrokeDashEnds(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		z := vector.NewRasterizer(curveW, curveH)
		strokeLine(z, [][2]float32{{0, 0}, {7.86, 0}, {107.86, 0}}, 1.5, 6)
		rng := rand.New(rand.NewSource(1))
		for i := 0; i < 2000; i++ {
			pts := make([][2]float32, 20)
			for j := range pts {
				pts[j] = [2]float32{float32(rng.Float64() * curveW), float32(rng.Float64() * curveH)}
			}
			z.Reset(curveW, curveH)
			strokeLine(z, pts, 1.5, 6)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("strokeLine did not end within 20 s")
	}
}
