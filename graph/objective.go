package graph

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/physics"
)

// Objective is a loss on a model's image as a function of named user
// parameters (models.UserParams: Å, degrees, mm): the function that
// gradient checks and fits work on. Its gradient comes from one run of the
// cached gradient program (the loss's gradient with respect to the graph's
// SI inputs) and the Jacobian of the inputs with respect to the user
// parameters, which is exact for every parameter but the detector
// rotations under a SAMPLE pivot (there -distance fixes the close distance
// through the beam obliquity; a fourth-order difference of that cheap map
// is used).
//
// A weighted Loss is evaluated as a pixel list of the pixels it weighs
// (Loss.Listed: the same bits, and a fit's spot boxes cost what their
// pixels do, not what the detector's do), made at the first evaluation
// and again whenever one of Loss's slices is replaced by another: change
// Loss by assigning new slices, not by writing into the ones it has.
type Objective struct {
	Model *models.Model // the model whose other values stay fixed
	Names []string      // the parameters, in x order
	Loss  Loss

	cutoffOnce sync.Once
	cutoff     int // Model's interpolation switch-off pixel, or −1

	listMu   sync.Mutex
	listFrom Loss  // the Loss listed was made from
	listed   *Loss // Loss as a pixel list, or nil
}

// evalLoss is the loss the evaluations take: Loss, or for a weighted one
// its pixel list (Loss.Listed), made again when Loss's kind, read-out
// noise or slices (by identity, not by value) are not those it was made
// from. Loss is checked against the model's image first, so that a wrong
// one is refused as it was before it was listed.
func (o *Objective) evalLoss() *Loss {
	l := o.Loss
	d := o.Model.Detector
	if l.Weights == nil || l.Pixels != nil || l.check(d.FPixels*d.SPixels) != nil {
		return &l // (a loss the simulator refuses: it says why)
	}
	o.listMu.Lock()
	defer o.listMu.Unlock()
	f := &o.listFrom
	if o.listed == nil || f.Kind != l.Kind || f.ReadNoise != l.ReadNoise || !same(f.Observed, l.Observed) ||
		!same(f.Weights, l.Weights) || !same(f.Background, l.Background) {
		ll := l.Listed()
		o.listFrom, o.listed = l, &ll
	}
	return o.listed
}

// same reports whether a and b are the same slice: the same length and,
// unless empty, the same first element.
func same(a, b []float64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// NewObjective checks that every name is a parameter of m.
func NewObjective(m *models.Model, names []string, loss Loss) (*Objective, error) {
	seen := map[string]bool{}
	for _, n := range names {
		if _, err := m.Get(n); err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("parameter %s given twice", n)
		}
		seen[n] = true
	}
	return &Objective{Model: m, Names: names, Loss: loss}, nil
}

// Start returns the parameters' values in Model.
func (o *Objective) Start() []float64 {
	x := make([]float64, len(o.Names))
	for i, n := range o.Names {
		x[i], _ = o.Model.Get(n)
	}
	return x
}

// At returns Model with the parameters set to x.
func (o *Objective) At(x []float64) (*models.Model, error) {
	if len(x) != len(o.Names) {
		return nil, fmt.Errorf("graph: %d values for %d parameters", len(x), len(o.Names))
	}
	m := o.Model
	for i, n := range o.Names {
		if v, _ := m.Get(n); v == x[i] {
			continue
		}
		var err error
		if m, err = m.With(n, x[i]); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Value is the loss at x (a forward run).
func (o *Objective) Value(x []float64) (float64, error) {
	m, err := o.At(x)
	if err != nil {
		return 0, err
	}
	s, err := New(m)
	if err != nil {
		return 0, err
	}
	return s.Loss(o.evalLoss())
}

// Gradient is the loss at x and its gradient with respect to x, in the
// parameters' units.
func (o *Objective) Gradient(x []float64) (float64, []float64, error) {
	m, err := o.At(x)
	if err != nil {
		return 0, nil, err
	}
	inputs := inputNames(m)
	jacs := make([][]float64, len(x))
	moved := map[string]bool{} // the inputs the parameters move: the gradient's wanted entries
	for i, n := range o.Names {
		if jacs[i], err = inputJacobian(m, n, x[i], inputs); err != nil {
			return 0, nil, err
		}
		for j, d := range jacs[i] {
			if d != 0 {
				moved[inputs[j]] = true
			}
		}
	}
	s, err := New(m)
	if err != nil {
		return 0, nil, err
	}
	v, gin, err := s.GradientFor(o.evalLoss(), func(name string) bool { return moved[name] })
	if err != nil {
		return 0, nil, err
	}
	g := make([]float64, len(x))
	for i, jac := range jacs {
		for j, d := range jac {
			if d != 0 {
				g[i] += d * gin[j]
			}
		}
	}
	return v, g, nil
}

// fieldParams are the user parameters that models.Model.With stores in
// one graph input as their value times a constant (degrees to radians,
// Å to m for λ): their column of the Jacobian is that constant in that
// input's place, with no model built (a fit's evaluation built and
// validated its model four times per parameter for the difference below:
// 7 % of the Fitting section's fit's profile). TestFieldParamsJacobian compares
// each with the difference.
var fieldParams = map[string]struct {
	field string
	scale float64
}{
	"a": {"crystal.a", 1}, "b": {"crystal.b", 1}, "c": {"crystal.c", 1},
	"alpha": {"crystal.alpha", deg}, "beta": {"crystal.beta", deg}, "gamma": {"crystal.gamma", deg},
	"misset_x": {"crystal.misset_x", deg}, "misset_y": {"crystal.misset_y", deg}, "misset_z": {"crystal.misset_z", deg},
	"orient_x": {"crystal.orient_x", deg}, "orient_y": {"crystal.orient_y", deg}, "orient_z": {"crystal.orient_z", deg},
	"phi": {"crystal.phi", deg}, "mosaic_spread": {"crystal.mosaic", deg},
	"Na": {"crystal.Na", 1}, "Nb": {"crystal.Nb", 1}, "Nc": {"crystal.Nc", 1},
	"default_F": {"crystal.default_F", 1},
	"lambda":    {"beam.lambda", 1e-10}, "fluence": {"beam.fluence", 1}, "polar": {"beam.kahn", 1},
}

// deg is one degree in radians.
const deg = math.Pi / 180

// inputJacobian is ∂(graph inputs)/∂(user parameter name) at value v of
// m, whose inputs are named inputs (inputNames): for fieldParams the
// constant in its input's place (where m has that input), else
// numericJacobian's difference.
func inputJacobian(m *models.Model, name string, v float64, inputs []string) ([]float64, error) {
	if fp, ok := fieldParams[name]; ok {
		if j := slices.Index(inputs, fp.field); j >= 0 {
			jac := make([]float64, len(inputs))
			jac[j] = fp.scale
			return jac, nil
		}
	}
	return numericJacobian(m, name, v)
}

// inputNames lists the names of m's graph inputs, in fields order (they
// depend on how its crystal is given, not on the values).
func inputNames(m *models.Model) []string {
	var p models.Params[float64]
	fs := fields(&p, m.Crystal.FromMatrix, m.Crystal.CellLengths)
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

// numericJacobian is ∂(graph inputs)/∂(user parameter name) at value v of m:
// a fourth-order central difference of the (cheap, image-free) map from
// the parameter to the inputs. The map is affine for all but the rotations
// of a SAMPLE-pivot detector, where the difference is exact to ~1e-15.
func numericJacobian(m *models.Model, name string, v float64) ([]float64, error) {
	p, _ := models.LookupParam(name)
	h := 1e3 * p.StepAt(v)
	at := func(offsets ...float64) ([][]float64, error) {
		out := make([][]float64, len(offsets))
		for k, f := range offsets {
			mk, err := m.With(name, v+f*h)
			if err != nil {
				return nil, err
			}
			out[k] = values(mk)
		}
		return out, nil
	}
	vals, err := at(-2, -1, 1, 2)
	if err != nil {
		// At a bound (zero mosaic spread): a one-sided second-order
		// difference, exact for the affine maps such bounds apply to.
		fw, err2 := at(0, 1, 2)
		if err2 != nil {
			return nil, fmt.Errorf("graph: %s: %w", name, err)
		}
		jac := make([]float64, len(fw[0]))
		for j := range jac {
			// Differences first: a value that does not change gives 0.
			jac[j] = (4*(fw[1][j]-fw[0][j]) - (fw[2][j] - fw[0][j])) / (2 * h)
		}
		return jac, nil
	}
	jac := make([]float64, len(vals[0]))
	for j := range jac {
		jac[j] = (8*(vals[2][j]-vals[1][j]) - (vals[3][j] - vals[0][j])) / (12 * h)
	}
	return jac, nil
}

// values lists m's graph input values in fields() order.
func values(m *models.Model) []float64 {
	pv := m.Params()
	fs := fields(&pv, m.Crystal.FromMatrix, m.Crystal.CellLengths)
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = *f.ptr
	}
	return out
}

// NotDifferentiable says why the image is not differentiable in
// parameter name at the start model ("" when it is): the model's own
// reasons, and the tricubic interpolation switching off part-way through
// the image (the switch point moves in whole pixels).
func (o *Objective) NotDifferentiable(name string) string {
	if r := o.Model.NotDifferentiable(name); r != "" {
		return r
	}
	p, _ := models.LookupParam(name)
	if c := o.Model.Crystal; p.Moves && c.Interpolate && c.HKL != nil {
		// One walk over the image, shared by every parameter asked about.
		o.cutoffOnce.Do(func() {
			cfg := KeyOf(o.Model).Pixels
			o.cutoff, _ = physics.InterpolationCutoff(&cfg, FloatInputs(o.Model))
		})
		if o.cutoff >= 0 {
			return fmt.Sprintf("interpolation switches off at pixel %d (reference rule): the switch point moves in steps", o.cutoff)
		}
	}
	return ""
}
