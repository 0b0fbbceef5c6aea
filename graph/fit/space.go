package fit

import (
	"errors"
	"fmt"
	"math"

	"github.com/gobragg/gobragg/models"
)

// Bound is the range a fitted parameter stays in, in its unit.
type Bound struct {
	Lo, Hi float64
}

// DefaultBound is the range a parameter at start value v is refined in
// when the user names none: lengths ±10 %, cell angles ±5°, rotations
// ±5°, distances ±5 %, the beam centre ±1 mm, the wavelength ±2 %, N from
// 1 to 3× its start (at least +4), the mosaic spread from 0 to 5× its
// start (at least 1°), scales (fluence, default_F) 1/100 to 100×, the
// polarization factor −1 to 1.
func DefaultBound(name string, v float64) Bound {
	switch name {
	case "a", "b", "c":
		return Bound{0.9 * v, 1.1 * v}
	case "alpha", "beta", "gamma", "misset_x", "misset_y", "misset_z", "orient_x", "orient_y", "orient_z",
		"phi", "rotx", "roty", "rotz", "twotheta":
		return Bound{v - 5, v + 5}
	case "distance", "close_distance":
		return Bound{0.95 * v, 1.05 * v}
	case "xbeam", "ybeam":
		return Bound{v - 1, v + 1}
	case "lambda":
		return Bound{0.98 * v, 1.02 * v}
	case "Na", "Nb", "Nc":
		return Bound{1, math.Max(3*v, v+4)}
	case "mosaic_spread":
		return Bound{0, math.Max(5*v, 1)}
	case "fluence", "default_F":
		return Bound{v / 100, v * 100}
	case "polar":
		return Bound{-1, 1}
	}
	return Bound{math.Inf(-1), math.Inf(1)}
}

// CheckBound reports why b cannot be parameter name's bound in a fit of
// model m (nil when it can): its ends must be finite with Lo < Hi,
// positive for a log-scaled parameter (its map works on the logarithm),
// and each a value the model accepts (models.Model.With, which applies
// the models package's own ranges: a cell edge of 10⁹ Å is refused there,
// and would stop the fit when a trial point came near it). The ends are
// tried one at a time, the other parameters at m's values. Whether m's
// own value lies inside b is for the fit to judge. The error does not
// repeat the bound: callers name it.
func CheckBound(m *models.Model, name string, b Bound) error {
	if !(b.Lo < b.Hi) || math.IsInf(b.Lo, 0) || math.IsInf(b.Hi, 0) {
		return errors.New("want two finite numbers lo < hi")
	}
	if logScaled(name) && !(b.Lo > 0) {
		return errors.New("a scale's bound must be positive")
	}
	for _, v := range []float64{b.Lo, b.Hi} {
		if _, err := m.With(name, v); err != nil {
			return fmt.Errorf("the model refuses %s = %g (%w)", name, v, err)
		}
	}
	return nil
}

// logScaled parameters are mapped through their logarithm: their
// bounds are factors.
func logScaled(name string) bool { return name == "fluence" || name == "default_F" }

// space maps the optimiser's unbounded variables z to the parameters x,
// each through a logistic function onto its bound (or, for the
// log-scaled ones, onto its bound's logarithm):
//
//	x = lo + (hi − lo)·σ(u0 + κ·z),  σ(u) = 1/(1 + e^(−u)),
//
// with u0 placing z = 0 at the start and κ making dx/dz there the
// parameter's scale (Scale; less where the start lies so near a bound
// that this would take κ above 1): so no trial point is ever outside the
// bounds, and near the start the variables are the rescaled coordinates
// (x − x0)/scale that condition Å, degrees and millimetres alike.
type space struct {
	names       []string // for messages (per-image ones carry their image)
	base        []string // the parameters' own names
	bounds      []Bound
	x0, lo, hi  []float64 // lo, hi: of ln x for log-scaled parameters
	log         []bool
	u0, kappa   []float64
	scale       []float64 // dx/dz at the start
	unbounded   []bool
	startNudged []bool // the start sat on a bound and was moved inside
}

// resolveBounds returns each parameter's bound: the user's by name, or
// DefaultBound at its start.
func resolveBounds(base []string, x0 []float64, user map[string]Bound) []Bound {
	out := make([]Bound, len(base))
	for i, name := range base {
		b, ok := user[name]
		if !ok {
			b = DefaultBound(name, x0[i])
		}
		out[i] = b
	}
	return out
}

// newSpace builds the map for parameters starting at x0 within bounds
// (names for messages, base the parameters' own names).
func newSpace(names, base []string, x0 []float64, bounds []Bound) (*space, error) {
	n := len(names)
	sp := &space{names: names, base: base, bounds: bounds, x0: append([]float64(nil), x0...), lo: make([]float64, n), hi: make([]float64, n),
		log: make([]bool, n), u0: make([]float64, n), kappa: make([]float64, n), scale: make([]float64, n),
		unbounded: make([]bool, n), startNudged: make([]bool, n)}
	for i, name := range names {
		b := bounds[i]
		if !(b.Lo < b.Hi) || math.IsNaN(b.Lo) || math.IsNaN(b.Hi) {
			return nil, fmt.Errorf("bound of %s: %g:%g is empty", name, b.Lo, b.Hi)
		}
		sp.scale[i] = Scale(base[i], x0[i])
		if !(sp.scale[i] > 0) || math.IsInf(sp.scale[i], 0) {
			sp.scale[i] = 1
		}
		if math.IsInf(b.Lo, -1) && math.IsInf(b.Hi, 1) {
			sp.unbounded[i] = true
			continue
		}
		if math.IsInf(b.Lo, 0) || math.IsInf(b.Hi, 0) {
			return nil, fmt.Errorf("bound of %s: %g:%g: give both ends or neither", name, b.Lo, b.Hi)
		}
		if !(x0[i] >= b.Lo && x0[i] <= b.Hi) {
			return nil, fmt.Errorf("%s starts at %g, outside its bound %g:%g", name, x0[i], b.Lo, b.Hi)
		}
		lo, hi, x, s := b.Lo, b.Hi, x0[i], sp.scale[i]
		if logScaled(base[i]) {
			if !(lo > 0) {
				return nil, fmt.Errorf("bound of %s: %g:%g: a scale's bound must be positive", name, b.Lo, b.Hi)
			}
			sp.log[i] = true
			s /= x
			lo, hi, x = math.Log(lo), math.Log(hi), math.Log(x)
		}
		// A start on a bound moves a thousandth of the range inside.
		if d := 1e-3 * (hi - lo); x < lo+d || x > hi-d {
			x = math.Max(lo+d, math.Min(hi-d, x))
			sp.startNudged[i] = true
		}
		t := (x - lo) / (hi - lo)
		sp.lo[i], sp.hi[i] = lo, hi
		sp.u0[i] = math.Log(t / (1 - t))
		// At most one logistic unit per unit of z: near a bound the map
		// would otherwise saturate within a fraction of a step.
		sp.kappa[i] = math.Min(s/((hi-lo)*t*(1-t)), 1)
	}
	return sp, nil
}

// X maps z to the parameters.
func (sp *space) X(z []float64) []float64 {
	x := make([]float64, len(z))
	for i := range z {
		x[i] = sp.x(i, z[i])
	}
	return x
}

func (sp *space) x(i int, z float64) float64 {
	if sp.unbounded[i] {
		return sp.x0[i] + sp.scale[i]*z
	}
	t := logistic(sp.u0[i] + sp.kappa[i]*z)
	v := sp.lo[i] + (sp.hi[i]-sp.lo[i])*t
	if sp.log[i] {
		v = math.Exp(v)
	}
	// Within the bound as given, whatever the rounding of the logarithms.
	b := sp.bounds[i]
	return math.Max(b.Lo, math.Min(b.Hi, v))
}

// Jac is dx/dz at z (the map is diagonal).
func (sp *space) Jac(z []float64) []float64 {
	d := make([]float64, len(z))
	for i := range z {
		if sp.unbounded[i] {
			d[i] = sp.scale[i]
			continue
		}
		t := logistic(sp.u0[i] + sp.kappa[i]*z[i])
		d[i] = (sp.hi[i] - sp.lo[i]) * t * (1 - t) * sp.kappa[i]
		if sp.log[i] {
			d[i] *= sp.x(i, z[i])
		}
	}
	return d
}

// Z maps parameters inside their bounds back to z (NaN outside).
func (sp *space) Z(x []float64) []float64 {
	z := make([]float64, len(x))
	for i, v := range x {
		if sp.unbounded[i] {
			z[i] = (v - sp.x0[i]) / sp.scale[i]
			continue
		}
		if sp.log[i] {
			v = math.Log(v)
		}
		t := (v - sp.lo[i]) / (sp.hi[i] - sp.lo[i])
		z[i] = (math.Log(t/(1-t)) - sp.u0[i]) / sp.kappa[i]
	}
	return z
}

// Bound returns parameter i's bound in its unit.
func (sp *space) Bound(i int) Bound { return sp.bounds[i] }

func logistic(u float64) float64 {
	if u >= 0 {
		return 1 / (1 + math.Exp(-u))
	}
	e := math.Exp(u)
	return e / (1 + e)
}

// Scale is the typical change of parameter name at value v: the unit of
// the optimiser's coordinates near the start.
func Scale(name string, v float64) float64 {
	p, _ := models.LookupParam(name)
	switch p.Unit {
	case "Å":
		if name == "lambda" {
			return 1e-3 * math.Abs(v)
		}
		return 0.01 * math.Abs(v)
	case "deg":
		return 1
	case "mm":
		return 0.1
	case "cells":
		return 0.5
	}
	if name == "polar" || v == 0 {
		return 0.1 // the Kahn factor lies in [−1, 1]
	}
	return 0.1 * math.Abs(v) // fluence, default_F: 10 %
}
