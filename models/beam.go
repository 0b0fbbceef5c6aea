package models

import (
	"fmt"
	"math"
)

// Beam is a validated monochromatic, non-divergent incident beam in SI
// units. Its direction and polarization axis belong to the Detector's
// convention (Detector.Beam, Detector.Polar).
type Beam struct {
	Lambda  float64 // wavelength, m
	Fluence float64 // photons per m²
	// Kahn is the Kahn polarization factor K (0: unpolarized, 1: fully
	// polarized along the convention's polarization axis).
	Kahn float64
	// NoPolar switches the polarization correction off (factor 1).
	NoPolar bool
	// Sources are the incident directions and relative wavelengths
	// (divergence × dispersion, or a source file); at least one.
	Sources []Source
	// Water is the thickness (m) of water around the crystal that makes
	// the reference's flat background; Dmin the resolution cut-off (m).
	Water, Dmin float64
}

// Source is one point source: the incident unit vector (source → sample)
// and its wavelength relative to Beam.Lambda.
type Source struct {
	Incident     [3]float64
	LambdaFactor float64
}

// Validate checks the beam's numbers.
func (b *Beam) Validate() error {
	if !(b.Lambda >= minLambda && b.Lambda <= maxLambda) {
		return fmt.Errorf("models: wavelength %.6g Å: must lie between %g and %g Å", b.Lambda*1e10, minLambda*1e10, maxLambda*1e10)
	}
	if !(b.Fluence >= 0 && b.Fluence <= maxFluence) {
		return fmt.Errorf("models: fluence %g photons/m²: must be a non-negative number of at most %g", b.Fluence, maxFluence)
	}
	if !(math.Abs(b.Kahn) <= 1) {
		return fmt.Errorf("models: -polar %g: the Kahn polarization factor must lie between -1 and 1", b.Kahn)
	}
	if !(b.Water >= 0 && b.Water <= 1) {
		return fmt.Errorf("models: -water %.6g µm: must be a thickness between 0 and 1e6 µm", b.Water*1e6)
	}
	if !(b.Dmin >= 0) || math.IsInf(b.Dmin, 0) {
		return fmt.Errorf("models: -dmin %.6g Å: must be a finite non-negative resolution", b.Dmin*1e10)
	}
	// Each source's wavelength in the same range (a -sourcefile gives
	// them in metres, its fifth column).
	for i, s := range b.Sources {
		if l := b.Lambda * s.LambdaFactor; !(l >= minLambda && l <= maxLambda) {
			return fmt.Errorf("models: source %d: wavelength %.6g Å: must lie between %g and %g Å", i+1, l*1e10, minLambda*1e10, maxLambda*1e10)
		}
	}
	return nil
}

// Bounds on beam values: far outside anything real (X-rays, electrons,
// neutrons), inside what the arithmetic handles.
const (
	minLambda  = 1e-16 // m (10⁻⁶ Å)
	maxLambda  = 1e-4  // m (10⁶ Å)
	maxFluence = 1e50  // photons/m² (an XFEL pulse focused to 100 nm² is ~10²⁷)
)

// Model is one complete simulation setup: crystal, beam and detector.
type Model struct {
	Crystal  *Crystal
	Beam     *Beam
	Detector *Detector
	// Osc is the oscillation range written to image headers (radians).
	Osc float64
}

// Params are all continuous parameters of a Model over an algebra: the
// graph's input nodes are one Params[*G.Node].
type Params[T any] struct {
	Crystal  CrystalParams[T]
	Detector DetectorParams[T]
	Lambda   T // m
	Fluence  T // photons/m²
	Kahn     T
	Water    T // m
	Dmin     T // m
}

// Params returns the model's parameter values.
func (m *Model) Params() Params[float64] {
	return Params[float64]{Crystal: m.Crystal.Params(), Detector: m.Detector.Params(),
		Lambda: m.Beam.Lambda, Fluence: m.Beam.Fluence, Kahn: m.Beam.Kahn, Water: m.Beam.Water, Dmin: m.Beam.Dmin}
}

// Validate checks the parts and the combinations that only a whole model
// can judge, then fixes the automatic oversampling.
func (m *Model) Validate() error {
	if err := m.Beam.Validate(); err != nil {
		return err
	}
	if err := m.Crystal.Validate(m.Beam.Lambda); err != nil {
		return err
	}
	if m.Crystal.PhiSteps < 1 {
		m.Crystal.PhiSteps = 1
	}
	if len(m.Crystal.Domains) == 0 {
		m.Crystal.Domains = []MosaicDraw{{}}
	}
	if len(m.Beam.Sources) == 0 {
		m.Beam.Sources = []Source{{Incident: m.Detector.Beam, LambdaFactor: 1}}
	}
	if m.Detector.ThickSteps < 1 {
		m.Detector.ThickSteps = 1
	}
	auto := m.Detector.Oversample <= 0
	if auto {
		m.Detector.Oversample = m.RecommendedOversample()
	}
	if m.Detector.Oversample > 64 {
		if auto {
			return fmt.Errorf("models: the automatic oversampling rule asks for %d sub-pixels per pixel edge (crystal large against the pixel's reciprocal size); at most 64 are supported: give -oversample", m.Detector.Oversample)
		}
		return fmt.Errorf("models: -oversample %d: at most 64 sub-pixels per pixel edge are supported", m.Detector.Oversample)
	}
	if n := float64(m.Crystal.PhiSteps) * float64(len(m.Crystal.Domains)); n > 1e6 {
		return fmt.Errorf("models: %d φ steps × %d mosaic domains: at most a million orientations are supported", m.Crystal.PhiSteps, len(m.Crystal.Domains))
	}
	if m.Crystal.Fudge < 0 || math.IsNaN(m.Crystal.Fudge) || math.IsInf(m.Crystal.Fudge, 0) {
		return fmt.Errorf("models: -fudge %g: must be a non-negative number", m.Crystal.Fudge)
	}
	return nil
}

// referenceEdges returns the lengths (m) of the real-space cell vectors
// as the reference computes them for its oversampling rule, operation for
// operation: from the reciprocal vectors (Å⁻¹, after the misset) their
// cross products, rescaled for a -cell to lengths a/V (new length over old
// times each component) and multiplied by V = 1/(1/V), or for a bare
// matrix multiplied by 1/(a*·(b*×c*)); then scaled to metres and
// measured. RealVectors forms the same vectors in another order, whose
// rounding differs in the last bits, and a rule at an exact whole number
// (3·N·a·pixel = λ·distance, round numbers) then chose one sub-pixel where
// the reference chose two. Over 96 such command lines (8 cells, 3
// missets, 4 settings) this order took the disagreements from 10 to 4,
// all with a misset, whose rotation's last bits still differ.
func referenceEdges(m *Model) (a, b, c float64) {
	A := Float{}
	cr, p := m.Crystal, m.Crystal.Params()
	if cr.RealFix != ([3]V3[float64]{}) {
		// A crystal from another program's vectors: they are the edges.
		va, vb, vc := RealVectors[float64](A, cr, p, m.Beam.Lambda)
		return Norm[float64](A, va), Norm[float64](A, vb), Norm[float64](A, vc)
	}
	as, bs, cs := Reciprocal[float64](A, cr, p, m.Beam.Lambda)
	bxc, cxa, axb := Cross[float64](A, bs, cs), Cross[float64](A, cs, as), Cross[float64](A, as, bs)
	vs := Dot[float64](A, as, bxc)
	if !cr.FromMatrix || cr.CellLengths {
		vol := CellVolume[float64](A, p)
		for i, l := range []float64{p.A, p.B, p.C} {
			v := []*V3[float64]{&bxc, &cxa, &axb}[i]
			k := (l / vol) / Norm[float64](A, *v)
			for j := range v {
				v[j] = k * v[j]
			}
		}
		vs = 1 / vol
	}
	vc := 1 / vs
	edge := func(v V3[float64]) float64 {
		var w V3[float64]
		for j := range v {
			w[j] = 1e-10 * (vc * v[j])
		}
		return Norm[float64](A, w)
	}
	return edge(bxc), edge(cxa), edge(axb)
}

// RecommendedOversample is the reference's automatic choice:
// ceil(3·(largest crystal edge)/(λ·distance/pixel)), at least 1.
func (m *Model) RecommendedOversample() int {
	A := Float{}
	la, lb, lc := referenceEdges(m)
	size := math.Max(la*m.Crystal.Na, math.Max(lb*m.Crystal.Nb, lc*m.Crystal.Nc))
	// The reference uses the distance as re-derived after placing the
	// detector (it shrinks by cos 2θ under a two-theta swing).
	d := m.Detector
	dist := d.Derive(Place[float64](A, d, d.Params())).Distance
	recip := m.Beam.Lambda * dist / d.Pixel
	n := countOf(math.Ceil(3 * size / recip))
	if n < 1 {
		n = 1
	}
	return n
}
