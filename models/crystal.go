package models

import (
	"fmt"
	"math"

	"github.com/gobragg/gobragg/models/formats"
)

// Shape is the crystal's lattice-transform model (the reference's
// -square_xtal, -round_xtal, -gauss_xtal, -tophat_spots).
type Shape int

// The shapes.
const (
	Square Shape = iota
	Round
	Gauss
	Tophat
)

// Crystal is a validated crystal: its orientation source (a unit cell or a
// MOSFLM A matrix), the misset rotation, the number of unit cells along
// each axis and the structure factors.
type Crystal struct {
	// FromMatrix selects the A matrix (Matrix, Å⁻¹·λ as in the file) over
	// the cell (CellA..CellGamma, Å and radians).
	FromMatrix                              bool
	Matrix                                  [9]float64 // a*x b*x c*x a*y b*y c*y a*z b*z c*z, λ-scaled
	CellA, CellB, CellC, Alpha, Beta, Gamma float64
	// CellLengths, with FromMatrix, forces the cell's edge lengths and
	// volume onto the matrix's orientation (the reference's -mat with -cell).
	CellLengths bool
	// MissetX, MissetY, MissetZ rotate the reciprocal vectors about lab x,
	// then y, then z (radians), as the reference's -misset.
	MissetX, MissetY, MissetZ float64
	// OrientX, OrientY, OrientZ are a further rotation of the crystal
	// about lab x, then y, then z (radians), applied after the misset (or
	// the matrix): the small orientation corrections a fit refines, zero
	// from the command line. They fold into -misset when a model is
	// written back as a command line (Model.Argv).
	OrientX, OrientY, OrientZ float64
	// Phi is the spindle angle of the first φ step (radians), PhiStep the
	// step and PhiSteps their number; the rotation is about the detector
	// convention's spindle axis, applied to the real-space cell after the
	// misset.
	Phi, PhiStep float64
	PhiSteps     int
	// Mosaic is the mosaic spread (radians, the angular radius of the
	// spherical cap of domain rotations); Domains are the drawn domain
	// rotations (domain 0 is the unrotated crystal).
	Mosaic  float64
	Domains []MosaicDraw
	// Shape is the lattice-transform model, Fudge its width factor.
	Shape Shape
	Fudge float64
	// Na, Nb, Nc: unit cells along a, b, c (≥ 1).
	Na, Nb, Nc float64
	// DefaultF is the structure factor of every hkl not in HKL (and of all
	// of them when HKL is nil).
	DefaultF float64
	// HKL holds -hkl (or Fdump.bin) structure factors; nil when absent.
	HKL *formats.HKLGrid
	// Interpolate selects tricubic interpolation between the HKL entries.
	Interpolate bool
	// RealFix is added to the real-space vectors a, b, c (m) that
	// RealVectors computes: a residual of a few rounding errors that makes a
	// crystal read from another program's description (a DIALS experiment
	// list) have exactly, bit for bit, the vectors that description gives.
	// Zero for crystals from a command line; a constant without gradient.
	RealFix [3]V3[float64]
}

// CrystalParams are the crystal's continuous parameters over an algebra.
type CrystalParams[T any] struct {
	A, B, C, Alpha, Beta, Gamma T // Å, rad
	Matrix                      [9]T
	MissetX, MissetY, MissetZ   T // rad
	OrientX, OrientY, OrientZ   T // rad
	Phi, PhiStep                T // rad
	Mosaic                      T // rad
	Fudge                       T
	Na, Nb, Nc                  T
	DefaultF                    T
}

// Params returns the crystal's parameter values.
func (c *Crystal) Params() CrystalParams[float64] {
	return CrystalParams[float64]{A: c.CellA, B: c.CellB, C: c.CellC, Alpha: c.Alpha, Beta: c.Beta,
		Gamma: c.Gamma, Matrix: c.Matrix, MissetX: c.MissetX, MissetY: c.MissetY, MissetZ: c.MissetZ,
		OrientX: c.OrientX, OrientY: c.OrientY, OrientZ: c.OrientZ, Phi: c.Phi, PhiStep: c.PhiStep, Mosaic: c.Mosaic, Fudge: c.Fudge,
		Na: c.Na, Nb: c.Nb, Nc: c.Nc, DefaultF: c.DefaultF}
}

// Validate checks that the crystal describes a real lattice.
func (c *Crystal) Validate(lambda float64) error {
	for _, n := range []struct {
		name string
		v    float64
	}{{"Na", c.Na}, {"Nb", c.Nb}, {"Nc", c.Nc}} {
		if !(n.v >= 1) || math.IsInf(n.v, 0) {
			return fmt.Errorf("models: %s = %g: need at least one unit cell", n.name, n.v)
		}
	}
	if !(math.Abs(c.DefaultF) <= MaxF) {
		return fmt.Errorf("models: -default_F %g: must be a finite number of magnitude at most %g", c.DefaultF, MaxF)
	}
	// The misset angles, as the other angles in degrees (MaxAngleDeg):
	// beyond it sines and cosines of the reference's and of Go differ.
	for _, x := range []float64{c.MissetX, c.MissetY, c.MissetZ} {
		if !(math.Abs(x) <= MaxAngleDeg*math.Pi/180) {
			return fmt.Errorf("models: -misset %g %g %g deg: each must be a finite angle of at most %g degrees",
				c.MissetX*180/math.Pi, c.MissetY*180/math.Pi, c.MissetZ*180/math.Pi, float64(MaxAngleDeg))
		}
	}
	if !c.FromMatrix || c.CellLengths {
		for _, l := range []float64{c.CellA, c.CellB, c.CellC} {
			if !(l >= minCellA && l <= maxCellA) {
				return fmt.Errorf("models: -cell %g %g %g: lengths must lie between %g and %g Å", c.CellA, c.CellB, c.CellC,
					minCellA, maxCellA)
			}
		}
		for _, a := range []float64{c.Alpha, c.Beta, c.Gamma} {
			if !(a > 0 && a < math.Pi) {
				return fmt.Errorf("models: -cell angles %g %g %g deg: each must lie strictly between 0 and 180",
					c.Alpha*180/math.Pi, c.Beta*180/math.Pi, c.Gamma*180/math.Pi)
			}
		}
	}
	a, b, cc := RealVectors[float64](Float{}, c, c.Params(), lambda)
	v := Dot[float64](Float{}, a, Cross[float64](Float{}, b, cc))
	if !(v > 0) || math.IsInf(v, 0) || math.IsNaN(v) {
		if c.FromMatrix {
			return fmt.Errorf("models: -mat: the matrix is singular or left-handed (cell volume %.3g Å³)", v*1e30)
		}
		return fmt.Errorf("models: -cell %g %g %g %g %g %g: the angles do not close a cell", c.CellA, c.CellB,
			c.CellC, c.Alpha*180/math.Pi, c.Beta*180/math.Pi, c.Gamma*180/math.Pi)
	}
	A := Float{}
	if frac := v / (Norm[float64](A, a) * Norm[float64](A, b) * Norm[float64](A, cc)); !(frac >= MinVolumeFraction) {
		if c.FromMatrix && !c.CellLengths {
			return fmt.Errorf("models: -mat: the cell's volume is %.3g of the product of its edges, below %g: a degenerate (flat) cell", frac, MinVolumeFraction)
		}
		return fmt.Errorf("models: -cell %.6g %.6g %.6g %.6g %.6g %.6g: the volume is %.3g of a·b·c, below %g: a degenerate (flat) cell", c.CellA, c.CellB,
			c.CellC, c.Alpha*180/math.Pi, c.Beta*180/math.Pi, c.Gamma*180/math.Pi, frac, MinVolumeFraction)
	}
	return nil
}

// Bounds on crystal values: far outside anything real, inside what the
// arithmetic handles.
const (
	// MaxF bounds |F| (default_F and table entries): F(000) of a 1000 Å
	// cubic cell of protein is ~4·10⁸ electrons; squared and multiplied
	// by a large fluence, 10¹⁰ still fits a float32 image.
	MaxF = 1e10
	// MinVolumeFraction bounds V/(a·b·c) from below: 1 for orthogonal
	// axes, 0.07 for a rhombohedral cell at α = 119°, 0 for a flat one (-cell
	// 100 100 100 120 120 120 has V = 0.018 Å³).
	MinVolumeFraction = 1e-3
	minCellA          = 1e-3 // Å
	maxCellA          = 1e6  // Å
)

// Reciprocal returns the reciprocal vectors a*, b*, c* (Å⁻¹) after the
// misset rotation and the orientation correction. For a cell they are placed as the reference does: a*
// along x, b* in the x–y plane (the standard crystallographic
// orthogonalisation in reciprocal space, Giacovazzo, Fundamentals of
// Crystallography, ch. 2); for a matrix they are the file's columns over λ.
// lambda is in metres.
func Reciprocal[T any](A Alg[T], c *Crystal, p CrystalParams[T], lambda T) (as, bs, cs V3[T]) {
	if c.FromMatrix {
		// The A matrix carries λ (in Å): divide it out.
		s := A.Div(A.Const(1e-10), lambda)
		m := p.Matrix
		as = V3[T]{A.Mul(m[0], s), A.Mul(m[3], s), A.Mul(m[6], s)}
		bs = V3[T]{A.Mul(m[1], s), A.Mul(m[4], s), A.Mul(m[7], s)}
		cs = V3[T]{A.Mul(m[2], s), A.Mul(m[5], s), A.Mul(m[8], s)}
	} else {
		ca, cb, cg := A.Cos(p.Alpha), A.Cos(p.Beta), A.Cos(p.Gamma)
		sa, sb, sg := A.Sin(p.Alpha), A.Sin(p.Beta), A.Sin(p.Gamma)
		abc := A.Mul(p.A, A.Mul(p.B, p.C))
		vol := CellVolume(A, p)
		astar := A.Div(A.Mul(p.B, A.Mul(p.C, sa)), vol)
		bstar := A.Div(A.Mul(p.C, A.Mul(p.A, sb)), vol)
		cstar := A.Div(A.Mul(p.A, A.Mul(p.B, sg)), vol)
		cas := A.Div(A.Sub(A.Mul(cb, cg), ca), A.Mul(sb, sg))
		cbs := A.Div(A.Sub(A.Mul(cg, ca), cb), A.Mul(sg, sa))
		cgs := A.Div(A.Sub(A.Mul(ca, cb), cg), A.Mul(sa, sb))
		// sin γ* = c·V*/(a*·b*) with V* = 1/V.
		sgs := A.Div(p.C, A.Mul(vol, A.Mul(astar, bstar)))
		zero := A.Const(0)
		as = V3[T]{astar, zero, zero}
		bs = V3[T]{A.Mul(bstar, cgs), A.Mul(bstar, sgs), zero}
		cs = V3[T]{A.Mul(cstar, cbs), A.Div(A.Mul(cstar, A.Sub(cas, A.Mul(cbs, cgs))), sgs),
			A.Div(A.Mul(cstar, vol), A.Mul(abc, sgs))}
	}
	as = RotateXYZ(A, as, p.MissetX, p.MissetY, p.MissetZ)
	bs = RotateXYZ(A, bs, p.MissetX, p.MissetY, p.MissetZ)
	cs = RotateXYZ(A, cs, p.MissetX, p.MissetY, p.MissetZ)
	// The orientation correction: a rotation by zero leaves every bit of
	// the vectors as it was, so images without one are unchanged.
	as = RotateXYZ(A, as, p.OrientX, p.OrientY, p.OrientZ)
	bs = RotateXYZ(A, bs, p.OrientX, p.OrientY, p.OrientZ)
	cs = RotateXYZ(A, cs, p.OrientX, p.OrientY, p.OrientZ)
	return as, bs, cs
}

// TotalMisset returns the x, y, z angles (radians) of the one misset
// rotation that equals the misset followed by the orientation correction
// (for writing a model back as a command line).
func (c *Crystal) TotalMisset() [3]float64 {
	if c.OrientX == 0 && c.OrientY == 0 && c.OrientZ == 0 {
		return [3]float64{c.MissetX, c.MissetY, c.MissetZ}
	}
	// The columns of the combined rotation are the images of the unit
	// vectors.
	var u [9]float64
	for j := 0; j < 3; j++ {
		var e V3[float64]
		e[j] = 1
		v := RotateXYZ[float64](Float{}, e, c.MissetX, c.MissetY, c.MissetZ)
		v = RotateXYZ[float64](Float{}, v, c.OrientX, c.OrientY, c.OrientZ)
		for i := 0; i < 3; i++ {
			u[3*i+j] = v[i]
		}
	}
	return MatToMisset(u)
}

// CellVolume is the volume of the -cell (Å³):
// abc·sqrt(1 − cos²α − cos²β − cos²γ + 2cosαcosβcosγ).
func CellVolume[T any](A Alg[T], p CrystalParams[T]) T {
	ca, cb, cg := A.Cos(p.Alpha), A.Cos(p.Beta), A.Cos(p.Gamma)
	root := A.Sub(A.Add(A.Const(1), A.Mul(A.Const(2), A.Mul(ca, A.Mul(cb, cg)))),
		A.Add(A.Mul(ca, ca), A.Add(A.Mul(cb, cb), A.Mul(cg, cg))))
	return A.Mul(A.Mul(p.A, A.Mul(p.B, p.C)), A.Sqrt(root))
}

// ReciprocalOfReal returns the reciprocal vectors (Å⁻¹) that the reference
// regenerates from the real-space ones (m): b×c/V and cyclic, with V the
// -cell formula volume when the cell was given (the reference sets
// V* = 1/V_cell) and the actual a·(b×c) for a bare matrix.
func ReciprocalOfReal[T any](A Alg[T], c *Crystal, p CrystalParams[T], a, b, cc V3[T]) (as, bs, cs V3[T]) {
	bxc, cxa, axb := Cross(A, b, cc), Cross(A, cc, a), Cross(A, a, b)
	var inv T
	if c.FromMatrix && !c.CellLengths {
		inv = A.Div(A.Const(1e-10), Dot(A, a, bxc))
	} else {
		inv = A.Div(A.Const(1e20), CellVolume(A, p)) // m² → Å², over Å³
	}
	return Scale(A, bxc, inv), Scale(A, cxa, inv), Scale(A, axb, inv)
}

// RealVectors returns the real-space cell vectors a, b, c in metres:
// a = (b* × c*)/V* and cyclic, V* = a*·(b* × c*). For a -cell crystal the
// reference then forces each vector's length to the cell edge it was given
// (it rescales the cross products to a/V, b/V, c/V). Its reciprocal
// construction above is not exactly consistent for oblique cells (c*_z uses
// V/(abc·sin γ*) where V*/(a*b*·sin γ*) would close the basis), so the
// lengths are exact while the angles drift slightly (70 80 90 75 85 95
// prints as 75.0391 85.0136 95.0081): reproduced here on purpose, because
// every triclinic golden image carries it.
func RealVectors[T any](A Alg[T], c *Crystal, p CrystalParams[T], lambda T) (a, b, cc V3[T]) {
	as, bs, cs := Reciprocal(A, c, p, lambda)
	bxc, cxa, axb := Cross(A, bs, cs), Cross(A, cs, as), Cross(A, as, bs)
	if c.FromMatrix && !c.CellLengths {
		s := A.Div(A.Const(1e-10), Dot(A, as, bxc)) // Å → m
		a, b, cc = Scale(A, bxc, s), Scale(A, cxa, s), Scale(A, axb, s)
	} else {
		length := func(v V3[T], l T) V3[T] { return Scale(A, v, A.Div(A.Mul(l, A.Const(1e-10)), Norm(A, v))) }
		a, b, cc = length(bxc, p.A), length(cxa, p.B), length(axb, p.C)
	}
	if c.RealFix != ([3]V3[float64]{}) {
		for j, v := range []*V3[T]{&a, &b, &cc} {
			for i := range v {
				if f := c.RealFix[j][i]; f != 0 {
					v[i] = A.Add(v[i], A.Const(f))
				}
			}
		}
	}
	return a, b, cc
}

// CellFromVectors returns a copy of c made a -cell crystal whose
// real-space vectors (RealVectors, at wavelength lambda, m) are a, b, c
// (m): the cell that the reference's construction turns into exactly
// these lengths and angles, and the misset that turns it into place
// (orientation correction zero). The reference's -cell construction moves
// the angles slightly (70 80 90 75 85 95 comes out as 75.0391 85.0136
// 95.0081; see RealVectors), so the angles are found by Newton's method on
// that construction, to ~1e-13 rad; the lengths come out as given. It is
// how a crystal read from elsewhere (a DIALS experiment list) gets cell
// parameters a fit can refine.
func (c *Crystal) CellFromVectors(a, b, cc V3[float64], lambda float64) (*Crystal, error) {
	A := Float{}
	angle := func(x, y V3[float64]) float64 {
		return math.Acos(math.Max(-1, math.Min(1, Dot[float64](A, x, y)/(Norm[float64](A, x)*Norm[float64](A, y)))))
	}
	want := [3]float64{angle(b, cc), angle(cc, a), angle(a, b)}
	out := *c
	out.FromMatrix, out.CellLengths, out.RealFix = false, false, [3]V3[float64]{}
	out.CellA, out.CellB, out.CellC = Norm[float64](A, a)*1e10, Norm[float64](A, b)*1e10, Norm[float64](A, cc)*1e10
	out.MissetX, out.MissetY, out.MissetZ, out.OrientX, out.OrientY, out.OrientZ = 0, 0, 0, 0, 0, 0
	got := func(x [3]float64) ([3]float64, [3]V3[float64]) {
		t := out
		t.Alpha, t.Beta, t.Gamma = x[0], x[1], x[2]
		ra, rb, rc := RealVectors[float64](A, &t, t.Params(), lambda)
		return [3]float64{angle(rb, rc), angle(rc, ra), angle(ra, rb)}, [3]V3[float64]{ra, rb, rc}
	}
	x := want
	for it := 0; it < 20; it++ {
		g, _ := got(x)
		var r [3]float64
		small := true
		for i := range r {
			r[i] = g[i] - want[i]
			small = small && math.Abs(r[i]) < 1e-14
		}
		if small {
			break
		}
		// The construction moves each angle by little: the Jacobian by
		// central differences, then a Newton step.
		var jac [3][3]float64
		for j := 0; j < 3; j++ {
			xp, xm := x, x
			xp[j] += 1e-7
			xm[j] -= 1e-7
			gp, _ := got(xp)
			gm, _ := got(xm)
			for i := 0; i < 3; i++ {
				jac[i][j] = (gp[i] - gm[i]) / 2e-7
			}
		}
		d, ok := solve3(jac, r)
		if !ok {
			return nil, fmt.Errorf("models: no -cell gives the angles %g %g %g deg", want[0]*180/math.Pi, want[1]*180/math.Pi, want[2]*180/math.Pi)
		}
		for i := range x {
			x[i] -= d[i]
		}
	}
	out.Alpha, out.Beta, out.Gamma = x[0], x[1], x[2]
	g, v0 := got(x)
	for i := range g {
		if math.Abs(g[i]-want[i]) > 1e-9 {
			return nil, fmt.Errorf("models: no -cell gives the angles %g %g %g deg", want[0]*180/math.Pi, want[1]*180/math.Pi, want[2]*180/math.Pi)
		}
	}
	// The rotation taking the unrotated vectors to a, b, c: U = V·V0⁻¹,
	// made orthogonal (its polar part) against rounding, as a misset.
	inv, ok := inverse3([3][3]float64{{v0[0][0], v0[1][0], v0[2][0]}, {v0[0][1], v0[1][1], v0[2][1]}, {v0[0][2], v0[1][2], v0[2][2]}})
	if !ok {
		return nil, fmt.Errorf("models: the crystal's vectors are flat")
	}
	v := [3][3]float64{{a[0], b[0], cc[0]}, {a[1], b[1], cc[1]}, {a[2], b[2], cc[2]}}
	var u [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				u[i][j] += v[i][k] * inv[k][j]
			}
		}
	}
	// Polar part by a few Newton iterations U ← (U + U⁻ᵀ)/2.
	for it := 0; it < 8; it++ {
		ui, ok := inverse3(u)
		if !ok {
			break
		}
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				u[i][j] = 0.5 * (u[i][j] + ui[j][i])
			}
		}
	}
	ms := MatToMisset([9]float64{u[0][0], u[0][1], u[0][2], u[1][0], u[1][1], u[1][2], u[2][0], u[2][1], u[2][2]})
	out.MissetX, out.MissetY, out.MissetZ = ms[0], ms[1], ms[2]
	return &out, nil
}

// solve3 solves m·x = r.
func solve3(m [3][3]float64, r [3]float64) ([3]float64, bool) {
	inv, ok := inverse3(m)
	if !ok {
		return [3]float64{}, false
	}
	var x [3]float64
	for i := 0; i < 3; i++ {
		x[i] = inv[i][0]*r[0] + inv[i][1]*r[1] + inv[i][2]*r[2]
	}
	return x, true
}

// inverse3 inverts a 3×3 matrix (by cofactors).
func inverse3(m [3][3]float64) ([3][3]float64, bool) {
	var c [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			a, b := m[(i+1)%3], m[(i+2)%3]
			c[j][i] = a[(j+1)%3]*b[(j+2)%3] - a[(j+2)%3]*b[(j+1)%3]
		}
	}
	det := m[0][0]*c[0][0] + m[0][1]*c[1][0] + m[0][2]*c[2][0]
	if det == 0 || math.IsNaN(det) || math.IsInf(det, 0) {
		return c, false
	}
	for i := range c {
		for j := range c[i] {
			c[i][j] /= det
		}
	}
	return c, true
}
