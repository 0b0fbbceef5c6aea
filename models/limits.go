package models

import (
	"fmt"
	"math"
)

// Limits bound what a model may cost, so that a mistyped number fails at
// once with a line naming the product instead of running for hours or
// exhausting memory. Both are checked before the work starts (Model),
// from the counts the command line implies.
type Limits struct {
	// MaxWork bounds the pixel terms: detector pixels × sub-pixels ×
	// sensor layers × sources × φ steps × mosaic domains, the number of
	// times the innermost physics runs. 0: DefaultMaxWork.
	MaxWork float64
	// MaxMemory bounds the estimated memory in bytes (see Cost). 0:
	// DefaultMaxMemory.
	MaxMemory float64
}

const (
	// DefaultMaxWork is about five minutes of one core of the development
	// machine (3·10⁷ terms/s): 4096² pixels × 100 mosaic domains × 5 φ
	// steps pass; -phisteps 1000000 at 128² does not.
	DefaultMaxWork = 1e10
	// DefaultMaxMemory keeps a run, with the Go runtime and its compiled
	// program, under 1 GB of resident memory: an 8192² simulation passes, a
	// 645³ structure-factor grid (from a two-line HKL file) does not.
	DefaultMaxMemory = 768 << 20
)

func (l Limits) work() float64 {
	if l.MaxWork > 0 {
		return l.MaxWork
	}
	return DefaultMaxWork
}

func (l Limits) memory() float64 {
	if l.MaxMemory > 0 {
		return l.MaxMemory
	}
	return DefaultMaxMemory
}

// Memory estimates per element (bytes), measured as peak resident memory
// over a range of sizes (the image's bytes come from the command:
// PixelBytes).
const (
	// hklCellBytes: the grid and its defaulted flags (9), the table the
	// kernels read (its Marked copy, 8), their fill of it with the
	// default F and the bits that flag its cells without data (16; made
	// once per table and default F: physics/ftable.go), and some room.
	hklCellBytes = 40
	// sourceBytes, orientationBytes: the model's entry, the kernel's table
	// row (the lane kernels' values repeated across lanes) and its derived
	// per-run state, a gradient run's: its per-source scratch doubles a
	// simulation's cost (peak resident memory, 8² pixels, 50,000 to
	// 200,000 of them: a source 1.1 kB simulated and 2.5 kB in a
	// gradient, an orientation 0.5 and 0.8 kB).
	sourceBytes      = 2600
	orientationBytes = 800
	// maskPixelBytes: the -mask file's text, pixels and float64 copy.
	maskPixelBytes = 12
	// GradientPixelBytes is the default image cost per pixel: a gradient
	// program's float64 image, observed image, weights and row buffers.
	GradientPixelBytes = 48
	// SimulatePixelBytes: simulate's float32 image plus the SMV and noise
	// images it may write.
	SimulatePixelBytes = 10
)

// Cost is what a model will take: Work in pixel terms (see Limits) and
// Memory in bytes, with the factors for messages.
type Cost struct {
	Work, Memory float64
	// WorkTerms spells the work's product: "256×256 pixels × 2² sub-pixels
	// × 1 layer × 1 source × 1000000 φ steps × 1 domain".
	WorkTerms string
}

// Cost estimates m's work and memory; pixelBytes is the image's cost per
// pixel (SimulatePixelBytes, GradientPixelBytes), hklCells the size of a
// structure-factor grid not yet in m (0 if none). Products are formed in
// float64, so no count overflows.
func (m *Model) Cost(pixelBytes float64, hklCells int) Cost {
	d, c := m.Detector, m.Crystal
	pix := float64(d.FPixels) * float64(d.SPixels)
	over := float64(d.Oversample)
	layers := float64(max(d.ThickSteps, 1))
	sources := float64(max(len(m.Beam.Sources), 1))
	phi := float64(max(c.PhiSteps, 1))
	domains := float64(max(len(c.Domains), 1))
	var k Cost
	k.Work = pix * over * over * layers * sources * phi * domains
	k.WorkTerms = fmt.Sprintf("%d×%d pixels × %d² sub-pixels × %d %s × %d %s × %d φ %s × %d %s",
		d.FPixels, d.SPixels, d.Oversample, int(layers), plural(layers, "layer"), int(sources), plural(sources, "source"),
		int(phi), plural(phi, "step"), int(domains), plural(domains, "domain"))
	if c.HKL != nil {
		hklCells += len(c.HKL.F)
	}
	k.Memory = pix*pixelBytes + float64(hklCells)*hklCellBytes + sources*sourceBytes + phi*domains*orientationBytes
	if d.Mask != nil {
		k.Memory += pix * maskPixelBytes
	}
	return k
}

func plural(n float64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// CheckWork refuses a model whose work exceeds the limit.
func (m *Model) CheckWork(l Limits) error {
	k := m.Cost(0, 0)
	if k.Work > l.work() {
		return fmt.Errorf("models: %s = %.3g pixel terms, more than the %.3g allowed (about %s of one core); give -max_work %g to run it anyway",
			k.WorkTerms, k.Work, l.work(), duration(k.Work/3e7), roundUp(k.Work))
	}
	return nil
}

// memoryLeft is the memory budget left for a structure-factor grid once
// the rest of m is counted, in cells.
func (m *Model) hklCellsLeft(l Limits, pixelBytes float64) int {
	left := (l.memory() - m.Cost(pixelBytes, 0).Memory) / hklCellBytes
	return int(math.Max(0, math.Min(left, math.MaxInt32)))
}

// CheckMemory refuses a model whose estimated memory exceeds the limit.
func (m *Model) CheckMemory(l Limits, pixelBytes float64) error {
	k := m.Cost(pixelBytes, 0)
	if k.Memory > l.memory() {
		return fmt.Errorf("models: this run needs about %s of memory (%d×%d pixels at %g bytes, %s), more than the %s allowed; give -max_memory %.0f (MB) to run it anyway",
			mb(k.Memory), m.Detector.FPixels, m.Detector.SPixels, pixelBytes, m.tablesNote(), mb(l.memory()), math.Ceil(k.Memory/(1<<20)))
	}
	return nil
}

// tablesNote says which tables a memory estimate counts.
func (m *Model) tablesNote() string {
	s := fmt.Sprintf("%d sources, %d orientations", len(m.Beam.Sources), max(m.Crystal.PhiSteps, 1)*len(m.Crystal.Domains))
	if g := m.Crystal.HKL; g != nil {
		s += fmt.Sprintf(", %d structure-factor cells", len(g.F))
	}
	return s
}

// roundUp rounds x > 0 up to two significant digits.
func roundUp(x float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(x))-1)
	return math.Ceil(x/e) * e
}

func mb(b float64) string { return fmt.Sprintf("%.0f MB", b/(1<<20)) }

// duration spells seconds roughly.
func duration(s float64) string {
	switch {
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.0f min", s/60)
	case s < 2*86400:
		return fmt.Sprintf("%.0f h", s/3600)
	}
	return fmt.Sprintf("%.0f days", s/86400)
}

// maxCount is the largest count (steps, pixels per side) a float may
// turn into before the products above are checked.
const maxCount = 1 << 31

// countOf turns a non-negative float count into an int, saturating at
// maxCount (NaN gives maxCount too), so that an absurd range/step ratio
// becomes a large count that a limit then refuses, never a wrapped or
// undefined conversion.
func countOf(x float64) int {
	if !(x < maxCount) {
		return maxCount
	}
	if x < 0 {
		return 0
	}
	return int(x)
}
