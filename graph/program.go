package graph

import (
	"fmt"
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
	Pixels     physics.Config
	FromMatrix bool
	Pivot      models.Pivot
	HasPix0    bool
	Pix0       [3]float64
	// Unrotated detector axes, fixed by the convention (or CUSTOM input).
	FDet, SDet, ODet, Beam, TwoThetaAxis, Spindle [3]float64
}

// KeyOf returns a validated model's structural key.
func KeyOf(m *models.Model) Key {
	d, c := m.Detector, m.Crystal
	cfg := physics.Config{FPixels: d.FPixels, SPixels: d.SPixels, Oversample: d.Oversample, PhiSteps: m.PhiSteps,
		PointPixel: d.PointPixel, NoPolar: m.Beam.NoPolar, OversampleOmega: d.OversampleOmega,
		OversamplePolar: d.OversamplePolar, Beam: d.Beam, PolarAxis: d.Polar}
	if c.HKL != nil {
		cfg.HasHKL = true
		cfg.HMin, cfg.HMax, cfg.KMin, cfg.KMax, cfg.LMin, cfg.LMax = c.HKL.HMin, c.HKL.HMax, c.HKL.KMin, c.HKL.KMax, c.HKL.LMin, c.HKL.LMax
	}
	k := Key{Pixels: cfg, FromMatrix: c.FromMatrix, Pivot: d.Pivot, HasPix0: d.HasPix0,
		FDet: d.FDet, SDet: d.SDet, ODet: d.ODet, Beam: d.Beam, TwoThetaAxis: d.TwoThetaAxis, Spindle: d.Spindle}
	if d.HasPix0 {
		k.Pix0 = d.Pix0
	}
	return k
}

// Program is a compiled expression graph: scalar parameter inputs →
// parameter maths (primitive ops) → packed parameters → fused pixel op →
// image. Runs are serialised by a lock: one machine per graph.
type Program struct {
	key    Key
	g      *G.ExprGraph
	vm     G.VM
	inputs []*G.Node // in fields() order
	names  []string
	fhkl   *G.Node
	image  *G.Node
	out    G.Value // read target of image
	mu     sync.Mutex
}

var (
	cacheMu  sync.Mutex
	cache    = map[Key]*Program{}
	compiles atomic.Int64
)

// Compiles reports how many programs have been built since start: a cache
// hit does not add to it.
func Compiles() int64 { return compiles.Load() }

// ProgramFor returns the cached program for key, building it on a miss.
func ProgramFor(m *models.Model) (*Program, error) {
	key := KeyOf(m)
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if p, ok := cache[key]; ok {
		return p, nil
	}
	p, err := build(key, m)
	if err != nil {
		return nil, err
	}
	cache[key] = p
	return p, nil
}

// build emits the graph for key. The model supplies only structure that
// key already pins down (convention vectors, pivot); its values are not
// baked in.
func build(key Key, m *models.Model) (p *Program, err error) {
	defer func() {
		// gorgonia's constructors panic on malformed graphs; report instead.
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("graph: building program: %v", r)
		}
	}()
	g := G.NewGraph()
	A := &models.Graph{G: g}
	var np models.Params[*G.Node]
	p = &Program{key: key, g: g}
	for _, f := range fields(&np, key.FromMatrix) {
		*f.ptr = G.NewScalar(g, G.Float64, G.WithName(f.name))
		p.inputs = append(p.inputs, *f.ptr)
		p.names = append(p.names, f.name)
	}
	packed := pack[*G.Node](A, m, &np)
	if A.Err != nil {
		return nil, A.Err
	}
	pv, err := G.ApplyOp(packOp{len(packed)}, packed...)
	if err != nil {
		return nil, fmt.Errorf("graph: packing parameters: %w", err)
	}
	p.fhkl = G.NewVector(g, G.Float64, G.WithShape(key.Pixels.TableLen()), G.WithName("crystal.Fhkl"))
	p.image, err = G.ApplyOp(physics.PixelOp{Cfg: key.Pixels}, pv, p.fhkl)
	if err != nil {
		return nil, fmt.Errorf("graph: pixel op: %w", err)
	}
	G.Read(p.image, &p.out)
	p.vm = G.NewTapeMachine(g)
	compiles.Add(1)
	return p, nil
}

// pack evaluates the parameter maths, crystal orientation and detector
// placement, and lays the results out as the pixel op reads them. The same
// code runs on numbers (Packed) and on graph nodes (build).
func pack[T any](A models.Alg[T], m *models.Model, np *models.Params[T]) []T {
	a, b, c := models.Oriented(A, m.Crystal, np.Crystal, np.Lambda, m.Detector.Spindle)
	fr := models.Place(A, m.Detector, np.Detector)
	packed := make([]T, 0, physics.NParams)
	for _, v := range []models.V3[T]{fr.Pix0, fr.F, fr.S, fr.O, a, b, c} {
		packed = append(packed, v[:]...)
	}
	cp := np.Crystal
	return append(packed, np.Lambda, np.Fluence, np.Kahn, cp.Na, cp.Nb, cp.Nc, cp.DefaultF, np.Detector.Pixel)
}

// Packed returns the pixel op's parameter vector for m, computed in
// float64 by the same formulas the graph uses.
func Packed(m *models.Model) []float64 {
	p := m.Params()
	return pack[float64](models.Float{}, m, &p)
}

// Key returns the program's structural key.
func (p *Program) Key() Key { return p.key }

// Names lists the program's input parameters in order.
func (p *Program) Names() []string { return append([]string(nil), p.names...) }

// Simulator is one simulation instance: a model's values bound to a
// (shared) compiled program.
type Simulator struct {
	Model  *models.Model
	prog   *Program
	values []float64
	fhkl   *tensor.Dense
}

// New validates nothing further (the model must be validated) and binds
// the model to its program, compiling only on a cache miss.
func New(m *models.Model) (*Simulator, error) {
	prog, err := ProgramFor(m)
	if err != nil {
		return nil, err
	}
	s := &Simulator{Model: m, prog: prog}
	pv := m.Params()
	for _, f := range fields(&pv, m.Crystal.FromMatrix) {
		s.values = append(s.values, *f.ptr)
	}
	table := []float64{0}
	if m.Crystal.HKL != nil {
		table = m.Crystal.HKL.F
	}
	if len(table) != prog.key.Pixels.TableLen() {
		return nil, fmt.Errorf("graph: structure-factor table has %d values, want %d", len(table), prog.key.Pixels.TableLen())
	}
	s.fhkl = tensor.New(tensor.WithShape(len(table)), tensor.WithBacking(table))
	return s, nil
}

// Program returns the compiled program the simulator runs on.
func (s *Simulator) Program() *Program { return s.prog }

// Image runs the program and returns the photon image, slow-major,
// FPixels·SPixels values.
func (s *Simulator) Image() (img []float64, err error) {
	p := s.prog
	p.mu.Lock()
	defer p.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("graph: run: %v", r)
		}
	}()
	p.vm.Reset()
	for i, n := range p.inputs {
		if err := G.Let(n, s.values[i]); err != nil {
			return nil, fmt.Errorf("graph: setting %s: %w", p.names[i], err)
		}
	}
	if err := G.Let(p.fhkl, s.fhkl); err != nil {
		return nil, fmt.Errorf("graph: setting structure factors: %w", err)
	}
	if err := p.vm.RunAll(); err != nil {
		return nil, fmt.Errorf("graph: run: %w", err)
	}
	t, ok := p.out.(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("graph: image is %T", p.out)
	}
	d, ok := t.Data().([]float64)
	if !ok {
		return nil, fmt.Errorf("graph: image data is %T", t.Data())
	}
	return append([]float64(nil), d...), nil
}
