package graph

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/physics"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Key is the structural identity of a compiled program: everything that
// is baked into the graph's shape, branches or constants. Simulators whose
// models share a Key share one Program and differ only in input values.
type Key struct {
	Pixels      physics.Config
	FromMatrix  bool
	CellLengths bool
	Pivot       models.Pivot
	// Unrotated detector axes, fixed by the convention (or CUSTOM input).
	FDet, SDet, ODet, Beam, TwoThetaAxis, Spindle [3]float64
	// Constant residuals baked into the parameter maths (models.Detector
	// FrameFix, models.Crystal RealFix); zero but for models read from a
	// DIALS experiment list.
	FrameFix models.Frame[float64]
	RealFix  [3]models.V3[float64]
}

// KeyOf returns a validated model's structural key.
func KeyOf(m *models.Model) Key {
	d, c := m.Detector, m.Crystal
	cfg := physics.Config{FPixels: d.FPixels, SPixels: d.SPixels, Oversample: d.Oversample,
		PhiSteps: c.PhiSteps, Domains: len(c.Domains), Sources: len(m.Beam.Sources), ThickSteps: d.ThickSteps,
		Shape: physics.Shape(c.Shape), PointPixel: d.PointPixel, NoPolar: m.Beam.NoPolar, Curved: d.Curved,
		Thick: d.Thick, Water: m.Beam.Water != 0, Mosaic: c.Mosaic > 0,
		OversampleOmega: d.OversampleOmega, OversamplePolar: d.OversamplePolar, OversampleThick: d.OversampleThick,
		Beam: d.Beam, PolarAxis: d.Polar, Spindle: d.Spindle,
		ROIFMin: d.ROI[0], ROIFMax: d.ROI[1], ROISMin: d.ROI[2], ROISMax: d.ROI[3], HasMask: d.Mask != nil,
		Interpolate: c.Interpolate}
	if c.HKL != nil {
		cfg.HasHKL = true
		cfg.HMin, cfg.HMax, cfg.KMin, cfg.KMax, cfg.LMin, cfg.LMax = c.HKL.HMin, c.HKL.HMax, c.HKL.KMin, c.HKL.KMax, c.HKL.LMin, c.HKL.LMax
	}
	k := Key{Pixels: cfg, FromMatrix: c.FromMatrix, CellLengths: c.CellLengths, Pivot: d.Pivot,
		FDet: d.FDet, SDet: d.SDet, ODet: d.ODet, Beam: d.Beam, TwoThetaAxis: d.TwoThetaAxis, Spindle: d.Spindle,
		FrameFix: d.FrameFix, RealFix: c.RealFix}
	return k
}

// Program is a compiled expression graph: scalar parameter inputs →
// parameter op (packed parameters) → fused pixel op → image. Gradient
// programs take the packed parameters as an input instead (their maths
// runs on a tape, models.Rev), and add a loss and its backward pass; they
// are
// built on first use, per loss structure, and kept with the forward
// program in a pool: a gradient run takes an idle one (or builds another),
// so that runs of several simulators on one program — the images of a
// multi-image fit — go on at once. Forward runs are serialised by a lock:
// one machine per graph.
type Program struct {
	key    Key
	model  *models.Model // supplies structure for gradient programs
	g      *G.ExprGraph
	vm     G.VM
	inputs []*G.Node // in fields() order
	names  []string
	tables [4]*G.Node // structure factors, sources, mosaic domains, mask
	image  *G.Node
	side   *physics.Side              // filled by each forward run
	grads  map[lossKey][]*gradProgram // idle gradient programs
	mu     sync.Mutex                 // the forward machine, and grads
}

// lossKey is the structure of a loss: its kind, whether it is weighted
// and has a background, and whether it is given as a pixel list.
type lossKey struct {
	kind       LossKind
	weighted   bool
	background bool
	listed     bool
	crystal    bool // the crystal's gradient alone (Simulator.CrystalGradient)
	// Without the gradients by N, by the default F, and by the detector
	// and the beam (Simulator.GradientFor; physics.Config.NoN,
	// NoDefaultF, NoGeometry).
	noN, noDefaultF, noGeometry bool
}

// gradProgram is a compiled graph from the parameters and tables, an
// observed image, weights, a background and the read-out noise to a loss
// and its gradient with respect to every parameter input that the image
// depends on.
type gradProgram struct {
	g                   *G.ExprGraph
	vm                  G.VM
	pv                  *G.Node // the packed parameters
	tables              [4]*G.Node
	obs, wts, bg, noise *G.Node
	// listed holds a pixel-list loss (Loss.Pixels) while the program
	// runs: a graph input's shape is fixed when the program is built, and
	// a list's length is each image's own, so the list and its values
	// reach pixelLossOp here instead of through obs, wts and bg.
	listed          *listedLoss
	lossOut, pvGrad G.Value // the loss and its gradient by pv
	rev             models.Rev
	adj             []float64 // rev's scratch space
}

// maxPrograms bounds the program cache.
const maxPrograms = 64

var (
	cacheMu  sync.Mutex
	cache    = map[Key]*Program{}
	compiles atomic.Int64
)

// Compiles reports how many programs have been built since start: a cache
// hit does not add to it.
func Compiles() int64 { return compiles.Load() }

// Option changes how a program stores or computes its image.
type Option func(*Key)

// Float32Image stores the forward image in float32, as the reference's
// float image: half the memory, each pixel rounded once from its float64
// sum. Such programs have no gradients.
func Float32Image() Option { return func(k *Key) { k.Pixels.Float32 = true } }

// ProgramFor returns the cached program for m's key (with opts applied),
// building it on a miss.
func ProgramFor(m *models.Model, opts ...Option) (*Program, error) {
	key := KeyOf(m)
	for _, o := range opts {
		o(&key)
	}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if p, ok := cache[key]; ok {
		return p, nil
	}
	p, err := build(key, m)
	if err != nil {
		return nil, err
	}
	if len(cache) >= maxPrograms {
		// Bounded cache: drop an arbitrary other program (simulators that
		// hold it keep working; a later miss rebuilds it).
		for k := range cache {
			delete(cache, k)
			break
		}
	}
	cache[key] = p
	return p, nil
}

// build emits and compiles the forward program for key: the parameter
// inputs feed one paramsOp, which evaluates the parameter maths on numbers
// (see the package doc for why not as primitive ops), and the pixel op.
// The model supplies only structure that key already pins down
// (convention vectors, pivot, the fix-up residuals; paramsOp reads it at
// every run, as gradient programs read it when they are built): a model
// must not change after New. Its values are not baked in.
func build(key Key, m *models.Model) (p *Program, err error) {
	defer func() {
		// gorgonia's constructors panic on malformed graphs; report instead.
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("graph: building program: %v", r)
		}
	}()
	p = &Program{key: key, model: m, g: G.NewGraph(), grads: map[lossKey][]*gradProgram{}}
	p.inputs, p.names, p.tables = emitInputs(p.g, key)
	pv, err := G.ApplyOp(paramsOp{model: m, n: len(p.inputs)}, p.inputs...)
	if err != nil {
		return nil, fmt.Errorf("graph: parameter op: %w", err)
	}
	t := p.tables
	p.side = &physics.Side{}
	if p.image, err = G.ApplyOp(physics.PixelOp{Cfg: key.Pixels, Side: p.side}, pv, t[0], t[1], t[2], t[3]); err != nil {
		return nil, fmt.Errorf("graph: pixel op: %w", err)
	}
	// No Read instruction: it would copy the image; Image takes the value
	// the machine binds to the node.
	p.vm = G.NewTapeMachine(p.g, quietVM)
	compiles.Add(1)
	return p, nil
}

// emitInputs adds key's inputs to g: a named float64 scalar per parameter
// (fields order) and the four table vectors.
func emitInputs(g *G.ExprGraph, key Key) (inputs []*G.Node, names []string, tables [4]*G.Node) {
	var np models.Params[*G.Node]
	for _, f := range fields(&np, key.FromMatrix, key.CellLengths) {
		inputs = append(inputs, G.NewScalar(g, G.Float64, G.WithName(f.name)))
		names = append(names, f.name)
	}
	return inputs, names, emitTables(g, key)
}

// emitTables adds key's table inputs to g: structure factors, sources,
// mosaic domains and mask.
func emitTables(g *G.ExprGraph, key Key) (tables [4]*G.Node) {
	kp := &key.Pixels
	for i, t := range []struct {
		name string
		n    int
	}{{"crystal.Fhkl", kp.TableLen()}, {"beam.sources", kp.Sources * physics.SourceCols},
		{"crystal.domains", kp.Domains * physics.MosaicCols}, {"detector.mask", kp.MaskLen()}} {
		tables[i] = G.NewVector(g, G.Float64, G.WithShape(t.n), G.WithName(t.name))
	}
	return tables
}

// quietVM makes a tape machine "watch" every instruction. Without a
// logger that logs nothing, and it spares the machine its search of the
// (empty) watch list before each instruction: a map lookup and two slice
// allocations, ~20 % of a gradient run's fixed cost (pprof, 16² image).
var quietVM = G.WithWatchlist()

// takeGrad takes an idle gradient program for a loss structure from the
// pool, building one when none is idle; putGrad gives it back.
func (p *Program) takeGrad(lk lossKey) (*gradProgram, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if idle := p.grads[lk]; len(idle) > 0 {
		gp := idle[len(idle)-1]
		p.grads[lk] = idle[:len(idle)-1]
		return gp, nil
	}
	return p.buildGrad(lk)
}

func (p *Program) putGrad(lk lossKey, gp *gradProgram) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.grads[lk] = append(p.grads[lk], gp)
}

// buildGrad builds a gradient program for a loss structure. The caller
// holds p.mu.
func (p *Program) buildGrad(lk lossKey) (gp *gradProgram, err error) {
	defer func() {
		if r := recover(); r != nil {
			gp, err = nil, fmt.Errorf("graph: building gradient program: %v", r)
		}
	}()
	// The parameter maths is not in the graph: Gradient evaluates it on a
	// tape (models.Rev) into the packed vector pv and carries the loss's
	// gradient by pv back through the tape. (As ~340 primitive nodes and
	// their autograd it cost 53 ms of compile and ~0.5 ms of every run.)
	gp = &gradProgram{g: G.NewGraph()}
	gp.tables = emitTables(gp.g, p.key)
	gp.pv = G.NewVector(gp.g, G.Float64, G.WithShape(physics.NParams), G.WithName("params.packed"))
	pv := gp.pv
	n := p.key.Pixels.FPixels * p.key.Pixels.SPixels
	size := func(used bool) int {
		if used && !lk.listed {
			return n
		}
		return 1
	}
	gp.obs = G.NewVector(gp.g, G.Float64, G.WithShape(size(lk.kind.NeedsObserved())), G.WithName("loss.observed"))
	gp.wts = G.NewVector(gp.g, G.Float64, G.WithShape(size(lk.weighted)), G.WithName("loss.weights"))
	gp.bg = G.NewVector(gp.g, G.Float64, G.WithShape(size(lk.background)), G.WithName("loss.background"))
	gp.noise = G.NewVector(gp.g, G.Float64, G.WithShape(1), G.WithName("loss.read_noise"))
	// The image, loss and gradient in one fused pass (pixelLossOp); the
	// loss is element 0 of its output.
	t := gp.tables
	cfg := p.key.Pixels
	if cfg.Float32 {
		return nil, fmt.Errorf("graph: a program with a float32 image has no gradients")
	}
	cfg.CrystalOnly, cfg.NoN, cfg.NoDefaultF, cfg.NoGeometry = lk.crystal, lk.noN, lk.noDefaultF, lk.noGeometry
	op := pixelLossOp{cfg: cfg, kind: lk.kind, weighted: lk.weighted, background: lk.background}
	if lk.listed {
		gp.listed = &listedLoss{}
		op.listed = gp.listed
	}
	lg, err := G.ApplyOp(op,
		pv, t[0], t[1], t[2], t[3], gp.obs, gp.wts, gp.bg, gp.noise)
	if err != nil {
		return nil, fmt.Errorf("graph: loss: %w", err)
	}
	loss, err := G.ApplyOp(unpackOp{0, 1 + physics.NParams}, lg)
	if err != nil {
		return nil, fmt.Errorf("graph: loss: %w", err)
	}
	grads, err := G.Grad(loss, pv)
	if err != nil {
		return nil, fmt.Errorf("graph: differentiating the loss: %w", err)
	}
	G.Read(loss, &gp.lossOut)
	G.Read(grads[0], &gp.pvGrad)
	gp.vm = G.NewTapeMachine(gp.g, quietVM)
	compiles.Add(1)
	return gp, nil
}

// pack evaluates the parameter maths, crystal orientation and detector
// placement, and lays the results out as the pixel op reads them. The same
// code runs on numbers (Packed, paramsOp: the forward program), on a tape
// (packRev: the gradient programs) and on graph nodes (emit, in the tests).
func pack[T any](A models.Alg[T], m *models.Model, np *models.Params[T]) []T {
	a, b, c := models.RealVectors(A, m.Crystal, np.Crystal, np.Lambda)
	d := m.Detector
	fr := models.Place(A, d, np.Detector)
	// Reciprocal vectors (Å⁻¹), which the non-square shapes measure
	// distances with.
	as, bs, cs := models.ReciprocalOfReal(A, m.Crystal, np.Crystal, a, b, c)
	packed := make([]T, 0, physics.NParams)
	for _, v := range []models.V3[T]{fr.Pix0, fr.F, fr.S, fr.O, a, b, c, as, bs, cs} {
		packed = append(packed, v[:]...)
	}
	cp, dp := np.Crystal, np.Detector
	// The reference's distance after placement: close distance over the
	// beam/normal obliquity (before the two-theta swing).
	o := models.RotateXYZ(A, models.ConstV(A, d.ODet), dp.RotX, dp.RotY, dp.RotZ)
	distance := A.Div(models.Dot(A, fr.Pix0, fr.O), models.Dot(A, models.ConstV(A, d.Beam), o))
	// Water background (reference): F² r_e² fluence · w³ · ρ·N_A/M with
	// F = 2.57 (forward scattering of water), ρ = 10⁶ g/m³, M = 18 g/mol.
	const water = 2.57 * 2.57 * physics.ThomsonSq * 1e6 * 6.02214179e23 / 18
	w := np.Water
	ibg := A.Mul(A.Const(water), A.Mul(np.Fluence, A.Mul(w, A.Mul(w, w))))
	return append(packed, np.Lambda, np.Fluence, np.Kahn, cp.Na, cp.Nb, cp.Nc, cp.DefaultF, dp.Pixel,
		cp.Phi, cp.PhiStep, cp.Mosaic, cp.Fudge, dp.ThickStep, dp.Mu, np.Dmin, ibg, distance)
}

// Packed returns the pixel op's parameter vector for m: the graph's
// formulas evaluated in the Folded algebra, which gives the bits the
// gradient programs' primitive ops compute (TestPackedBits).
func Packed(m *models.Model) []float64 {
	p := m.Params()
	var vals []float64
	for _, f := range fields(&p, m.Crystal.FromMatrix, m.Crystal.CellLengths) {
		vals = append(vals, *f.ptr)
	}
	return packValues(m, vals)
}

// packValues evaluates pack for m's structure on the parameter values
// vals (fields order).
func packValues(m *models.Model, vals []float64) []float64 {
	var np models.Params[models.Num]
	// Parameters that are not inputs (the matrix or the cell lengths) are
	// NaN, so that a formula reading one shows at once (the graph has no
	// node for them and fails to build).
	for _, f := range fields(&np, true, true) {
		*f.ptr = models.Num{V: math.NaN()}
	}
	for i, f := range fields(&np, m.Crystal.FromMatrix, m.Crystal.CellLengths) {
		*f.ptr = models.Num{V: vals[i]}
	}
	nums := pack[models.Num](models.Folded{}, m, &np)
	out := make([]float64, len(nums))
	for i, x := range nums {
		out[i] = x.V
	}
	return out
}

// packRev evaluates pack for m's structure on the parameter values vals
// (fields order) on tape r (reset first): the packed values (packValues'
// bits) and the variables of vals, for r.Grad.
func packRev(r *models.Rev, m *models.Model, vals []float64) (packed, vars []models.RNum) {
	r.Reset()
	var np models.Params[models.RNum]
	// Parameters that are not inputs are NaN, as in packValues.
	for _, f := range fields(&np, true, true) {
		*f.ptr = r.Var(math.NaN())
	}
	fs := fields(&np, m.Crystal.FromMatrix, m.Crystal.CellLengths)
	vars = make([]models.RNum, len(fs))
	for i, f := range fs {
		*f.ptr = r.Var(vals[i])
		vars[i] = *f.ptr
	}
	return pack[models.RNum](r, m, &np), vars
}

// Key returns the program's structural key.
func (p *Program) Key() Key { return p.key }

// FloatInputs returns everything the pixel kernel reads for m, computed
// in float64 by the same formulas the graph uses: the packed parameters and
// the structure-factor, source, mosaic and mask tables.
func FloatInputs(m *models.Model) *physics.Inputs {
	in := tables(m)
	in.P = Packed(m)
	return in
}

// tables returns the kernel's table inputs for m (no parameters).
func tables(m *models.Model) *physics.Inputs {
	in := &physics.Inputs{Fhkl: []float64{0}, Mask: []float64{0}}
	if g := m.Crystal.HKL; g != nil {
		// Cells without data carry NaN; the kernel gives them the default
		// F parameter.
		in.Fhkl = g.Marked()
	}
	for _, b := range m.Beam.Sources {
		in.Sources = append(in.Sources, b.Incident[0], b.Incident[1], b.Incident[2], b.LambdaFactor)
	}
	for _, d := range m.Crystal.Domains {
		in.Mosaic = append(in.Mosaic, d.V[0], d.V[1], d.V[2], float64(d.F))
	}
	if m.Detector.Mask != nil {
		in.Mask = m.Detector.Mask
	}
	return in
}

// Names lists the program's input parameters in order.
func (p *Program) Names() []string { return append([]string(nil), p.names...) }

// Simulator is one simulation instance: a model's values bound to a
// (shared) compiled program.
type Simulator struct {
	Model *models.Model
	// Progress, when set, hears the rows of each Image or Image32 run as
	// they are rendered (rows done, rows in all), from the rendering
	// goroutines: it must be safe for concurrent use.
	Progress func(rows, total int)
	// RowDone, when set, hears each row of a float32 image (Float32Image)
	// as an Image or Image32 run finishes it: its index and its values,
	// which it must not keep or change after it returns. A row the run
	// renders again (interpolation switched off within it) is heard
	// again: the last values heard are the image's, earlier ones can be
	// provisional. It is called from the rendering
	// goroutines, each row from one at a time: it must be safe for
	// concurrent use on different rows. A float64 image's rows are not
	// heard.
	RowDone func(s int, row []float32)
	prog    *Program
	values  []float64
	tables  [4]*tensor.Dense
	solid   float64 // of the last image run
	cutoff  int     // of the last image run: the interpolation's switch-off pixel (−1: none)
	cutHKL  [3]float64
}

// New validates nothing further (the model must be validated) and binds
// the model to its program, compiling only on a cache miss.
func New(m *models.Model, opts ...Option) (*Simulator, error) {
	prog, err := ProgramFor(m, opts...)
	if err != nil {
		return nil, err
	}
	s := &Simulator{Model: m, prog: prog, solid: math.NaN(), cutoff: -1}
	pv := m.Params()
	for _, f := range fields(&pv, m.Crystal.FromMatrix, m.Crystal.CellLengths) {
		s.values = append(s.values, *f.ptr)
	}
	in := tables(m)
	for i, t := range [][]float64{in.Fhkl, in.Sources, in.Mosaic, in.Mask} {
		if want := prog.tables[i].Shape()[0]; len(t) != want {
			return nil, fmt.Errorf("graph: %s has %d values, want %d", prog.tables[i].Name(), len(t), want)
		}
		s.tables[i] = tensor.New(tensor.WithShape(len(t)), tensor.WithBacking(t))
	}
	return s, nil
}

// Program returns the compiled program the simulator runs on.
func (s *Simulator) Program() *Program { return s.prog }

// Gradient runs the program's gradient program for loss l and returns the
// loss and its gradient with respect to every parameter input (Names()
// order; zero for inputs the image does not depend on).
func (s *Simulator) Gradient(l *Loss) (value float64, grad []float64, err error) {
	return s.gradient(l, lossKey{})
}

// GradientFor is Gradient with respect to the inputs for which want
// reports true, the others' entries 0, with the wanted entries' bits.
// Leaving inputs out can make it faster: with nothing but the crystal's
// inputs and the fluence wanted (CrystalGradientInput) it is
// CrystalGradient; without N (crystal.Na, Nb, Nc) or the default F
// (crystal.default_F) the physics leaves their sums out
// (physics.Config.NoN, NoDefaultF: the mosaic case's gradient
// ~0.9x without N), and with nothing but those and the crystal's
// inputs and the fluence, the detector's and the beam's sums
// (physics.Config.NoGeometry: a fit of the crystal, its size and its
// scale). Each combination is a gradient program of its own, compiled
// on its first use. An objective's gradient runs it for the inputs its
// parameters move.
func (s *Simulator) GradientFor(l *Loss, want func(input string) bool) (value float64, grad []float64, err error) {
	parts := lossKey{crystal: true, noN: true, noDefaultF: true, noGeometry: true}
	for _, name := range s.prog.names {
		if !want(name) {
			continue
		}
		n, f := nInput(name), name == "crystal.default_F"
		parts.crystal = parts.crystal && CrystalGradientInput(name)
		parts.noN = parts.noN && !n
		parts.noDefaultF = parts.noDefaultF && !f
		parts.noGeometry = parts.noGeometry && (CrystalGradientInput(name) || n || f)
	}
	if parts.crystal {
		// (The crystal's program leaves the others out.)
		parts.noN, parts.noDefaultF, parts.noGeometry = false, false, false
	}
	if value, grad, err = s.gradient(l, parts); err != nil {
		return 0, nil, err
	}
	for i, name := range s.prog.names {
		if !want(name) {
			grad[i] = 0
		}
	}
	return value, grad, nil
}

// CrystalGradient is Gradient with respect to the crystal's inputs and
// the fluence alone (CrystalGradientInput: the cell, orientation, φ,
// mosaic spread and the fluence), the same bits; the other inputs' entries
// are 0. It leaves out what only they need (physics.Config.CrystalOnly):
// a fit of the cell and orientation runs it, and so do its coarse
// stages, which refine the fluence as well.
func (s *Simulator) CrystalGradient(l *Loss) (value float64, grad []float64, err error) {
	return s.gradient(l, lossKey{crystal: true})
}

// CrystalInput reports whether the graph input named name is one of the
// crystal's that CrystalGradient differentiates by: those of its cell
// (or matrix), misset, orientation, φ and φ step, and mosaic spread.
// (Their maths reaches the physics only through its crystal parameters:
// the real and reciprocal axes, φ and the spread.)
func CrystalInput(name string) bool {
	switch name {
	case "crystal.a", "crystal.b", "crystal.c", "crystal.alpha", "crystal.beta", "crystal.gamma",
		"crystal.misset_x", "crystal.misset_y", "crystal.misset_z",
		"crystal.orient_x", "crystal.orient_y", "crystal.orient_z",
		"crystal.phi", "crystal.phistep", "crystal.mosaic":
		return true
	}
	return strings.HasPrefix(name, "crystal.mat")
}

// CrystalGradientInput reports whether CrystalGradient differentiates by
// the graph input named name: the crystal's (CrystalInput) and the
// fluence, which reaches the physics through the scale and the water
// background's seed alone (two sums over the pixels).
func CrystalGradientInput(name string) bool {
	return CrystalInput(name) || name == "beam.fluence"
}

// nInput reports whether the graph input named name is one of the
// crystal's sizes in unit cells, Na, Nb, Nc (GradientFor's N).
func nInput(name string) bool {
	return name == "crystal.Na" || name == "crystal.Nb" || name == "crystal.Nc"
}

// gradient is Gradient with the parts lossKey's crystal, noN,
// noDefaultF and noGeometry leave out.
func (s *Simulator) gradient(l *Loss, parts lossKey) (value float64, grad []float64, err error) {
	p := s.prog
	n := p.key.Pixels.FPixels * p.key.Pixels.SPixels
	if err := l.check(n); err != nil {
		return 0, nil, err
	}
	lk := lossKey{kind: l.Kind, weighted: l.Weights != nil, background: l.Background != nil, listed: l.Pixels != nil,
		crystal: parts.crystal, noN: parts.noN, noDefaultF: parts.noDefaultF, noGeometry: parts.noGeometry}
	gp, err := p.takeGrad(lk)
	if err != nil {
		return 0, nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			value, grad, err = 0, nil, fmt.Errorf("graph: gradient run: %v", r)
			return // a machine that panicked is not reused
		}
		p.putGrad(lk, gp)
	}()
	gp.vm.Reset()
	packed, vars := packRev(&gp.rev, p.model, s.values)
	pv := make([]float64, len(packed))
	for i, x := range packed {
		pv[i] = x.V
	}
	if err := G.Let(gp.pv, tensor.New(tensor.WithShape(len(pv)), tensor.WithBacking(pv))); err != nil {
		return 0, nil, fmt.Errorf("graph: setting %s: %w", gp.pv.Name(), err)
	}
	if err := s.let(nil, gp.tables); err != nil {
		return 0, nil, err
	}
	obs, wts, bg := []float64{0}, []float64{0}, []float64{0}
	if lk.listed {
		gp.listed.l = l.pixel()
		defer func() { gp.listed.l = nil }()
	} else {
		if l.Kind.NeedsObserved() {
			obs = l.Observed
		}
		if l.Weights != nil {
			wts = l.Weights
		}
		if l.Background != nil {
			bg = l.Background
		}
	}
	for _, v := range []struct {
		n *G.Node
		d []float64
	}{{gp.obs, obs}, {gp.wts, wts}, {gp.bg, bg}, {gp.noise, []float64{l.ReadNoise}}} {
		if err := G.Let(v.n, tensor.New(tensor.WithShape(len(v.d)), tensor.WithBacking(v.d))); err != nil {
			return 0, nil, fmt.Errorf("graph: setting %s: %w", v.n.Name(), err)
		}
	}
	if err := gp.vm.RunAll(); err != nil {
		return 0, nil, fmt.Errorf("graph: gradient run: %w", err)
	}
	lv, ok := gp.lossOut.(*G.F64)
	if !ok {
		return 0, nil, fmt.Errorf("graph: loss is %T", gp.lossOut)
	}
	pt, ok := gp.pvGrad.(tensor.Tensor)
	if !ok {
		return 0, nil, fmt.Errorf("graph: gradient by the packed parameters is %T", gp.pvGrad)
	}
	pg, ok := pt.Data().([]float64)
	if !ok || len(pg) != len(packed) {
		return 0, nil, fmt.Errorf("graph: gradient by the packed parameters is %T", pt.Data())
	}
	grad, gp.adj = gp.rev.Grad(packed, pg, vars, gp.adj)
	if lk.crystal {
		// (An input that is not among them may still reach the
		// parameters CrystalOnly keeps: λ the crystal's of a -matrix
		// crystal, the water's size its background's seed.)
		for i, name := range p.names {
			if !CrystalGradientInput(name) {
				grad[i] = 0
			}
		}
	}
	return float64(*lv), grad, nil
}

// Loss computes loss l of the simulator's image (a forward run only).
func (s *Simulator) Loss(l *Loss) (float64, error) {
	n := s.prog.key.Pixels.FPixels * s.prog.key.Pixels.SPixels
	if err := l.check(n); err != nil {
		return 0, err
	}
	img, err := s.Image()
	if err != nil {
		return 0, err
	}
	return l.pixel().Value(img), nil
}

// let binds the simulator's parameter values and tables to inputs.
func (s *Simulator) let(inputs []*G.Node, tables [4]*G.Node) error {
	for i, n := range inputs {
		if err := G.Let(n, s.values[i]); err != nil {
			return fmt.Errorf("graph: setting %s: %w", n.Name(), err)
		}
	}
	for i, n := range tables {
		if err := G.Let(n, s.tables[i]); err != nil {
			return fmt.Errorf("graph: setting %s: %w", n.Name(), err)
		}
	}
	return nil
}

// Image runs the program and returns the photon image, slow-major,
// FPixels·SPixels values.
func (s *Simulator) Image() ([]float64, error) {
	v, err := s.run()
	switch d := v.(type) {
	case []float64:
		return d, err
	case []float32:
		img := make([]float64, len(d))
		for i, x := range d {
			img[i] = float64(x)
		}
		return img, err
	}
	return nil, err
}

// Image32 is Image in float32: the stored image itself for a program
// built with Float32Image, else the float64 image rounded.
func (s *Simulator) Image32() ([]float32, error) {
	v, err := s.run()
	switch d := v.(type) {
	case []float32:
		return d, err
	case []float64:
		img := make([]float32, len(d))
		for i, x := range d {
			img[i] = float32(x)
		}
		return img, err
	}
	return nil, err
}

// SolidAngle is the reference's "solid angle subtended by detector"
// (physics.SolidAngle) of the last Image or Image32 run, summed by the
// same pass over the pixels; NaN before the first run.
func (s *Simulator) SolidAngle() float64 { return s.solid }

// InterpolationCutoff is physics.InterpolationCutoff of the last Image or
// Image32 run, found by that run: the pixel (scan order) at which the
// reference switches tricubic interpolation off and the fractional indices
// that caused it; −1 when it did not (or before the first run).
func (s *Simulator) InterpolationCutoff() (pixel int, hkl [3]float64) { return s.cutoff, s.cutHKL }

// run renders the image and hands over its backing slice: every run
// allocates a new one, and the machine and graph let go of it here, so the
// cached program keeps no image alive and nothing is copied.
func (s *Simulator) run() (data any, err error) {
	p := s.prog
	p.mu.Lock()
	defer p.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("graph: run: %v", r)
		}
	}()
	defer func() {
		p.vm.Reset()
		p.g.UnbindAllNonInputs()
	}()
	p.vm.Reset()
	if err := s.let(p.inputs, p.tables); err != nil {
		return nil, err
	}
	p.side.Progress, p.side.RowDone = s.Progress, s.RowDone
	defer func() { p.side.Progress, p.side.RowDone = nil, nil }()
	if err := p.vm.RunAll(); err != nil {
		return nil, fmt.Errorf("graph: run: %w", err)
	}
	t, ok := p.image.Value().(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("graph: image is %T", p.image.Value())
	}
	s.solid, s.cutoff, s.cutHKL = p.side.SolidAngle, p.side.Cutoff, p.side.CutoffHKL
	switch d := t.Data().(type) {
	case []float64, []float32:
		return d, nil
	}
	return nil, fmt.Errorf("graph: image data is %T", t.Data())
}
