package physics

import (
	"math"

	"github.com/gobragg/gobragg/models"
)

// Noise draws photon-counting noise exactly as the reference does, so a
// seed gives the reference's noise image: its poidev (Press et al.,
// Numerical Recipes in C, 2nd ed., §7.3: direct multiplication of uniform
// deviates below a mean of 12, Lorentzian rejection above, a Gaussian
// above 10⁶) on its ran1 generator, in the reference's single-precision
// arithmetic. The state persists across calls, as the reference's static
// variables do within one run.
type Noise struct {
	rng  models.Ran1
	iset bool    // a spare Gaussian deviate is waiting in gset
	gset float32 //
}

// NewNoise starts the generator the way the reference's -seed N does
// (its generator seed is −N).
func NewNoise(seed int64) *Noise { return &Noise{rng: models.Ran1{Seed: -seed}} }

// gauss is the reference's gaussdev: polar Box–Muller, single precision.
func (n *Noise) gauss() float32 {
	if n.iset {
		n.iset = false
		return n.gset
	}
	var v1, v2, rsq float32
	for {
		v1 = float32(2*float64(n.rng.Float()) - 1)
		v2 = float32(2*float64(n.rng.Float()) - 1)
		rsq = float32(v1*v1) + float32(v2*v2) // explicit roundings: no fused multiply-add
		if rsq < 1 && rsq != 0 {
			break
		}
	}
	fac := float32(math.Sqrt(-2 * math.Log(float64(rsq)) / float64(rsq)))
	n.gset, n.iset = v1*fac, true
	return v2 * fac
}

// gammln is ln Γ(x) by the Lanczos series of the reference (float in and
// out, double inside).
func gammln(xx float32) float32 {
	cof := [6]float64{76.18009172947146, -86.50532032941677, 24.01409824083091,
		-1.231739572450155, 0.1208650973866179e-2, -0.5395239384953e-5}
	x := float64(xx)
	y := x
	tmp := x + 5.5
	tmp -= (x + 0.5) * math.Log(tmp)
	ser := 1.000000000190015
	for _, c := range cof {
		y++
		ser += c / y
	}
	return float32(-tmp + math.Log(2.5066282746310005*ser/x))
}

// Poisson returns a Poisson deviate of mean xm (a float32 count).
func (n *Noise) Poisson(xm float32) float32 {
	if xm > 1e6 {
		return float32(float64(xm) + math.Sqrt(float64(xm))*float64(n.gauss()))
	}
	if xm < 12 {
		g := float32(exp(-float64(xm)))
		em := float32(-1)
		t := float32(1)
		for {
			em++
			t *= n.rng.Float()
			if !(t > g) {
				return em
			}
		}
	}
	sq := float32(math.Sqrt(2 * float64(xm)))
	alxm := float32(math.Log(float64(xm)))
	g := float32(xm*alxm) - gammln(float32(float64(xm)+1))
	for {
		var y, em float32
		for {
			y = float32(math.Tan(math.Pi * float64(n.rng.Float())))
			em = float32(sq*y) + xm
			if !(em < 0) {
				break
			}
		}
		em = float32(math.Floor(float64(em)))
		e := float32(em*alxm) - gammln(float32(float64(em)+1)) - g
		t := float32(0.9 * (1 + float64(y*y)) * exp(float64(e)))
		if !(n.rng.Float() > t) {
			return em
		}
	}
}

// NoiseImage draws the reference's -noisefile image from the float image:
// pixels inside the ROI in scan order get a Poisson count plus adc,
// truncated to 16 bits with counts above 65535 clipped and counted as
// overloads; pixels outside stay 0. photons is the sum of the counts.
func NoiseImage(img []float32, fpixels int, roi [4]int, adc float64, seed int64) (data []uint16, photons float64, overloads int) {
	n := NewNoise(seed)
	data = make([]uint16, len(img))
	for i, v := range img {
		f, s := i%fpixels, i/fpixels
		if f < roi[0] || f > roi[1] || s < roi[2] || s > roi[3] {
			continue
		}
		test := float64(n.Poisson(v))
		photons += test
		test += adc
		if test > 65535 {
			test = 65535
			overloads++
		}
		if test < 0 {
			test = 0
		}
		data[i] = uint16(test)
	}
	return data, photons, overloads
}
