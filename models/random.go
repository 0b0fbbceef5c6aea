package models

import "math"

// Ran1 is the reference's uniform generator: Park–Miller minimal standard
// (multiplier 16807, modulus 2³¹−1, Schrage's factorisation) behind a
// 32-entry Bays–Durham shuffle table, returning float32 in (0, 1−1.2e-7]
// (Press et al., Numerical Recipes in C, 2nd ed., §7.1, "ran1"). A
// non-positive Seed (re)starts the sequence, as in the reference, whose
// seeds are the negated flag values.
type Ran1 struct {
	Seed int64
	iy   int64
	iv   [32]int64
}

const (
	ranIA   = 16807
	ranIM   = 2147483647
	ranIQ   = 127773
	ranIR   = 2836
	ranNTAB = 32
	ranNDIV = 1 + (ranIM-1)/ranNTAB
	ranRNMX = 1.0 - 1.2e-7
)

func (r *Ran1) step() {
	k := r.Seed / ranIQ
	r.Seed = ranIA*(r.Seed-k*ranIQ) - ranIR*k
	if r.Seed < 0 {
		r.Seed += ranIM
	}
}

// Float returns the next deviate.
func (r *Ran1) Float() float32 {
	if r.Seed <= 0 || r.iy == 0 {
		if -r.Seed < 1 {
			r.Seed = 1
		} else {
			r.Seed = -r.Seed
		}
		for j := ranNTAB + 7; j >= 0; j-- {
			r.step()
			if j < ranNTAB {
				r.iv[j] = r.Seed
			}
		}
		r.iy = r.iv[0]
	}
	r.step()
	j := r.iy / ranNDIV
	r.iy = r.iv[j]
	r.iv[j] = r.Seed
	t := float32(float64(r.iy) * (1.0 / ranIM))
	if float64(t) > ranRNMX {
		return float32(ranRNMX)
	}
	return t
}

// MosaicDraw is one random rotation of the reference's spherical-cap
// model: a unit axis V and the fraction F of the cap's angular radius, so
// that the rotation angle is spread·F.
type MosaicDraw struct {
	V [3]float64
	F float32
}

// DrawMosaic reproduces the reference's mosaic_rotation_umat draws: three
// uniform deviates r1, r2, r3 on [−1, 1]; axis (√(1−r2²)·sin πr1,
// √(1−r2²)·cos πr1, r2); angle fraction (1−r3²)^(1/3) in single precision
// (the reference's powf).
func DrawMosaic(r *Ran1) MosaicDraw {
	r1 := 2*float64(r.Float()) - 1
	r2 := 2*float64(r.Float()) - 1
	r3 := 2*float64(r.Float()) - 1
	xy := math.Sqrt(1 - r2*r2)
	f := float32(math.Pow(float64(float32(1-r3*r3)), float64(float32(1.0/3.0))))
	return MosaicDraw{V: [3]float64{xy * math.Sin(math.Pi*r1), xy * math.Cos(math.Pi*r1), r2}, F: f}
}

// Angle is the rotation angle for a spread (radians) as the reference
// forms it: float32(spread)·F in single precision.
func (d MosaicDraw) Angle(spread float64) float64 {
	return float64(float32(spread) * d.F)
}

// UMat is the rotation matrix (row-major) by angle rot about unit axis v
// (Rodrigues' formula, as the reference's quaternion expansion).
func UMat(v [3]float64, rot float64) [9]float64 {
	c, s := math.Cos(rot), math.Sin(rot)
	t := 1 - c
	return [9]float64{
		c + t*v[0]*v[0], t*v[0]*v[1] - s*v[2], t*v[0]*v[2] + s*v[1],
		t*v[0]*v[1] + s*v[2], c + t*v[1]*v[1], t*v[1]*v[2] - s*v[0],
		t*v[0]*v[2] - s*v[1], t*v[1]*v[2] + s*v[0], c + t*v[2]*v[2],
	}
}

// MatToMisset decomposes a rotation matrix into the x, y, z angles that
// RotateXYZ applies (the reference's umat2misset, for a proper rotation).
func MatToMisset(u [9]float64) [3]float64 {
	if u[6]*u[6] < 1 {
		return [3]float64{math.Atan2(u[7], u[8]), math.Atan2(-u[6], math.Sqrt(u[7]*u[7]+u[8]*u[8])), math.Atan2(u[3], u[0])}
	}
	return [3]float64{math.Pi, math.Pi / 2, math.Atan2(u[1], -u[4])}
}
