package physics

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gobragg/gobragg/models"
)

// Layout of the packed parameter vector that the pixel op reads. All
// lengths in metres, angles in radians; every entry is continuous.
const (
	PPix0      = 0  // detector origin (corner of pixel 0,0), 3 values
	PFdet      = 3  // fast-axis unit vector
	PSdet      = 6  // slow-axis unit vector
	PObs       = 9  // detector normal
	PCellA     = 12 // real-space a (after misset), before φ and mosaic
	PCellB     = 15 // real-space b
	PCellC     = 18 // real-space c
	PAStar     = 21 // reciprocal a* in Å⁻¹ (for the non-square shapes)
	PBStar     = 24
	PCStar     = 27
	PLambda    = 30 // central wavelength λ0
	PFluence   = 31 // photons/m²
	PKahn      = 32 // Kahn polarization factor
	PNa        = 33 // unit cells along a
	PNb        = 34
	PNc        = 35
	PDefaultF  = 36 // structure factor outside the table
	PPixel     = 37 // pixel pitch
	PPhi0      = 38 // spindle angle of the first φ step
	PPhiStep   = 39 // φ step
	PMosaic    = 40 // mosaic spread (angular radius of the cap)
	PFudge     = 41 // shape fudge factor
	PThickStep = 42 // sensor layer thickness
	PMu        = 43 // sensor attenuation coefficient, 1/m
	PDmin      = 44 // resolution cut-off d_min (0: none)
	PIbg       = 45 // water background seed of the accumulator
	PDistance  = 46 // sample–detector distance along the beam (curved detector radius)
	NParams    = 47
)

// generalOnly makes every kernel take the general loops (tests compare
// them with the shortcuts).
var generalOnly bool

// Rows of the source and mosaic tables.
const (
	SourceCols = 4 // incident unit vector (source → sample), λ/λ0
	MosaicCols = 4 // rotation axis, angle fraction F (angle = F·spread)
)

// ThomsonSq is the squared classical electron radius r_e² in m², the value
// the reference uses (nanoBragg.c r_e_sqr).
const ThomsonSq = 7.94079248018965e-30

// Shape is the crystal's lattice-transform model.
type Shape int

// The reference's shapes.
const (
	Square Shape = iota // parallelepiped: Π sincg(πh, N)
	Round               // ellipsoid: sinc3 of the hkl-space radius
	Gauss               // Gaussian spots
	Tophat              // flat-topped spots, no inter-Bragg maxima
)

// Config is the structural part of a pixel computation: everything that
// decides loop shapes and branches. Two simulations with equal Configs
// share one compiled program.
type Config struct {
	FPixels, SPixels int
	Oversample       int
	PhiSteps         int // φ steps (≥ 1)
	Domains          int // mosaic domains (≥ 1)
	Sources          int // rows of the source table (≥ 1)
	ThickSteps       int // sensor layers (≥ 1)
	Shape            Shape
	PointPixel       bool // ω = 1/R² instead of the pixel's solid angle
	NoPolar          bool // polarization factor fixed at 1
	Curved           bool // every pixel at the same distance from the sample
	Thick            bool // the sensor has a thickness (capture fractions)
	Water            bool // a water background is present (keeps zero-F_latt terms)
	Mosaic           bool // the mosaic spread is non-zero: apply the domain rotations
	OversampleOmega  bool // ω per sub-pixel, multiplied into the running sum
	OversamplePolar  bool // polarization per sub-pixel, likewise
	OversampleThick  bool // capture fraction per sub-pixel, likewise
	// Incident beam direction (unit), E-vector reference axis of the Kahn
	// polarization model, and spindle axis (unit).
	Beam, PolarAxis, Spindle [3]float64
	// ROI: inclusive pixel bounds; pixels outside are not rendered.
	ROIFMin, ROIFMax, ROISMin, ROISMax int
	HasMask                            bool // render only pixels whose mask value is non-zero
	// Interpolate selects tricubic interpolation of structure factors
	// (with the reference's switch-off at the first out-of-range point).
	Interpolate bool
	// Float32 stores the image in float32, as the reference's float image
	// (each pixel's sums are float64 either way); forward runs only.
	Float32 bool
	// Structure-factor table bounds (inclusive); HasHKL false means every
	// reflection has DefaultF.
	HasHKL                             bool
	HMin, HMax, KMin, KMax, LMin, LMax int
	// CrystalOnly: gradients by the crystal's parameters alone (crystalParam:
	// its real and reciprocal axes, φ and the mosaic spread) and by the
	// fluence and the water background's seed (a fit's scale: two sums
	// over the pixels), the others' 0, computed faster where the terms
	// run on vector lanes: without the sums the others take (the
	// derivatives by the direction, N and the default F, the detector's
	// and the beam's factors). These are the same bits as without it.
	CrystalOnly bool
	// NoN and NoDefaultF: the gradients by N (Na, Nb, Nc) and by the
	// default F are not wanted (a fit that does not refine them): their
	// entries are 0, and the terms that run on vector lanes leave out
	// their sums (the derivative by N is a tenth of the mosaic
	// gradient). The other entries are the same bits as without them.
	NoN, NoDefaultF bool
	// NoGeometry: the gradients by the detector's and the beam's
	// parameters are not wanted, only the crystal's, N's, the default
	// F's, the fluence's and the water seed's (geometryFreeParam; a fit of
	// the crystal and its size and scale): the others' entries are 0, and
	// the loss rows leave out what only they need, as CrystalOnly does
	// (σ, the polarization's and the direction's adjoints), keeping the
	// sums of N and the default F. The kept entries are the same bits as
	// without it.
	NoGeometry bool
}

// wants reports whether the gradient's entry for packed parameter i is
// wanted: not one that CrystalOnly, NoGeometry, NoN or NoDefaultF leaves
// out.
func (c *Config) wants(i int) bool {
	switch {
	case c.CrystalOnly && !crystalParam(i), c.NoGeometry && !geometryFreeParam(i):
		return false
	case i == PNa || i == PNb || i == PNc:
		return !c.NoN
	case i == PDefaultF:
		return !c.NoDefaultF
	}
	return true
}

// noGeometry reports whether the loss rows leave out the detector's and
// the beam's sums (CrystalOnly or NoGeometry), noN whether they leave out
// N's (CrystalOnly or NoN).
func (c *Config) noGeometry() bool { return !c.wants(PPix0) }
func (c *Config) noN() bool        { return !c.wants(PNa) }

// geometryFreeParam reports whether packed parameter i is one of those
// Config.NoGeometry keeps: crystalParam's, N's and the default F's.
func geometryFreeParam(i int) bool {
	return crystalParam(i) || i == PNa || i == PNb || i == PNc || i == PDefaultF
}

// crystalParam reports whether packed parameter i is one of those
// Config.CrystalOnly keeps: the crystal's, the fluence and the water
// background's seed.
func crystalParam(i int) bool {
	return i >= PCellA && i < PCStar+3 || i == PPhi0 || i == PPhiStep || i == PMosaic || i == PFluence || i == PIbg
}

// Steps is the reference's normalisation count: sources × mosaic domains ×
// φ steps × oversample².
func (c *Config) Steps() int {
	return c.Sources * c.Domains * c.PhiSteps * c.Oversample * c.Oversample
}

// TableLen is the number of values the padded HKL table must hold:
// (hRange+1)(kRange+1)(lRange+1), as the reference lays it out.
func (c *Config) TableLen() int {
	if !c.HasHKL {
		return 1
	}
	return (c.HMax - c.HMin + 2) * (c.KMax - c.KMin + 2) * (c.LMax - c.LMin + 2)
}

// MaskLen is the length of the mask input.
func (c *Config) MaskLen() int {
	if !c.HasMask {
		return 1
	}
	return c.FPixels * c.SPixels
}

// Rendered reports whether pixel (f, s) is inside the ROI and unmasked.
func (c *Config) Rendered(f, s int, mask []float64) bool {
	if f < c.ROIFMin || f > c.ROIFMax || s < c.ROISMin || s > c.ROISMax {
		return false
	}
	return !c.HasMask || mask[s*c.FPixels+f] != 0
}

// Inputs are the pixel computation's values: the packed parameters and the
// tables. Lengths: NParams; TableLen; Sources·SourceCols; Domains·MosaicCols;
// MaskLen. The tables are read only: what kernels derive from a
// structure-factor table is kept for the next ones and found by the
// table's identity (ftable.go), so a changed table must be a new slice.
type Inputs struct {
	P, Fhkl, Sources, Mosaic, Mask []float64
}

// Render computes the photon image (slow-major, len FPixels·SPixels) into
// out. Rows are shared out to GOMAXPROCS goroutines; each pixel is
// computed independently, so the result does not depend on the split.
//
// With Config.Interpolate the reference switches interpolation off for the
// rest of its run at the first evaluation whose tricubic neighbourhood
// leaves the table, walking pixels in scan order. Render reproduces that
// independently of threads: rows are rendered interpolating, in order, a
// batch of them at a time, until a batch holds the first such evaluation;
// from that evaluation on (the rest of its pixel, its row and the batch
// again, the later rows once) pixels are computed with interpolation off
// (RenderProgress).
func Render[T float32 | float64](c *Config, in *Inputs, out []T) { RenderSolidAngle(c, in, out) }

// RenderSolidAngle is Render that also returns what SolidAngle returns,
// summed from the ω values the pixels compute anyway (the same arithmetic:
// TestRenderSolidAngle checks the bits).
func RenderSolidAngle[T float32 | float64](c *Config, in *Inputs, out []T) float64 {
	return RenderProgress(c, in, out, nil)
}

// RenderProgress is RenderSolidAngle calling progress, when not nil,
// after each row rendered (once each) with the number of rows done so far
// (from the goroutine that rendered it: progress must be safe for
// concurrent use).
func RenderProgress[T float32 | float64](c *Config, in *Inputs, out []T, progress func(rows int)) float64 {
	return RenderReport(c, in, out, progress).SolidAngle
}

// Report is what a render finds besides the image.
type Report struct {
	// SolidAngle is what SolidAngle returns (RenderSolidAngle).
	SolidAngle float64
	// Cutoff is the pixel at which interpolation switched off, with the
	// fractional indices that caused it: what InterpolationCutoff
	// returns, found by the render itself (−1: interpolation did not
	// switch off, or was not on).
	Cutoff    int
	CutoffHKL [3]float64
}

// RenderReport is RenderProgress returning its Report.
func RenderReport[T float32 | float64](c *Config, in *Inputs, out []T, progress func(rows int)) Report {
	return renderReport(c, in, out, progress, nil)
}

// renderReport is RenderReport calling rowDone, when not nil, with each
// row's index after rendering it, from the goroutine that rendered it. A
// row rendered again (interpolation switched off within it, or in a
// batch of rows after that) is reported again: the values of its last
// report are the image's, an earlier report's can be provisional.
func renderReport[T float32 | float64](c *Config, in *Inputs, out []T, progress func(rows int), rowDone func(s int)) Report {
	k := newKernel(c, in)
	omegaRows := make([]float64, c.SPixels) // per-row ω sums, added in row order
	firstOOR := make([]int, c.SPixels)      // per row: first out-of-range pixel, evaluation
	firstEval := make([]int, c.SPixels)
	var done atomic.Int64 // rows, for progress
	// render renders rows from … to-1 in mode, on the lane kernels where
	// they apply (counting them for progress when count is set).
	render := func(from, to int, mode interpMode, count bool) {
		lanes := k.forwardLanes() && (mode == interpNone || mode == interpOn && k.interpLanes())
		parallelWorkers(to-from, func() func(int) {
			var rb *rowBuf
			if lanes {
				rb = k.newRowBuf()
			}
			return func(i int) {
				renderRow(k, from+i, mode, in.Mask, out, omegaRows, firstOOR, firstEval, rb)
				if rowDone != nil {
					rowDone(from + i)
				}
				if progress != nil && count {
					progress(int(done.Add(1)))
				}
			}
		})
	}
	if !c.Interpolate || !c.HasHKL {
		render(0, c.SPixels, interpNone, true)
		return Report{SolidAngle: k.solidAngle(omegaRows), Cutoff: -1}
	}
	// Interpolation: the reference switches it off for good at the first
	// point out of the table's range in scan order. Rows are rendered
	// interpolating in order, a batch of them at a time, until a batch
	// holds that point; its pixel is rendered again up to that point
	// (interpUntil), the rest of its row and the batch's later rows
	// again and the rows after the batch for the first time, all
	// without interpolation (whole rows on the lane kernels where they
	// apply). Rendering every row interpolating
	// and then the pixels after the point again, as before, did the
	// image's work twice where the table does not cover the detector:
	// 1.3–1.6× the reference's time at cubic 512² with P1.hkl.
	p, e, next := untilCutoff(c, firstOOR, firstEval, func(from, to int) { render(from, to, interpOn, true) })
	rep := Report{Cutoff: p}
	if p >= 0 {
		ps := p / c.FPixels
		// (The rows' workers are done: the kernel is this goroutine's alone.)
		rep.CutoffHKL = k.cutoffHKL(p)
		v, _ := k.pixel(p%c.FPixels, ps, interpUntil, e, nil, nil)
		out[p] = T(v)
		for f := p%c.FPixels + 1; f < c.FPixels; f++ {
			if c.Rendered(f, ps, in.Mask) {
				v, _ := k.pixel(f, ps, interpNone, 0, nil, nil)
				out[ps*c.FPixels+f] = T(v)
			}
		}
		if rowDone != nil {
			rowDone(ps)
		}
		render(ps+1, next, interpNone, false)
		render(next, c.SPixels, interpNone, true)
	}
	rep.SolidAngle = k.solidAngle(omegaRows)
	return rep
}

// renderRow renders row s of out for RenderSolidAngle (by the lane
// kernels when rb is not nil).
func renderRow[T float32 | float64](k *kernel, s int, mode interpMode, mask []float64, out []T, omegaRows []float64, firstOOR, firstEval []int, rb *rowBuf) {
	c := k.c
	firstOOR[s] = -1
	row := out[s*c.FPixels : (s+1)*c.FPixels]
	// The row's ω sum in a local: neighbouring rows' sums share cache
	// lines, and writing them per pixel from several threads would
	// bounce those lines between cores.
	var om float64
	defer func() { omegaRows[s] = om }()
	if rb != nil {
		rb.interp = mode == interpOn
		firstOOR[s], firstEval[s] = rowLanes(k, s, mask, row, &om, rb)
		return
	}
	{
		for f := range row {
			row[f] = 0
			if !c.Rendered(f, s, mask) {
				continue
			}
			v, e := k.pixel(f, s, mode, 0, &om, nil)
			row[f] = T(v)
			if e >= 0 && firstOOR[s] < 0 {
				firstOOR[s], firstEval[s] = f, e
			}
		}
	}
}

// InterpolationCutoff returns the first rendered pixel (scan order) at
// which the reference would switch interpolation off, with the fractional
// indices that caused it; pixel is −1 when that never happens. It runs
// the render's search only (kernel.interpolationCutoff: rows
// interpolating, in batches, up to the batch that holds the point), not
// the rows after it.
func InterpolationCutoff(c *Config, in *Inputs) (pixel int, hkl [3]float64) {
	if !c.Interpolate || !c.HasHKL {
		return -1, hkl
	}
	k := newKernel(c, in)
	if pixel, _ = k.interpolationCutoff(in.Mask); pixel >= 0 {
		hkl = k.cutoffHKL(pixel)
	}
	return pixel, hkl
}

// cutoffHKL returns the fractional indices at which interpolation
// switches off in pixel p (the switch-off point): p walked again
// interpolating, up to its first point out of range. The kernel must be
// the caller's alone (onOOR).
func (k *kernel) cutoffHKL(p int) (hkl [3]float64) {
	k.onOOR = func(h, kk, l float64) { hkl = [3]float64{h, kk, l} }
	k.pixel(p%k.c.FPixels, p/k.c.FPixels, interpOn, 0, nil, nil)
	k.onOOR = nil
	return hkl
}

// untilCutoff runs rows(from, to), which sets firstOOR and firstEval of
// those rows (each row's first out-of-range point, −1 for none), over the
// rows in order, a batch of 4 per thread at a time, until a batch holds
// such a point, and returns the first (cutoff's pixel and evaluation)
// and the row after the last batch it ran. (The interpolating forward
// and the gradient's search for the switch-off point.)
func untilCutoff(c *Config, firstOOR, firstEval []int, rows func(from, to int)) (pixel, eval, next int) {
	batch := 4 * runtime.GOMAXPROCS(0)
	pixel = -1
	for next < c.SPixels && pixel < 0 {
		to := min(c.SPixels, next+batch)
		rows(next, to)
		pixel, eval = cutoff(c, firstOOR[:to], firstEval)
		next = to
	}
	return pixel, eval, next
}

// cutoff turns per-row first out-of-range positions into the global one:
// the pixel index and evaluation index, or −1.
func cutoff(c *Config, firstOOR, firstEval []int) (pixel, eval int) {
	for s, f := range firstOOR {
		if f >= 0 {
			return s*c.FPixels + f, firstEval[s]
		}
	}
	return -1, 0
}

// parallelRows runs row(s) for every row on GOMAXPROCS goroutines.
func parallelRows(n int, row func(s int)) {
	parallelWorkers(n, func() func(s int) { return row })
}

// parallelWorkers runs rows 0 … n−1 on GOMAXPROCS goroutines, each
// taking its row function (and with it any scratch state) from worker
// once. A panic in a worker stops the others at their next row and is
// raised again on the caller's goroutine, where the graph's recover turns
// it into an error (a panic left on a worker would end the process).
func parallelWorkers(n int, worker func() func(s int)) {
	rows := make(chan int, n)
	for s := 0; s < n; s++ {
		rows <- s
	}
	close(rows)
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
		once   sync.Once
		caught any
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { caught = r })
					failed.Store(true)
				}
			}()
			row := worker()
			for s := range rows {
				if failed.Load() {
					return
				}
				row(s)
			}
		}()
	}
	wg.Wait()
	if failed.Load() {
		panic(fmt.Sprintf("physics: pixel row worker: %v", caught))
	}
}

// interpMode selects how cellF finds structure factors in one pixel.
type interpMode int

const (
	interpNone  interpMode = iota // nearest reflection
	interpOn                      // tricubic; report the first out-of-range evaluation
	interpUntil                   // tricubic before evaluation `until`, nearest from it on
)

// source is one incident direction and wavelength, with the E- and
// B-vector directions of the polarization model (Polarization).
type source struct {
	inc       [3]float64
	lambda    float64
	invLambda float64
	ein, bin  [3]float64
}

// kernel holds the inputs unpacked and the derived per-run tables
// (orientations, sources); it is read-only during rendering.
type kernel struct {
	c                    *Config
	pix0, fd, sd, od     [3]float64
	astar, bstar, cstar  [3]float64
	orient               [][3][3]float64 // per φ step × domain: a, b, c
	src                  []source
	scale, kahn          float64
	defaultF, fudge      float64
	na, nb, nc, nabc     float64
	nn                   [3]int  // Na, Nb, Nc when whole
	whole                bool    // Na, Nb, Nc are all whole numbers
	simple               bool    // the lane kernels apply: flat detector, no -oversample_* rules, parallelepiped with every N in nmode's forms, no -dmin
	shapeLanes           bool    // the forward lane kernels apply to the round, Gaussian or top-hat shape (simple's other conditions)
	dminLanes            bool    // the forward lane kernels apply with -dmin (simple's other conditions)
	curvedLanes          bool    // the forward lane kernels apply to the curved detector (simple's other conditions)
	rulesLanes           bool    // … and to the -oversample_* rules, flat (pixelsAxesRulesLanes)
	many                 bool    // kernel.simple's structures with more than maxRepOrient orientations: the forward only (pixelsManyLanes)
	nmode                [3]int8 // the lane kernels' lattice factor per axis (nOne …)
	pitch, sub, closeD   float64
	omegaNum             float64 // pixel²·close distance: ω = omegaNum/R³
	perFluence           float64 // scale/fluence
	thickStep, mu, dmin  float64
	ibg, distance        float64
	fhkl                 []float64 // the structure factors, the default F in cells without data (filledTable)
	p, mosaic            []float64 // the packed parameters and the mosaic table
	invLambda0, invPitch float64
	umats                [][9]float64 // per domain: its rotation
	hStride, kStride     int
	onOOR                func(h, k, l float64) // called at the first out-of-range point of a pixel
	perDef               bool                  // termsGradLanes sums ∂S/∂F (gradSetup)
	hklSmall             bool                  // every |h|, |k|, |l| < 2⁵⁰
	tier                 laneTier              // the lane kernels to run (dispatch.go)
	lr                   *laneReps             // what the lane kernels read (lanes_reps.go)
	ll                   *laneLists            // the lane kernels' lists: per sub-pixel column, layer, orientation, source
	fhklBits             []uint64              // fhkl's bit patterns
	missBits             []uint64              // 1 (as bits) where the table has no data, 0 elsewhere; nil when it has data everywhere (filledTable)
}

func vec(p []float64, i int) [3]float64 { return [3]float64{p[i], p[i+1], p[i+2]} }

func dot(x, y [3]float64) float64 { return x[0]*y[0] + x[1]*y[1] + x[2]*y[2] }

func rotateAxis(v, axis [3]float64, phi float64) [3]float64 {
	c, s := math.Cos(phi), math.Sin(phi)
	d := dot(axis, v) * (1 - c)
	return [3]float64{
		axis[0]*d + v[0]*c + (-axis[2]*v[1]+axis[1]*v[2])*s,
		axis[1]*d + v[1]*c + (axis[2]*v[0]-axis[0]*v[2])*s,
		axis[2]*d + v[2]*c + (-axis[1]*v[0]+axis[0]*v[1])*s,
	}
}

func matVec(u *[9]float64, v [3]float64) [3]float64 {
	return [3]float64{u[0]*v[0] + u[1]*v[1] + u[2]*v[2], u[3]*v[0] + u[4]*v[1] + u[5]*v[2], u[6]*v[0] + u[7]*v[1] + u[8]*v[2]}
}

func newKernel(c *Config, in *Inputs) *kernel {
	p := in.P
	k := &kernel{c: c, p: p, mosaic: in.Mosaic, pix0: vec(p, PPix0), fd: vec(p, PFdet), sd: vec(p, PSdet), od: vec(p, PObs),
		astar: vec(p, PAStar), bstar: vec(p, PBStar), cstar: vec(p, PCStar),
		kahn: p[PKahn], na: p[PNa], nb: p[PNb], nc: p[PNc], defaultF: p[PDefaultF], pitch: p[PPixel],
		fudge: p[PFudge], thickStep: p[PThickStep], mu: p[PMu], dmin: p[PDmin], ibg: p[PIbg],
		distance: p[PDistance], fhkl: in.Fhkl}
	k.nabc = k.na * k.nb * k.nc
	k.invLambda0, k.invPitch = 1/p[PLambda], 1/p[PPixel]
	whole := func(n float64) bool { return n == math.Trunc(n) && math.Abs(n) < 1<<31 }
	k.whole = whole(k.na) && whole(k.nb) && whole(k.nc)
	if k.whole {
		k.nn = [3]int{int(k.na), int(k.nb), int(k.nc)}
	}
	k.sub = k.pitch / float64(c.Oversample)
	axes := true
	for i, n := range [3]float64{k.na, k.nb, k.nc} {
		switch {
		case n <= 1:
			k.nmode[i] = nOne
		case whole(n) && n <= maxChebyshevN:
			k.nmode[i] = nChebyshev
		case n < maxRatioN:
			// Whole N beyond maxChebyshevN too: the general loops'
			// sincgRatio is sin(Nπd)/sin(πd) on the offset d from the
			// nearest integer (at half-integers the other one of the two,
			// with the same magnitude) with the sign (−1)^((N−1)m) of the
			// definition, which F_latt² does not see (the same bits:
			// TestPixelSimple).
			k.nmode[i] = nRatio
		default:
			k.nmode[i], axes = nGeneral, false
		}
	}
	// One lane kernel family per structure: the usual one (simple), or
	// one of the others, each with a single departure from it.
	rules := c.OversampleOmega || c.OversamplePolar || c.OversampleThick
	square := c.Shape == Square && axes
	cut := k.dmin > 0
	k.simple = !c.Curved && !rules && square && !cut
	k.shapeLanes = !c.Curved && !rules && c.Shape != Square && !cut
	k.dminLanes = !c.Curved && !rules && square && cut
	k.curvedLanes = c.Curved && !rules && square && !cut
	k.rulesLanes = !c.Curved && rules && square && !cut
	if generalOnly {
		k.noLanes()
	}
	// ω uses the perpendicular distance of the placed detector.
	k.closeD = dot(k.pix0, k.od)
	k.omegaNum = k.pitch * k.pitch * k.closeD
	k.perFluence = ThomsonSq / float64(c.Steps())
	k.scale = ThomsonSq * p[PFluence] / float64(c.Steps())
	if c.HasHKL {
		k.kStride = c.LMax - c.LMin + 2
		k.hStride = (c.KMax - c.KMin + 2) * k.kStride
		// NaN marks a reflection the file did not list: it has the default
		// F, which is a parameter (ftable.go).
		k.fhkl, k.missBits = filledTable(in.Fhkl, k.defaultF)
	}
	for i := 0; i < c.Sources; i++ {
		r := in.Sources[i*SourceCols:]
		l := p[PLambda] * r[3]
		k.src = append(k.src, newSource([3]float64{r[0], r[1], r[2]}, l, c.PolarAxis))
	}
	// Orientations: φ about the spindle (skipped at φ = 0, as the
	// reference, but never carried over from the previous step), then each
	// mosaic domain's rotation.
	a0, b0, c0 := vec(p, PCellA), vec(p, PCellB), vec(p, PCellC)
	umats := make([][9]float64, c.Domains)
	for m := range umats {
		r := in.Mosaic[m*MosaicCols:]
		// The angle spread·F in double precision, where the reference
		// rounds it to float32 (images differ by ~1e-8 relative): the image
		// must be a smooth function of the spread.
		umats[m] = models.UMat([3]float64{r[0], r[1], r[2]}, r[3]*p[PMosaic])
		if m == 0 {
			umats[m] = [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1} // the reference's aligned domain
		}
	}
	k.umats = umats
	for t := 0; t < c.PhiSteps; t++ {
		phi := p[PPhi0] + p[PPhiStep]*float64(t)
		ap, bp, cp := a0, b0, c0
		if phi != 0 {
			ap, bp, cp = rotateAxis(a0, c.Spindle, phi), rotateAxis(b0, c.Spindle, phi), rotateAxis(c0, c.Spindle, phi)
		}
		for m := range umats {
			if c.Mosaic {
				k.orient = append(k.orient, [3][3]float64{matVec(&umats[m], ap), matVec(&umats[m], bp), matVec(&umats[m], cp)})
			} else {
				k.orient = append(k.orient, [3][3]float64{ap, bp, cp})
			}
		}
	}
	// |q| ≤ (1 + |inc|)/λ: the bound on |h|, |k|, |l| below which the
	// lane kernels (no check per term) may reduce them by the nearest
	// integer; beyond (no physical input) the general loops take over.
	var qmax, omax float64
	for _, sr := range k.src {
		qmax = max(qmax, (1+math.Sqrt(dot(sr.inc, sr.inc)))*sr.invLambda)
	}
	for _, o := range k.orient {
		for i := range o {
			omax = max(omax, math.Sqrt(dot(o[i], o[i])))
		}
	}
	k.hklSmall = qmax*omax < 1<<50
	if !k.hklSmall {
		k.noLanes()
	}
	if len(k.orient) > maxRepOrient {
		// The forward of kernel.simple's structures on the compact table
		// (pixelsManyLanes) unless it interpolates, the rest (gradients
		// too) on the general loops.
		k.many = k.simple && !(c.Interpolate && c.HasHKL)
		k.noLanes()
	}
	k.lr, k.ll = k.newLaneReps(k.forwardLanes())
	k.fhklBits = bitsOf(k.fhkl)
	k.tier = currentTier()
	return k
}

// position is the lab position (m) of the centre of sub-pixel (subF, subS)
// of pixel (f, s) in sensor layer t.
func (k *kernel) position(f, s, subF, subS, t int) [3]float64 {
	os := k.c.Oversample
	x, y, z := k.flat(k.sub*float64(f*os+subF)+k.sub/2, k.sub*float64(s*os+subS)+k.sub/2, float64(t)*k.thickStep)
	pos := [3]float64{x, y, z}
	if k.c.Curved {
		pos = k.bend(pos)
	}
	return pos
}

// flat is the position on the flat detector at detector coordinates
// (fdet, sdet) and depth odet. (Three scalars rather than an array: Go
// keeps them in registers, where an array goes through memory.)
func (k *kernel) flat(fdet, sdet, odet float64) (x, y, z float64) {
	return flatAxis(fdet, k.fd[0], sdet*k.sd[0], odet*k.od[0], k.pix0[0]),
		flatAxis(fdet, k.fd[1], sdet*k.sd[1], odet*k.od[1], k.pix0[1]),
		flatAxis(fdet, k.fd[2], sdet*k.sd[2], odet*k.od[2], k.pix0[2])
}

// bend moves a flat position onto the curved detector as the reference
// does: the lab y and z components, read as arc lengths, become rotations
// of distance·beam about the slow then the fast axis.
func (k *kernel) bend(pos [3]float64) [3]float64 {
	x, y, z := bendLanes(k.lr, pos[0], pos[1], pos[2]) // the lanes' on one lane
	return [3]float64{x, y, z}
}

// omega is the solid angle of a sub-pixel at distance r = 1/invR:
// (pixel/R)²·cosine of the obliquity, or 1/R² for point pixels.
func (k *kernel) omega(invR float64) float64 {
	return omegaLanes(invR, k.omegaNum, k.c.PointPixel)
}

// captureFrac is the fraction of the photons along a direction whose
// cosine with the detector normal is par absorbed in sensor layer t.
func (k *kernel) captureFrac(t int, par float64) float64 {
	return exp(-float64(t)*k.thickStep*k.mu/par) - exp(-float64(t+1)*k.thickStep*k.mu/par)
}

// noLanes sends every row to the general loops.
func (k *kernel) noLanes() {
	k.simple, k.shapeLanes, k.dminLanes, k.curvedLanes, k.rulesLanes = false, false, false, false, false
}

// interpLanes reports whether interpolating rows run on the lane kernels
// (pixelsAxesInterpLanes, and termsGradAxesInterpLanes in the loss rows):
// kernel.simple's structures. Until the switch-off point the reference
// interpolates, and rowLanes leaves a pixel whose terms leave the table to
// the general loops.
func (k *kernel) interpLanes() bool { return k.simple && k.c.Interpolate && k.c.HasHKL }

// lossLanes reports whether the loss rows' lane kernels apply to the
// structure (termsGradLanes and its variants, termsGradShapeLanes):
// lossRowStructure's first condition, and whether they need gradSetup.
func (k *kernel) lossLanes() bool { return k.simple || k.shapeLanes || k.dminLanes }

// forwardLanes reports whether the forward rows run on the lane kernels
// (pixelsLanes and its variants).
func (k *kernel) forwardLanes() bool {
	return k.simple || k.shapeLanes || k.dminLanes || k.curvedLanes || k.rulesLanes || k.many
}

// pixel is the reference's per-pixel loop: sensor layers, sub-pixels,
// sources, φ steps, mosaic domains. The cached factors (ω, polarization,
// capture fraction) are recomputed where the reference recomputes them:
// when still zero, or every time with the matching -oversample_* flag.
//
// mode and until choose the structure-factor lookup (see interpMode); the
// second result is the index of the first evaluation whose interpolation
// neighbourhood left the table (interpOn only), or −1. tr, when not nil,
// records what -printout prints (Tracer).
func (k *kernel) pixel(fpix, spix int, mode interpMode, until int, omegaSum *float64, tr *Trace) (float64, int) {
	c := k.c
	sum := k.ibg
	eval, oor := 0, -1
	square := c.Shape == Square && k.whole
	var omega, polar, capture float64
	var omegaPixel float64 // the ω values computed, for the solid angle
	if c.NoPolar {
		polar = 1
	}
	os := c.Oversample
	for t := 0; t < c.ThickSteps; t++ {
		capture = 0
		if !c.Thick {
			capture = 1
		}
		odet := float64(t) * k.thickStep
		for subS := 0; subS < os; subS++ {
			sdet := k.sub*float64(spix*os+subS) + k.sub/2
			for subF := 0; subF < os; subF++ {
				x, y, z := k.flat(k.sub*float64(fpix*os+subF)+k.sub/2, sdet, odet)
				if c.Curved {
					p := k.bend([3]float64{x, y, z})
					x, y, z = p[0], p[1], p[2]
				}
				if tr != nil {
					tr.Position = [3]float64{x, y, z}
				}
				invR := 1 / math.Sqrt(x*x+y*y+z*z)
				dx, dy, dz := x*invR, y*invR, z*invR
				if omega == 0 || c.OversampleOmega {
					omega = k.omega(invR)
					omegaPixel += omega
				}
				if capture == 0 || c.OversampleThick {
					// Fraction absorbed in layer t along the oblique path.
					capture = k.captureFrac(t, dx*k.od[0]+dy*k.od[1]+dz*k.od[2])
				}
				for si := range k.src {
					sr := &k.src[si]
					qx, qy, qz := (dx-sr.inc[0])*sr.invLambda, (dy-sr.inc[1])*sr.invLambda, (dz-sr.inc[2])*sr.invLambda
					if k.dmin > 0 || tr != nil {
						stol := 0.5 * math.Sqrt(qx*qx+qy*qy+qz*qz)
						if tr != nil {
							tr.Stol = stol
						}
						if k.dmin > 0 && stol > 0 && k.dmin > 0.5/stol {
							continue
						}
					}
					if polar == 0 || c.OversamplePolar {
						if k.kahn == 0 {
							// polarization at K = 0, inline.
							c2 := sr.inc[0]*dx + sr.inc[1]*dy + sr.inc[2]*dz
							polar = 0.5 * (1 + c2*c2)
						} else {
							polar = polarization(k.kahn, sr, [3]float64{dx, dy, dz})
						}
					}
					for oi := range k.orient {
						o := &k.orient[oi]
						h := o[0][0]*qx + o[0][1]*qy + o[0][2]*qz
						kk := o[1][0]*qx + o[1][1]*qy + o[1][2]*qz
						l := o[2][0]*qx + o[2][1]*qy + o[2][2]*qz
						var fl float64
						if square {
							fl = k.squareWhole(h, kk, l)
						} else {
							fl = k.lattice(h, kk, l)
						}
						if tr != nil {
							tr.Cell, tr.HKL, tr.FLatt = *o, [3]float64{h, kk, l}, fl
						}
						if fl == 0 && !c.Water {
							continue
						}
						var fc float64
						switch {
						case !c.HasHKL:
							fc = k.defaultF
						case mode == interpNone || (mode == interpUntil && eval >= until):
							fc = k.cellF(h, kk, l)
						case k.inInterpRange(h, kk, l):
							fc = k.interpolate(h, kk, l)
						default:
							// The reference's fallback at the first such point:
							// the nearest reflection, and no interpolation after.
							fc = k.cellF(h, kk, l)
							if oor < 0 {
								oor = eval
								if k.onOOR != nil {
									k.onOOR(h, kk, l)
								}
							}
						}
						if tr != nil {
							tr.FCell = fc
						}
						eval++
						sum += fc * fc * fl * fl
						// The reference scales the whole running sum, not the term.
						if c.OversampleThick {
							sum *= capture
						}
						if c.OversamplePolar {
							sum *= polar
						}
						if c.OversampleOmega {
							sum *= omega
						}
					}
				}
			}
		}
	}
	v := k.scale * sum
	if !c.OversampleThick {
		v *= capture
	}
	if !c.OversamplePolar {
		v *= polar
	}
	if !c.OversampleOmega {
		v *= omega
	}
	if omegaSum != nil {
		*omegaSum += k.omegaTerms(omegaPixel, omega)
	}
	if tr != nil {
		tr.Sum, tr.Polar, tr.Omega, tr.Capture, tr.Pixel = sum, polar, omega, capture, v
	}
	return v, oor
}

// omegaTerms is a pixel's part of the reference's solid-angle sum, one ω
// per sub-pixel and sensor layer: the sum of the computed values under
// -oversample_omega, else the first sub-pixel's ω for each of them.
func (k *kernel) omegaTerms(computed, first float64) float64 {
	if k.c.OversampleOmega {
		return computed
	}
	return float64(k.c.ThickSteps*k.c.Oversample*k.c.Oversample) * first
}

// squareWhole is the parallelepiped's F_latt for whole N: the product of
// sincg over the axes with N > 1. With one N ≤ maxChebyshevN on all three
// axes (the usual -N) the three Chebyshev forms are evaluated side by
// side, so that their chains of dependent multiply-adds overlap.
func (k *kernel) squareWhole(h, kk, l float64) float64 {
	n := k.nn[0]
	if n != k.nn[1] || n != k.nn[2] || n <= 1 || n > maxChebyshevN ||
		!(math.Abs(h) < 1<<51 && math.Abs(kk) < 1<<51 && math.Abs(l) < 1<<51) {
		fl := 1.0
		if n := k.nn[0]; n > 1 {
			fl = sincgWhole(h, n)
		}
		if n := k.nn[1]; n > 1 {
			fl *= sincgWhole(kk, n)
		}
		if n := k.nn[2]; n > 1 {
			fl *= sincgWhole(l, n)
		}
		return fl
	}
	return sincg3(h, kk, l, n)
}

// sincg3 is sincg3Lanes on one lane: sincg(h, n)·sincg(k, n)·sincg(l, n)
// for whole 1 < n ≤ maxChebyshevN and |h|, |k|, |l| < 2⁵¹.
func sincg3(h, kk, l float64, n int) float64 {
	return sincg3Lanes(nil, h, kk, l, n)
}

// rowChunk is the number of pixels a loss row takes at a time (lossRow:
// per sub-pixel their geometry, then their terms, then the backward
// pass). Chunks of 256 pixels rather than 64 made the gradient run
// 0.91–0.94× at cubic 1024² (0.96× with 10 mosaic domains at 512²,
// 0.94–0.97× with 2×2 sub-pixels in 3 layers, 0.99× at 256²): the
// per-chunk work (the kernels' set-up, the partial sums' stores and
// additions) is spread over more pixels.
const rowChunk = 256

// geoChunk is the number of pixels whose geometry the forward rows of one
// sub-pixel compute ahead of their terms (pixelsLanes); 256 was no faster
// there.
const geoChunk = 64

// chunkPixels lists the rendered pixels of row spix (inside the ROI's
// rows) from f0 ≥ 0 on, up to most (≤ rowChunk) of them, leaving out
// those the loss term skips when there is one (a loss Check accepted:
// its images have the detector's pixels), and returns them with the
// pixel to start the next chunk at. The list is in fs, or, where every
// pixel is taken, a slice of the shared table of columns (not to be
// written).
func chunkPixels(c *Config, spix, f0 int, mask []float64, l *PixelLoss, fs *[rowChunk]int, most int) ([]int, int) {
	n, f, last := 0, f0, min(c.ROIFMax, c.FPixels-1)
	if !c.HasMask && (l == nil || !l.skipsAny()) {
		// Every pixel: a run.
		n = max(0, min(most, last-f0+1))
		return columns(f0 + n)[f0:], f0 + n
	}
	if !c.HasMask && l.Weights != nil && l.Kind != LossLinear && f <= last {
		// Weights alone (a fit's spot boxes): the row's weights in one
		// loop without the other tests, and without a branch on each
		// weight (every pixel is written, and counted where its weight is
		// not 0): the boxes' edges made that branch's mispredictions 6–8 %
		// of a fit's profile.
		n, f = scanWeights(l.Weights[spix*c.FPixels:][:last+1], f, fs, most)
		return fs[:n], f
	}
	for ; f <= last && n < most; f++ {
		i := spix*c.FPixels + f
		if c.HasMask && mask[i] == 0 {
			continue
		}
		if l != nil && l.skips(i) {
			continue
		}
		fs[n] = f
		n++
	}
	return fs[:n], f
}

// columns returns the whole numbers 0, 1, …, n − 1 (a slice of length
// and capacity n) from a table that every caller shares and nobody
// writes once it is published: chunkPixels' runs. Filling each run
// instead took 2.4 % of the samples of the gradient at cubic 1024² (a
// store per pixel).
func columns(n int) []int {
	old := columnTable.Load()
	if old != nil && len(*old) >= n {
		return (*old)[:n:n]
	}
	size := max(n, 4096)
	if old != nil {
		size = max(size, 2*len(*old))
	}
	t := make([]int, size)
	for i := range t {
		t[i] = i
	}
	columnTable.Store(&t) // (two growing at once: either table will do)
	return t[:n:n]
}

// columnTable is columns' table.
var columnTable atomic.Pointer[[]int]

// listChunk is chunkPixels for a loss with a pixel list (l.Pixels): the
// same chunk (the pixels the full images with weight 0 off the list would
// give), and in js each pixel's index in the list. The search for the
// row's first starts at *at (listFrom: mostly a comparison, for rows
// without a listed pixel and the chunk after a full one), which it leaves
// after the chunk's last.
func listChunk(c *Config, spix, f0 int, mask []float64, l *PixelLoss, fs, js *[rowChunk]int, at *int, most int) ([]int, []int, int) {
	base, last := spix*c.FPixels, min(c.ROIFMax, c.FPixels-1)
	px := l.Pixels
	j := listFrom(px, base+f0, *at)
	n := 0
	if ws := l.Weights; !c.HasMask && l.Kind != LossLinear && ws != nil {
		// Weights alone (a fit's spot boxes): every listed pixel is
		// written, and counted where its weight is not 0, without a
		// branch on the weight (as scanWeightsFrom).
		ws = ws[:len(px)]
		fl, jl := fs[:most], js[:most]
		for ; j < len(px) && n < len(fl); j++ {
			f := int(px[j]) - base
			if f > last {
				break
			}
			fl[n], jl[n] = f, j
			inc := 0
			if ws[j] != 0 {
				inc = 1
			}
			n += inc
		}
	} else {
		for ; j < len(px) && n < most; j++ {
			f := int(px[j]) - base
			if f > last {
				break
			}
			if (c.HasMask && mask[base+f] == 0) || l.skipsAt(j) {
				continue
			}
			fs[n], js[n] = f, j
			n++
		}
	}
	*at = j
	if n < most {
		return fs[:n], js[:n], last + 1 // (the row's pixels are done)
	}
	return fs[:n], js[:n], fs[n-1] + 1
}

// scanWeightsFrom is scanWeights one pixel at a time, from pixel f with n
// pixels listed: every pixel is written, and counted where its weight is
// not 0 (NaN included), with no branch on the weight.
func scanWeightsFrom(w []float64, f int, fs *[rowChunk]int, n, most int) (int, int) {
	for ; f < len(w) && n < most; f++ {
		fs[n] = f
		inc := 0
		if w[f] != 0 {
			inc = 1
		}
		n += inc
	}
	return n, f
}

// rowLanes renders row spix for the structures the forward lane kernels
// cover (kernel.forwardLanes: kernel.simple's, the spot shapes, -dmin, the
// curved detector, the -oversample_* rules) with
// the lane kernel the CPU runs (pixelsLanes: the general loop's
// arithmetic in its order, TestPixelSimple checks the bits). It adds the
// ω terms to omegaSum in pixel order.
//
// With rb.interp the row interpolates (kernel.interpLanes): from the first
// pixel the lanes leave NaN (a term whose neighbourhood leaves the table,
// interpFLanes) on, the general loops compute the pixels again up to the
// first with such a term, and it returns that pixel and the term's
// evaluation (renderRow's firstOOR and firstEval), else −1, 0. The pixels
// after it keep the lanes' values (NaN where they left the table): every
// caller computes them again without interpolation or does not use them
// (RenderReport, kernel.interpolationCutoff). The ω terms are the lanes'
// (they do not depend on the structure factors).
func rowLanes[T float32 | float64](k *kernel, spix int, mask []float64, row []T, omegaSum *float64, rb *rowBuf) (oorF, oorE int) {
	c := k.c
	oorF = -1
	f0, f1 := max(c.ROIFMin, 0), min(c.ROIFMax, c.FPixels-1)
	if c.HasMask || f0 > 0 || f1 < c.FPixels-1 || spix < c.ROISMin || spix > c.ROISMax {
		clear(row) // (else every pixel of the row is written below)
	}
	if spix < c.ROISMin || spix > c.ROISMax {
		return oorF, oorE
	}
	var n int
	rb.om, rb.omDone = laneVal{*omegaSum}, 0
	if c.HasMask {
		if rb.idx == nil {
			rb.idx = make([]int, len(rb.f))
		}
		idx := rb.idx[:0]
		for f := f0; f <= f1; f++ {
			if mask[spix*c.FPixels+f] != 0 {
				idx = append(idx, f)
			}
		}
		n = len(idx)
		k.lanesRow(spix, idx, 0, n, rb)
	} else {
		n = max(0, f1+1-f0)
		k.lanesRow(spix, nil, f0, n, rb)
	}
	// An interpolating row: the first pixel the lanes left NaN, from which
	// the general loops take over up to the first pixel with a point out
	// of the table.
	nanAt := n
	if rb.interp {
		for p, v := range rb.v[:n] {
			if v != v {
				nanAt = p
				break
			}
		}
	}
	om := rb.om[0]
	if c.Thick {
		mode := interpNone
		if rb.interp {
			mode = interpOn
		}
		for p := range n {
			f := f0 + p
			if c.HasMask {
				f = rb.idx[p]
			}
			if p >= nanAt && oorF < 0 {
				v, e := k.pixel(f, spix, interpOn, 0, &om, nil) // (and its ω terms)
				row[f] = T(v)
				if e >= 0 {
					oorF, oorE = f, e
				}
				continue
			}
			row[f] = T(k.laneValue(spix, f, p, rb, &om, mode))
		}
	} else {
		for p := nanAt; p < n && oorF < 0; p++ {
			f := f0 + p
			if c.HasMask {
				f = rb.idx[p]
			}
			var e int
			rb.v[p], e = k.pixel(f, spix, interpOn, 0, nil, nil)
			if e >= 0 {
				oorF, oorE = f, e
			}
		}
		// The ω terms pixelsLanes has not added, in pixel order.
		for _, w := range rb.w[rb.omDone:n] {
			om += w
		}
		if c.HasMask {
			for p, f := range rb.idx[:n] {
				row[f] = T(rb.v[p])
			}
		} else {
			dst := row[f0 : f0+n]
			p := 0
			if r32, ok := any(dst).([]float32); ok {
				// Whole vectors on the lanes.
				p = n / maxLanes * maxLanes
				k.rowF32(rb.v[:], r32, p)
			}
			for ; p < n; p++ {
				dst[p] = T(rb.v[p])
			}
		}
	}
	*omegaSum = om
	return oorF, oorE
}

// lanesRow runs the lane kernel on n pixels of row spix: idx, or the run
// from f0 when idx is nil.
func (k *kernel) lanesRow(spix int, idx []int, f0, n int, rb *rowBuf) {
	if n == 0 {
		return
	}
	c := k.c
	os := c.Oversample
	fs := rb.f
	switch {
	case idx != nil:
		for p, f := range idx[:n] {
			fs[p] = float64(f * os)
		}
		rb.runN = 0
	case rb.runN != n || rb.runF0 != f0:
		// A run of pixels: the same for every row of an image without a
		// mask (2 % of a cubic 4096² run when formed for each).
		steps(fs, n, float64(f0*os), float64(os))
		rb.runF0, rb.runN = f0, n
	}
	for p := n; p%maxLanes != 0; p++ {
		fs[p] = fs[p-1]
	}
	for subS := range rb.sdet {
		sdet := k.sub*float64(spix*os+subS) + k.sub/2
		repeat3To(&rb.sdet[subS], [3]float64{sdet * k.sd[0], sdet * k.sd[1], sdet * k.sd[2]})
	}
	k.pixels(rb, n)
}

// captureRow replaces each obliquity in c by the capture fraction of
// sensor layer t along it (captureRuleLanes, under -oversample_thick).
func (k *kernel) captureRow(t int, c []float64) {
	for i, par := range c {
		c[i] = k.captureFrac(t, par)
	}
}

// laneValue is the value of pixel p (pixel f of row spix) of a row the
// lane kernel ran on with a sensor thickness, as the general loop forms it
// (scale·S·capture·P·ω, each factor left out under its -oversample_*
// rule: the sum has it), adding its ω terms to om. Where the capture
// fraction at the last layer's first sub-pixel is 0 (without
// -oversample_thick) the general loop takes it further: the pixel is
// computed again.
func (k *kernel) laneValue(spix, f, p int, rb *rowBuf, om *float64, mode interpMode) float64 {
	c := k.c
	v := rb.v[p]
	if !c.OversampleThick {
		capture := k.captureFrac(c.ThickSteps-1, rb.par[p])
		if capture == 0 {
			v, _ := k.pixel(f, spix, mode, 0, om, nil)
			return v
		}
		v *= capture
	}
	*om += k.omegaTerms(rb.w[p], rb.w[p])
	if !c.OversamplePolar {
		v *= rb.polar[p]
	}
	if !c.OversampleOmega {
		v *= rb.w[p]
	}
	return v
}

// lattice is the lattice transform F_latt for the crystal's shape.
func (k *kernel) lattice(h, kk, l float64) float64 {
	c := k.c
	if c.Shape == Square {
		// Whole N is handled inline in pixel; this is the continuous-N case.
		fl := 1.0
		if k.na > 1 {
			fl *= Sincg(h, k.na)
		}
		if k.nb > 1 {
			fl *= Sincg(kk, k.nb)
		}
		if k.nc > 1 {
			fl *= Sincg(l, k.nc)
		}
		return fl
	}
	// The other shapes: the lane kernels' formula on one lane (the
	// Gaussian and top-hat with the distance from the nearest reciprocal
	// lattice point measured along the unrotated reciprocal vectors, as
	// the reference does; e^x by expLanes, sin and cos by the π-scaled
	// polynomials).
	return shapeLatticeLanes(k.lr, h, kk, l, 0)
}

// cellF is the nearest-reflection structure factor: round half down, as the
// reference's ceil(h−0.5); default_F outside the table.
func (k *kernel) cellF(h, kk, l float64) float64 {
	if !k.c.HasHKL {
		return k.defaultF
	}
	var ia [1]int32
	return cellFLanes(k.lr, k.fhklBits, &ia, h, kk, l)
}

// inInterpRange is the reference's test that the 4×4×4 neighbourhood of
// (h, k, l) lies inside the table (done on the fractional indices).
func (k *kernel) inInterpRange(h, kk, l float64) bool {
	c := k.c
	hr, kr, lr := float64(c.HMax-c.HMin+1), float64(c.KMax-c.KMin+1), float64(c.LMax-c.LMin+1)
	return !(h-float64(c.HMin)+3 > hr || h-2 < float64(c.HMin) ||
		kk-float64(c.KMin)+3 > kr || kk-2 < float64(c.KMin) ||
		l-float64(c.LMin)+3 > lr || l-2 < float64(c.LMin))
}

// interpolate is the reference's tricubic interpolation at a point whose
// neighbourhood is inside the table (inInterpRange): interpFLanes on one
// lane.
func (k *kernel) interpolate(h, kk, l float64) float64 {
	var ia [1]int32
	var cube [64]float64
	return interpFLanes(k.lr, k.fhklBits, &ia, cube[:], h, kk, l)
}

// Sincg is the lattice transform of N unit cells along one axis,
// sin(Nπh)/sin(πh) (the reference's sincg(πh, N)). For whole N it is
// sincgWhole, exact at integer h. N from the command line is whole (the
// reference reads it with atoi); for other N, which only a fit or a
// gradient check reaches, it is the continuation sin(Nπd)/sin(πd) on the
// offset d = h − m from the nearest integer m: equal to the definition
// (up to the sign (−1)^((N−1)m), which F_latt² does not see) at whole N,
// and smooth in N. The ratio sin(Nπh)/sin(πh) itself has a pole at every
// integer h ≠ 0 once N is not whole, which made the image, and any loss on
// it, vary by orders of magnitude within 1e-4 of a cell.
func Sincg(h, n float64) float64 {
	if n == math.Trunc(n) && n >= 1 && n < 1<<31 && math.Abs(h) < 1<<52 {
		return sincgWhole(h, int(n))
	}
	if !(math.Abs(h) < 1<<52) {
		return math.Sin(n*math.Pi*h) / math.Sin(math.Pi*h)
	}
	// On the offset from the nearest integer, which sincgRatioLanes finds
	// again unchanged (N not whole is below 2⁵¹: N·d stays inside its
	// rounding).
	return sincgRatioLanes(h-math.RoundToEven(h), n)
}

// sincgWhole is Sincg for whole n ≥ 1. Up to maxChebyshevN it is the
// Chebyshev polynomial U_{n−1}(cos πh), which equals sin(nπh)/sin(πh) and
// takes its limit ±n at integer h by itself; beyond, sincgRatio.
func sincgWhole(h float64, n int) float64 {
	if n > maxChebyshevN || !(math.Abs(h) < 1<<51) {
		return sincgRatio(h, n)
	}
	if n == 1 {
		return 1 // U_0
	}
	return sincgLanes(h, n)
}

// sincgRatio is sincg for whole n as the ratio of sines, taken on the
// offset d = h − m from the nearest integer m: (−1)^{(n−1)m}·sin(nπd)/sin(πd),
// exactly ±n at d = 0.
func sincgRatio(h float64, n int) float64 {
	if !(math.Abs(h) < 1<<52) {
		return math.Sin(float64(n)*math.Pi*h) / math.Sin(math.Pi*h)
	}
	m := math.Round(h)
	d := h - m
	v := float64(n)
	if d != 0 {
		sn, _ := sinCosPi(float64(n) * d)
		v = sn / sinPiReduced(d)
	}
	if n&1 == 0 && int64(m)&1 != 0 {
		return -v
	}
	return v
}

// Polarization is the Kahn et al. (1982) polarization factor
// ½(1 + cos²2θ − K·cos2ψ·sin²2θ), ψ the azimuth of the diffracted ray
// about the incident beam measured from the E-vector, which lies in the
// plane of the incident beam and axis. cos2ψ = (E²−B²)/(E²+B²) with E, B
// the diffracted ray's components along E_in and B_in (no atan2).
func Polarization(kahn float64, incident, diffracted, axis [3]float64) float64 {
	sr := newSource(incident, 1, axis)
	return polarization(kahn, &sr, diffracted)
}

// newSource is a source with incident direction inc and wavelength
// lambda, its E and B vectors for polarization axis axis.
func newSource(inc [3]float64, lambda float64, axis [3]float64) source {
	bin := unit(cross(axis, inc))
	return source{inc: inc, lambda: lambda, invLambda: 1 / lambda, bin: bin, ein: unit(cross(inc, bin))}
}

// polarization is Polarization for source sr (E and B computed once).
func polarization(kahn float64, sr *source, d [3]float64) float64 {
	s, kv := laneSrcOf(sr), repeat(kahn)
	return polarizationLanes(kahn == 0, &kv, &s, d[0], d[1], d[2])
}

func cross(x, y [3]float64) [3]float64 {
	return [3]float64{x[1]*y[2] - x[2]*y[1], x[2]*y[0] - x[0]*y[2], x[0]*y[1] - x[1]*y[0]}
}

func unit(v [3]float64) [3]float64 {
	n := math.Sqrt(dot(v, v))
	if n == 0 {
		return [3]float64{}
	}
	return [3]float64{v[0] / n, v[1] / n, v[2] / n}
}

// SolidAngle is the reference's "solid angle subtended by detector": the
// ω values its pixel loop accumulates over rendered pixels (one per
// sub-pixel and sensor layer, each the pixel's first unless
// OversampleOmega) divided by Steps. Rendering sums the same terms on the
// way (RenderSolidAngle); this is the pass on its own.
func SolidAngle(c *Config, in *Inputs) float64 {
	k := newKernel(c, in)
	rows := make([]float64, c.SPixels) // per-row sums, added in row order
	os := c.Oversample
	omegaAt := func(f, s, subF, subS, t int) float64 {
		pos := k.position(f, s, subF, subS, t)
		return k.omega(1 / math.Sqrt(dot(pos, pos)))
	}
	parallelRows(c.SPixels, func(s int) {
		var row float64
		for f := 0; f < c.FPixels; f++ {
			if !c.Rendered(f, s, in.Mask) {
				continue
			}
			first := omegaAt(f, s, 0, 0, 0)
			var computed float64
			if c.OversampleOmega {
				for t := 0; t < c.ThickSteps; t++ {
					for subS := 0; subS < os; subS++ {
						for subF := 0; subF < os; subF++ {
							computed += omegaAt(f, s, subF, subS, t)
						}
					}
				}
			}
			row += k.omegaTerms(computed, first)
		}
		rows[s] = row
	})
	return k.solidAngle(rows)
}

// solidAngle adds per-row ω sums in row order and divides by Steps.
func (k *kernel) solidAngle(rows []float64) float64 {
	sum := 0.0
	for _, r := range rows {
		sum += r
	}
	return sum / float64(k.c.Steps())
}
