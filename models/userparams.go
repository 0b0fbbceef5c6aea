package models

import (
	"fmt"
	"math"
	"strings"
)

// UserParam is a continuous model parameter under the name and in the
// unit of the reference's command line (Å, degrees, mm), which is how
// gradients, finite-difference checks and fits report it.
type UserParam struct {
	Name, Unit string
	// Step is the default central-difference step, in Unit; Relative
	// makes it a fraction of the parameter's value instead.
	Step     float64
	Relative bool
	// Moves reports that the parameter moves reflections in hkl (or the
	// scattering vector), which matters where the model is piecewise in hkl.
	Moves bool
	// What the parameter is, for help texts.
	Help string
}

// UserParams lists every user-level parameter, in a fixed order. Steps
// are about 1e-7 of each parameter's scale: sharp spots make the image vary
// on ~10 µm and ~1e-3° scales, where larger steps leave truncation errors
// above 1e-6.
var UserParams = []UserParam{
	{Name: "a", Unit: "Å", Step: 1e-5, Moves: true, Help: "cell edge a"},
	{Name: "b", Unit: "Å", Step: 1e-5, Moves: true, Help: "cell edge b"},
	{Name: "c", Unit: "Å", Step: 1e-5, Moves: true, Help: "cell edge c"},
	{Name: "alpha", Unit: "deg", Step: 1e-5, Moves: true, Help: "cell angle α"},
	{Name: "beta", Unit: "deg", Step: 1e-5, Moves: true, Help: "cell angle β"},
	{Name: "gamma", Unit: "deg", Step: 1e-5, Moves: true, Help: "cell angle γ"},
	{Name: "misset_x", Unit: "deg", Step: 1e-5, Moves: true, Help: "misset rotation about lab x"},
	{Name: "misset_y", Unit: "deg", Step: 1e-5, Moves: true, Help: "misset rotation about lab y"},
	{Name: "misset_z", Unit: "deg", Step: 1e-5, Moves: true, Help: "misset rotation about lab z"},
	{Name: "orient_x", Unit: "deg", Step: 1e-5, Moves: true, Help: "orientation correction about lab x, after the misset"},
	{Name: "orient_y", Unit: "deg", Step: 1e-5, Moves: true, Help: "orientation correction about lab y, after the misset"},
	{Name: "orient_z", Unit: "deg", Step: 1e-5, Moves: true, Help: "orientation correction about lab z, after the misset"},
	{Name: "phi", Unit: "deg", Step: 1e-5, Moves: true, Help: "spindle angle of the first φ step"},
	{Name: "Na", Unit: "cells", Step: 1e-7, Help: "unit cells along a (continuous)"},
	{Name: "Nb", Unit: "cells", Step: 1e-7, Help: "unit cells along b (continuous)"},
	{Name: "Nc", Unit: "cells", Step: 1e-7, Help: "unit cells along c (continuous)"},
	{Name: "mosaic_spread", Unit: "deg", Step: 1e-5, Moves: true, Help: "mosaic spread (drawn domain axes fixed)"},
	{Name: "distance", Unit: "mm", Step: 1e-5, Moves: true, Help: "sample-detector distance along the beam (-distance)"},
	{Name: "close_distance", Unit: "mm", Step: 1e-5, Moves: true, Help: "perpendicular distance (-close_distance, when given)"},
	{Name: "xbeam", Unit: "mm", Step: 1e-5, Moves: true, Help: "beam centre -Xbeam"},
	{Name: "ybeam", Unit: "mm", Step: 1e-5, Moves: true, Help: "beam centre -Ybeam"},
	{Name: "rotx", Unit: "deg", Step: 1e-5, Moves: true, Help: "detector rotation about lab x"},
	{Name: "roty", Unit: "deg", Step: 1e-5, Moves: true, Help: "detector rotation about lab y"},
	{Name: "rotz", Unit: "deg", Step: 1e-5, Moves: true, Help: "detector rotation about lab z"},
	{Name: "twotheta", Unit: "deg", Step: 1e-5, Moves: true, Help: "detector two-theta swing"},
	{Name: "lambda", Unit: "Å", Step: 1e-7, Moves: true, Help: "wavelength"},
	{Name: "fluence", Unit: "photons/m²", Step: 1e-4, Relative: true, Help: "incident fluence"},
	{Name: "polar", Unit: "", Step: 1e-4, Help: "Kahn polarization factor"},
	{Name: "default_F", Unit: "", Step: 1e-4, Relative: true, Help: "structure factor of reflections without data"},
}

// DiscreteParams are the model's whole-number settings, by name, with why
// there is no gradient for them.
var DiscreteParams = map[string]string{
	"detpixels":      "a pixel count: discrete",
	"oversample":     "sub-pixels per pixel edge: discrete",
	"phisteps":       "φ steps: discrete",
	"mosaic_domains": "mosaic domains: discrete (the drawn axes are fixed data)",
	"thicksteps":     "sensor layers: discrete",
	"divsteps":       "divergence steps: discrete",
	"dispsteps":      "dispersion steps: discrete",
	"hkl":            "structure-factor table lookup: data, not a parameter",
}

// StepAt is the default step at value v: Step, or Step·max(|v|, 1) for a
// Relative one.
func (p UserParam) StepAt(v float64) float64 {
	if p.Relative {
		return p.Step * math.Max(math.Abs(v), 1)
	}
	return p.Step
}

// LookupParam returns the user parameter called name.
func LookupParam(name string) (UserParam, bool) {
	for _, p := range UserParams {
		if p.Name == name {
			return p, true
		}
	}
	return UserParam{}, false
}

// ParamNames lists the parameters names that can be given for m, in
// UserParams order: a matrix crystal has no a..gamma, a detector placed by
// -close_distance no distance and the other way round.
func (m *Model) ParamNames() []string {
	var out []string
	for _, p := range UserParams {
		if _, err := m.Get(p.Name); err == nil {
			out = append(out, p.Name)
		}
	}
	return out
}

// Get returns the value of user parameter name.
func (m *Model) Get(name string) (float64, error) {
	c, d, b := m.Crystal, m.Detector, m.Beam
	cell := !c.FromMatrix || c.CellLengths
	switch name {
	case "a", "b", "c", "alpha", "beta", "gamma":
		if !cell {
			return 0, fmt.Errorf("%s: the crystal comes from -mat without -cell; its cell is the matrix", name)
		}
	case "distance":
		if !math.IsNaN(d.In.CloseDistanceMM) {
			return 0, fmt.Errorf("distance: the detector is placed by -close_distance; refine close_distance")
		}
	case "close_distance":
		if math.IsNaN(d.In.CloseDistanceMM) {
			return 0, fmt.Errorf("close_distance: the detector is placed by -distance; refine distance")
		}
	}
	switch name {
	case "a":
		return c.CellA, nil
	case "b":
		return c.CellB, nil
	case "c":
		return c.CellC, nil
	case "alpha":
		return c.Alpha * 180 / math.Pi, nil
	case "beta":
		return c.Beta * 180 / math.Pi, nil
	case "gamma":
		return c.Gamma * 180 / math.Pi, nil
	case "misset_x":
		return c.MissetX * 180 / math.Pi, nil
	case "misset_y":
		return c.MissetY * 180 / math.Pi, nil
	case "misset_z":
		return c.MissetZ * 180 / math.Pi, nil
	case "orient_x":
		return c.OrientX * 180 / math.Pi, nil
	case "orient_y":
		return c.OrientY * 180 / math.Pi, nil
	case "orient_z":
		return c.OrientZ * 180 / math.Pi, nil
	case "phi":
		return c.Phi * 180 / math.Pi, nil
	case "Na":
		return c.Na, nil
	case "Nb":
		return c.Nb, nil
	case "Nc":
		return c.Nc, nil
	case "mosaic_spread":
		return c.Mosaic * 180 / math.Pi, nil
	case "distance":
		return d.In.DistanceMM, nil
	case "close_distance":
		return d.In.CloseDistanceMM, nil
	case "xbeam":
		return d.Xbeam * 1e3, nil
	case "ybeam":
		return d.Ybeam * 1e3, nil
	case "rotx":
		return d.In.RotXDeg, nil
	case "roty":
		return d.In.RotYDeg, nil
	case "rotz":
		return d.In.RotZDeg, nil
	case "twotheta":
		return d.In.TwoThetaDeg, nil
	case "lambda":
		return b.Lambda * 1e10, nil
	case "fluence":
		return b.Fluence, nil
	case "polar":
		return b.Kahn, nil
	case "default_F":
		return c.DefaultF, nil
	}
	return 0, fmt.Errorf("unknown parameter %q (known: %s)", name, strings.Join(names(), ", "))
}

func names() []string {
	var out []string
	for _, p := range UserParams {
		out = append(out, p.Name)
	}
	return out
}

// With returns a copy of m with user parameter name set to v (shared
// tables and files; only the changed parts are copied). Detector
// parameters go through the reference's placement bookkeeping again, as if
// the flag had been given on the command line. The copy is validated.
func (m *Model) With(name string, v float64) (*Model, error) {
	if _, err := m.Get(name); err != nil {
		return nil, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%s = %g: not a finite number", name, v)
	}
	out := *m
	c, b, d := *m.Crystal, *m.Beam, *m.Detector
	out.Crystal, out.Beam, out.Detector = &c, &b, &d
	in, placed := d.In, false
	switch name {
	case "a":
		c.CellA = v
	case "b":
		c.CellB = v
	case "c":
		c.CellC = v
	case "alpha":
		c.Alpha = rad(v)
	case "beta":
		c.Beta = rad(v)
	case "gamma":
		c.Gamma = rad(v)
	case "misset_x":
		c.MissetX = rad(v)
	case "misset_y":
		c.MissetY = rad(v)
	case "misset_z":
		c.MissetZ = rad(v)
	case "orient_x":
		c.OrientX = rad(v)
	case "orient_y":
		c.OrientY = rad(v)
	case "orient_z":
		c.OrientZ = rad(v)
	case "phi":
		c.Phi = rad(v)
	case "Na":
		c.Na = v
	case "Nb":
		c.Nb = v
	case "Nc":
		c.Nc = v
	case "mosaic_spread":
		if v < 0 {
			return nil, fmt.Errorf("mosaic_spread = %g deg: must not be negative", v)
		}
		c.Mosaic = rad(v)
	case "distance":
		in.DistanceMM, placed = v, true
	case "close_distance":
		in.CloseDistanceMM, placed = v, true
	case "xbeam":
		in.XbeamMM, placed = v, true
	case "ybeam":
		in.YbeamMM, placed = v, true
	case "rotx":
		in.RotXDeg, placed = v, true
	case "roty":
		in.RotYDeg, placed = v, true
	case "rotz":
		in.RotZDeg, placed = v, true
	case "twotheta":
		in.TwoThetaDeg, placed = v, true
	case "lambda":
		b.Lambda = v * 1e-10
	case "fluence":
		b.Fluence = v
	case "polar":
		b.Kahn = v
	case "default_F":
		c.DefaultF = v
	}
	if placed {
		nd, err := NewDetector(in)
		if err != nil {
			return nil, err
		}
		d.In = in
		d.Distance, d.CloseDistance = nd.Distance, nd.CloseDistance
		d.Fbeam, d.Sbeam, d.Fclose, d.Sclose = nd.Fbeam, nd.Sbeam, nd.Fclose, nd.Sclose
		d.Xbeam, d.Ybeam = nd.Xbeam, nd.Ybeam
		d.RotX, d.RotY, d.RotZ, d.TwoTheta = nd.RotX, nd.RotY, nd.RotZ, nd.TwoTheta
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return &out, nil
}

// NotDifferentiable returns why the image is not a differentiable
// function of user parameter name in m, or "" when it is. The gradient
// still exists almost everywhere; these are the parameters whose image
// jumps (or kinks) where a central difference would notice.
func (m *Model) NotDifferentiable(name string) string {
	p, ok := LookupParam(name)
	if !ok {
		return "unknown parameter"
	}
	c, b := m.Crystal, m.Beam
	switch {
	case c.Shape == Tophat && (p.Moves || name == "Na" || name == "Nb" || name == "Nc"):
		return "tophat spots are flat-topped: the image is piecewise constant in hkl and N"
	case c.Shape == Gauss && p.Moves:
		return "the Gaussian spot model jumps at half-integer hkl"
	case c.HKL != nil && !c.Interpolate && p.Moves:
		return "nearest-reflection structure factors jump at half-integer hkl (-interpolate makes them smooth)"
	case b.Dmin > 0 && p.Moves:
		return "the -dmin cut-off is a step in resolution"
	case name == "mosaic_spread" && c.Mosaic == 0:
		return "zero spread: the domain rotations are off here (the model has a kink at 0)"
	case (name == "Na" && c.Na <= 1) || (name == "Nb" && c.Nb <= 1) || (name == "Nc" && c.Nc <= 1):
		return "N = 1: the lattice factor is clamped to 1 below it (kink)"
	}
	return ""
}
