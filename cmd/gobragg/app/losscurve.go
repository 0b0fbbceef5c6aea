package app

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"

	"github.com/gobragg/gobragg/models/formats"
)

// The loss curve is drawn here with golang.org/x/image's anti-aliased
// rasterizer and its 7×13 bitmap font rather than with gonum/plot: that
// package parses its twelve TrueType fonts when the program starts, which
// every gobragg process paid (~1 ms of a 24 ms cubic 1024² simulate) for a
// picture only fit draws.

// lossCurve writes the loss against the evaluation count to path as a
// PNG: one line per start and stage, a colour per stage (in the legend
// once), dashed after the first start, a ring at each iteration. Losses
// that are not finite are left out. When the losses' range is too small
// against their size for six-digit tick labels to differ, the y axis is
// labelled as the loss less a round offset it names.
func lossCurve(path string, report *FitReport) error {
	img, err := lossCurveImage(report)
	if err != nil {
		return err
	}
	return formats.WriteFileAtomic(path, func(w io.Writer) error {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
	})
}

// The loss curve's size and layout, in pixels.
const (
	curveW, curveH = 720, 480
	curveTop       = 36          // the plot area's top edge
	curveRight     = curveW - 16 // its right edge
	curveBottom    = curveH - 48 // its bottom edge
	curveTick      = 5           // tick marks' length, outside the plot area
	curveRing      = 3           // the rings' radius
)

var (
	plotColors = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255},
		{214, 39, 40, 255}, {148, 103, 189, 255}}
	curveGrid  = color.RGBA{220, 220, 220, 255}
	curveFrame = color.RGBA{0, 0, 0, 255}
	curveFace  = basicfont.Face7x13 // every character 7 pixels wide
)

// curveSeries is one start's stage: its (evaluations, loss) points.
type curveSeries struct {
	start  int
	stage  string
	colour color.RGBA
	x, y   []float64
}

// lossCurveImage draws the loss curve (lossCurve).
func lossCurveImage(report *FitReport) (*image.RGBA, error) {
	type key struct {
		start int
		stage string
	}
	var series []*curveSeries
	index := map[key]int{}
	colour := map[string]int{}
	xlo, xhi, lo, hi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, h := range report.History {
		if !(math.Abs(h.Loss) < math.MaxFloat64) {
			continue // fit.go's finite writes ±Inf as ±MaxFloat64
		}
		k := key{h.Start, h.Stage}
		i, ok := index[k]
		if !ok {
			if _, ok := colour[h.Stage]; !ok {
				colour[h.Stage] = len(colour)
			}
			i = len(series)
			index[k] = i
			series = append(series, &curveSeries{start: h.Start, stage: h.Stage,
				colour: plotColors[colour[h.Stage]%len(plotColors)]})
		}
		x := float64(h.Evaluations)
		series[i].x, series[i].y = append(series[i].x, x), append(series[i].y, h.Loss)
		xlo, xhi, lo, hi = min(xlo, x), max(xhi, x), min(lo, h.Loss), max(hi, h.Loss)
	}
	if len(series) == 0 {
		xlo, xhi, lo, hi = 0, 1, 0, 0
	}
	// A margin of 5 % of the range (at least 1e-9 of the values' size, so
	// that a flat loss has a range), 2 % on the evaluations.
	pad := math.Max((hi-lo)*0.05, math.Max(math.Max(math.Abs(hi), math.Abs(lo)), 1)*1e-9)
	ylo, yhi := lo-pad, hi+pad
	if !(yhi > ylo) || math.IsInf(yhi-ylo, 0) {
		return nil, fmt.Errorf("plotting the loss curve: no usable range (%g to %g)", lo, hi)
	}
	xpad := math.Max((xhi-xlo)*0.02, 0.5)
	xlo, xhi = xlo-xpad, xhi+xpad

	yt := newAxisTicks(ylo, yhi, 8, 0, 0)
	left := 8 + curveFace.Height + 6 + yt.width + curveTick + 2 // rotated label, tick labels, ticks
	xt := newAxisTicks(xlo, xhi, 10, curveRight-left, 1)
	px := func(x float64) float32 { return float32(left) + float32((x-xlo)/(xhi-xlo))*float32(curveRight-left) }
	py := func(y float64) float32 {
		return float32(curveBottom) - float32((y-ylo)/(yhi-ylo))*float32(curveBottom-curveTop)
	}

	img := image.NewRGBA(image.Rect(0, 0, curveW, curveH))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	z := vector.NewRasterizer(curveW, curveH)

	// Grid, frame and ticks, with their labels.
	for _, v := range xt.values {
		x := int(math.Round(float64(px(v))))
		fillRect(img, x, curveTop+1, x+1, curveBottom, curveGrid)
		fillRect(img, x, curveBottom, x+1, curveBottom+curveTick, curveFrame)
		s := xt.label(v)
		// Centred on its tick, but within the image.
		drawText(img, s, min(x-textWidth(s)/2, curveW-2-textWidth(s)), curveBottom+curveTick+3+curveFace.Ascent, curveFrame)
	}
	for _, v := range yt.values {
		y := int(math.Round(float64(py(v))))
		fillRect(img, left+1, y, curveRight, y+1, curveGrid)
		fillRect(img, left-curveTick, y, left, y+1, curveFrame)
		s := yt.label(v)
		drawText(img, s, left-curveTick-2-textWidth(s), y+curveFace.Ascent/2, curveFrame)
	}
	outline(img, left, curveTop, curveRight+1, curveBottom+1, curveFrame)

	title := fmt.Sprintf("%s loss (%s), %s", report.LossKind, report.Method, report.Status)
	drawText(img, title, (curveW-textWidth(title))/2, 8+curveFace.Ascent, curveFrame)
	xlabel, ylabel := xt.axisLabel("evaluations"), yt.axisLabel("loss")
	drawText(img, xlabel, (left+curveRight-textWidth(xlabel))/2, curveH-10, curveFrame)
	drawTextUp(img, ylabel, 8, (curveTop+curveBottom+textWidth(ylabel))/2, curveFrame)

	// The lines and their rings, a series at a time (one colour each).
	for _, s := range series {
		z.Reset(curveW, curveH)
		pts := make([][2]float32, len(s.x))
		for i := range s.x {
			pts[i] = [2]float32{px(s.x[i]), py(s.y[i])}
		}
		dash := float32(0)
		if s.start > 0 {
			dash = 6
		}
		strokeLine(z, pts, 1.5, dash)
		for _, p := range pts {
			ring(z, p, curveRing, 1)
		}
		z.Draw(img, img.Bounds(), image.NewUniform(s.colour), image.Point{})
	}

	// The legend: each stage of the first start, top right.
	type entry struct {
		colour color.RGBA
		name   string // cut to fit
	}
	var legend []entry
	wide := 0
	most := (curveRight - left) / 2 / curveFace.Advance // characters a name may take
	for _, s := range series {
		if s.start == 0 && s.stage != "" {
			t := s.stage
			if r := []rune(t); len(r) > most {
				t = string(r[:most-3]) + "..."
			}
			legend = append(legend, entry{s.colour, t})
			wide = max(wide, textWidth(t))
		}
	}
	if len(legend) > 0 {
		const row, sample = 16, 24
		x1, y0 := curveRight-6, curveTop+6
		x0, y1 := x1-(8+sample+8+wide+8), y0+row*len(legend)+6
		fillRect(img, x0, y0, x1, y1, color.RGBA{255, 255, 255, 255})
		outline(img, x0, y0, x1, y1, curveGrid)
		for i, e := range legend {
			yc := float32(y0 + 3 + row*i + row/2)
			z.Reset(curveW, curveH)
			strokeLine(z, [][2]float32{{float32(x0 + 8), yc}, {float32(x0 + 8 + sample), yc}}, 1.5, 0)
			ring(z, [2]float32{float32(x0+8) + sample/2, yc}, curveRing, 1)
			z.Draw(img, img.Bounds(), image.NewUniform(e.colour), image.Point{})
			drawText(img, e.name, x0+8+sample+8, int(yc)+curveFace.Ascent/2, curveFrame)
		}
	}
	return img, nil
}

// axisTicks are an axis's ticks: multiples of a step of 1, 2 or 5 × 10^e,
// labelled to six significant digits, less offset where the values are too
// large against the step for those to differ.
type axisTicks struct {
	values     []float64
	step       float64
	offset     float64 // subtracted from the values in the labels (0: none)
	offsetText string  // |offset|, to the step's digits
	width      int     // of the widest label, pixels
}

// newAxisTicks returns at most n ticks within [lo, hi] at the smallest
// such step of at least least; with space > 0 (the axis's length in
// pixels, labels side by side) also at most as many as leave 12 pixels
// between labels.
func newAxisTicks(lo, hi float64, n, space int, least float64) axisTicks {
	e := math.Floor(math.Log10((hi - lo) / float64(n)))
	for _, m := range []float64{1, 2, 5, 10, 20, 50, 100} {
		step := m * math.Pow(10, e)
		if step < least {
			continue
		}
		t := ticksAt(lo, hi, step)
		if len(t.values) > n {
			continue
		}
		if space > 0 && len(t.values) > 1 && float64(t.width+12) > float64(space)*step/(hi-lo) {
			continue
		}
		return t
	}
	return ticksAt(lo, hi, max(100*math.Pow(10, e), least))
}

// ticksAt returns the multiples of step within [lo, hi], labelled.
func ticksAt(lo, hi, step float64) axisTicks {
	t := axisTicks{step: step}
	// Counted by an integer, so that the loop ends (a float counter k++
	// stops moving past 2^53), and at most 1001 of them. The callers'
	// ranges hold about ten steps.
	k0, k1 := math.Ceil(lo/step), math.Floor(hi/step)
	for i := 0; i <= 1000 && k0+float64(i) <= k1; i++ {
		t.values = append(t.values, (k0+float64(i))*step)
	}
	// Six significant digits tell multiples of step apart below 1e5 steps
	// from 0; beyond, the labels are offsets from the multiple of 10 steps
	// nearest the middle (lo/2 + hi/2: lo + hi may overflow).
	if big := math.Max(math.Abs(lo), math.Abs(hi)); big/step >= 1e5 {
		t.offset = math.Round((lo/2+hi/2)/(10*step)) * 10 * step
		digits := int(math.Floor(math.Log10(math.Abs(t.offset)))-math.Floor(math.Log10(step))) + 1
		t.offsetText = strconv.FormatFloat(math.Abs(t.offset), 'g', max(digits, 1), 64)
	}
	for _, v := range t.values {
		t.width = max(t.width, textWidth(t.label(v)))
	}
	return t
}

// label returns v's tick label: v − offset to six significant digits.
func (t axisTicks) label(v float64) string {
	return strconv.FormatFloat(v-t.offset, 'g', 6, 64)
}

// axisLabel returns the axis's title: name, less or plus the offset.
func (t axisTicks) axisLabel(name string) string {
	switch {
	case t.offset > 0:
		return name + " - " + t.offsetText
	case t.offset < 0:
		return name + " + " + t.offsetText
	}
	return name
}

// textWidth is s's width in curveFace, pixels.
func textWidth(s string) int {
	return font.MeasureString(curveFace, s).Ceil()
}

// drawText draws s with its left end at x and its baseline at y.
func drawText(dst draw.Image, s string, x, y int, c color.Color) {
	d := font.Drawer{Dst: dst, Src: image.NewUniform(c), Face: curveFace, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// drawTextUp draws s turned a quarter to the left (reading upwards): the
// text's box, w × 13 pixels before the turn, becomes 13 × w with its
// top-left corner at (x, y − w + 1) and the text's start at the bottom.
func drawTextUp(dst draw.Image, s string, x, y int, c color.Color) {
	w, h := textWidth(s), curveFace.Height
	a := image.NewAlpha(image.Rect(0, 0, w, h))
	d := font.Drawer{Dst: a, Src: image.Opaque, Face: curveFace, Dot: fixed.P(0, curveFace.Ascent)}
	d.DrawString(s)
	up := image.NewAlpha(image.Rect(0, 0, h, w)) // (i, j) in the text at (j, w − 1 − i)
	for i := 0; i < w; i++ {
		for j := 0; j < h; j++ {
			up.SetAlpha(j, w-1-i, a.AlphaAt(i, j))
		}
	}
	draw.DrawMask(dst, image.Rect(x, y-w+1, x+h, y+1), image.NewUniform(c), image.Point{}, up, image.Point{}, draw.Over)
}

// fillRect fills [x0, x1) × [y0, y1) with c.
func fillRect(dst *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	draw.Draw(dst, image.Rect(x0, y0, x1, y1), image.NewUniform(c), image.Point{}, draw.Src)
}

// outline draws the one-pixel border of [x0, x1) × [y0, y1) in c.
func outline(dst *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	fillRect(dst, x0, y0, x1, y0+1, c)
	fillRect(dst, x0, y1-1, x1, y1, c)
	fillRect(dst, x0, y0, x0+1, y1, c)
	fillRect(dst, x1-1, y0, x1, y1, c)
}

// strokeLine adds the polyline pts, width w, to z's path: each segment a
// rectangle, every one of the same winding so that where they overlap the
// rasterizer's coverage (clamped at 1) does not cancel. With dash > 0
// only alternate lengths dash on, 2/3 dash off are drawn, the pattern
// running on across the points.
func strokeLine(z *vector.Rasterizer, pts [][2]float32, w, dash float32) {
	on, off := float64(dash), float64(dash)*2/3
	phase := 0.0 // how far into the pattern a segment starts
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if dash <= 0 {
			segment(z, a, b, w)
			continue
		}
		dx, dy := float64(b[0]-a[0]), float64(b[1]-a[1])
		l := math.Hypot(dx, dy)
		at := func(t float64) [2]float32 {
			return [2]float32{a[0] + float32(dx*t/l), a[1] + float32(dy*t/l)}
		}
		// Each turn either ends the segment or sets the phase to a
		// boundary of the pattern (not by adding lengths, whose rounding
		// could leave it a hair short of one: that loop never ended).
		for t := 0.0; t < l; {
			if phase < on {
				end := t + on - phase
				if end >= l {
					segment(z, at(t), b, w)
					phase += l - t
					break
				}
				segment(z, at(t), at(end), w)
				t, phase = end, on
			} else {
				end := t + on + off - phase
				if end >= l {
					phase += l - t
					break
				}
				t, phase = end, 0
			}
		}
	}
}

// segment adds the rectangle of width w about a–b to z's path, with a
// negative signed (shoelace) area in image coordinates, as ring's outer
// circle: the rasterizer adds the windings of overlapping shapes, and
// shapes of opposite signs would cancel.
func segment(z *vector.Rasterizer, a, b [2]float32, w float32) {
	dx, dy := b[0]-a[0], b[1]-a[1]
	l := float32(math.Hypot(float64(dx), float64(dy)))
	if l == 0 {
		return
	}
	// With n = (−dy, dx)·w/(2l), a+n → b+n → b−n → a−n has the shoelace
	// sum −2·l·w (for a = (0, 0), b = (l, 0): (0, w/2), (l, w/2),
	// (l, −w/2), (0, −w/2)).
	nx, ny := -dy/l*w/2, dx/l*w/2
	z.MoveTo(a[0]+nx, a[1]+ny)
	z.LineTo(b[0]+nx, b[1]+ny)
	z.LineTo(b[0]-nx, b[1]-ny)
	z.LineTo(a[0]-nx, a[1]-ny)
	z.ClosePath()
}

// ring adds a ring of outer radius r and width w about c to z's path: the
// outer circle with segment's sign of area (angles decreasing: cos, sin
// of −t), the inner one the other way, so that the ring's hole is clear
// of the ring but not of a line through it.
func ring(z *vector.Rasterizer, c [2]float32, r, w float32) {
	circle := func(r, sign float32) {
		for i, u := range unitCircle {
			x, y := c[0]+r*u[0], c[1]+sign*r*u[1]
			if i == 0 {
				z.MoveTo(x, y)
			} else {
				z.LineTo(x, y)
			}
		}
		z.ClosePath()
	}
	circle(r, -1)
	circle(r-w, 1)
}

// unitCircle is a 16-gon's corners (cos, sin of 2πi/16, i = 0…16) for
// ring (sin(−t) = −sin t: the sign picks the way round).
var unitCircle = func() (u [17][2]float32) {
	for i := range u {
		t := 2 * math.Pi * float64(i) / 16
		u[i] = [2]float32{float32(math.Cos(t)), float32(math.Sin(t))}
	}
	return u
}()
