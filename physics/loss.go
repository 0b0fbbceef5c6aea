package physics

import (
	"fmt"
	"math"
)

// LossKind names a pixel-wise loss on the photon image.
type LossKind int

// The losses. Each sums over the pixels whose weight is non-zero, times
// the weight (1 for every pixel without weights), a term of the pixel's
// model intensity μ = I + b: the image plus the background b when the
// loss has one (PixelLoss.Background), else the image.
const (
	// LossSum is Σ w·μ: the total photons (no observed image).
	LossSum LossKind = iota
	// LossSSE is Σ w·(μ − obs)²: sum of squared residuals.
	LossSSE
	// LossPoisson is Σ w·(μ − obs·ln μ): the Poisson negative
	// log-likelihood of the observed counts, up to the constant Σ ln obs!.
	// A pixel with μ = 0 contributes 0 if obs = 0 and +Inf otherwise.
	LossPoisson
	// LossLinear is Σ w·obs·μ, with obs any per-pixel coefficients (the
	// adjoint ∂L/∂I of an outer loss, as Gradient takes it). Pixels whose
	// coefficient is 0 are left out.
	LossLinear
	// LossGauss is Σ w·½·(ln 2πV + (μ − obs)²/V) with V = μ + σ²: the
	// negative log-likelihood of the Gaussian approximation to Poisson
	// counts with read-out noise σ (PixelLoss.ReadNoise, photons), the
	// likelihood diffBragg's refinement uses. A pixel with V ≤ 0
	// contributes +Inf.
	LossGauss
)

var lossNames = [...]string{"sum", "sse", "poisson", "linear", "gauss"}

func (k LossKind) String() string {
	if k < 0 || int(k) >= len(lossNames) {
		return fmt.Sprintf("loss%d", int(k))
	}
	return lossNames[k]
}

// NeedsObserved reports whether the loss reads an observed image.
func (k LossKind) NeedsObserved() bool { return k != LossSum }

// PixelLoss is a pixel-wise loss: its kind, the observed image (or, for
// LossLinear, the coefficients; slow-major like the image, unused for
// LossSum), optional weights (nil: every pixel 1; 0 leaves a pixel out),
// an optional background and the read-out noise of LossGauss. The loss
// rows evaluate it inline, pixel by pixel.
type PixelLoss struct {
	Kind     LossKind
	Observed []float64
	Weights  []float64
	// Background, when not nil, is added to the image before the loss
	// (photons per pixel that the model does not compute, such as a
	// measured or estimated background). It is data: no gradient flows
	// to it.
	Background []float64
	// ReadNoise is LossGauss's read-out noise σ (photons).
	ReadNoise float64
}

// Check validates l against an image of n pixels.
func (l *PixelLoss) Check(n int) error {
	if l.Kind < 0 || int(l.Kind) >= len(lossNames) {
		return fmt.Errorf("unknown loss %d", int(l.Kind))
	}
	if l.Kind.NeedsObserved() && len(l.Observed) != n {
		if l.Observed == nil {
			return fmt.Errorf("the %s loss needs an observed image", l.Kind)
		}
		return fmt.Errorf("observed image has %d pixels, the model %d", len(l.Observed), n)
	}
	if l.Weights != nil && len(l.Weights) != n {
		return fmt.Errorf("weight image has %d pixels, the model %d", len(l.Weights), n)
	}
	if l.Background != nil && len(l.Background) != n {
		return fmt.Errorf("background image has %d pixels, the model %d", len(l.Background), n)
	}
	if math.IsNaN(l.ReadNoise) || math.IsInf(l.ReadNoise, 0) || l.ReadNoise < 0 {
		return fmt.Errorf("read-out noise %g: want a finite number ≥ 0", l.ReadNoise)
	}
	return nil
}

// skipsAny reports whether the loss may leave some pixel out (skips).
func (l *PixelLoss) skipsAny() bool { return l.Weights != nil || l.Kind == LossLinear }

// skips reports whether the loss leaves pixel i out.
func (l *PixelLoss) skips(i int) bool {
	return (l.Weights != nil && l.Weights[i] == 0) || (l.Kind == LossLinear && l.Observed[i] == 0)
}

// Term returns pixel i's term of the loss at image intensity v and its
// derivative by v (for a pixel the loss leaves out, 0 and 0).
func (l *PixelLoss) Term(i int, v float64) (t, dt float64) {
	w, v := l.at(i, v)
	switch l.Kind {
	case LossSum:
		return w * v, w
	case LossSSE:
		r := v - l.Observed[i]
		return w * r * r, 2 * w * r
	case LossLinear:
		wo := w * l.Observed[i]
		return wo * v, wo
	case LossGauss:
		return gaussTerm(v, l.Observed[i], l.ReadNoise*l.ReadNoise, w)
	}
	return poissonTerm(v, l.Observed[i], w)
}

// at returns pixel i's weight and the intensity v with its background.
func (l *PixelLoss) at(i int, v float64) (w, x float64) {
	w, x = 1, v
	if l.Weights != nil {
		w = l.Weights[i]
	}
	if l.Background != nil {
		x += l.Background[i]
	}
	return w, x
}

// lossScratch is PixelLoss.terms' scratch for a chunk of pixels (the
// Poisson loss's lanes): counts, weights and background (gather), terms
// and derivatives.
type lossScratch struct {
	o, w, b, t, g [rowChunk]float64
}

// gather stores the observed counts, weights (1 without) and background
// (0 without) of pixels base+fs[p] in sc, for terms: the Poisson loss's
// lanes load them as vectors, and gathered at a chunk's start (before its
// terms) their stores are done by then (a vector load of values stored
// one by one just before waits for the stores to reach the cache).
func (l *PixelLoss) gather(base int, fs []int, sc *lossScratch) {
	for p, f := range fs {
		i := base + f
		sc.o[p], sc.w[p], sc.b[p] = l.Observed[i], 1, 0
		if l.Weights != nil {
			sc.w[p] = l.Weights[i]
		}
		if l.Background != nil {
			sc.b[p] = l.Background[i]
		}
	}
}

// terms replaces the intensities v of pixels base+fs[p] (none of them
// left out) by the loss's derivatives there and adds the terms to the
// compensated sum (sum, comp), the kind's case taken once. sc, when not
// nil, holds what gather stored for these pixels, and the Poisson loss
// takes the vector lanes.
func (l *PixelLoss) terms(base int, fs []int, v []float64, sum, comp *float64, sc *lossScratch) {
	v = v[:len(fs)]
	// The sums in local variables, which stay in registers.
	s, cs := *sum, *comp
	switch {
	case l.Kind == LossSum && l.Weights == nil && l.Background == nil:
		for p := range v {
			s, cs = neumaier(s, cs, v[p])
			v[p] = 1
		}
	case l.Kind == LossSSE && l.Weights == nil && l.Background == nil:
		for p, f := range fs {
			r := v[p] - l.Observed[base+f]
			s, cs = neumaier(s, cs, r*r)
			v[p] = 2 * r
		}
	case l.Kind == LossPoisson && sc != nil:
		// Term's Poisson case (a fit's usual loss): the pixels' counts,
		// weights and background gathered in sc (gather, at the chunk's
		// start), the terms and derivatives of whole vectors of pixels on
		// vector lanes (poissonLanes, poissonTerm's bits), the rest by
		// poissonTerm, then the terms summed in pixel order.
		n := len(fs) / maxLanes * maxLanes
		poisson(v, sc.b[:], sc.o[:], sc.w[:], sc.t[:], sc.g[:], n, l.Background != nil)
		for p := n; p < len(fs); p++ {
			x := v[p]
			if l.Background != nil {
				x += sc.b[p]
			}
			sc.t[p], sc.g[p] = poissonTerm(x, sc.o[p], sc.w[p])
		}
		for p := range v {
			s, cs = neumaier(s, cs, sc.t[p])
			v[p] = sc.g[p]
		}
	case l.Kind == LossPoisson:
		// Without vector lanes (sc nil), one pixel after another: the
		// same terms, without the gather.
		for p, f := range fs {
			w, x := l.at(base+f, v[p])
			var t float64
			t, v[p] = poissonTerm(x, l.Observed[base+f], w)
			s, cs = neumaier(s, cs, t)
		}
	default:
		for p, f := range fs {
			var t float64
			t, v[p] = l.Term(base+f, v[p])
			s, cs = neumaier(s, cs, t)
		}
	}
	*sum, *comp = s, cs
}

// gaussTerm is the Gaussian term w·½·(ln 2πV + r²/V), V = μ + σ²,
// r = μ − o, and its derivative by μ: w·½·(1/V + 2r/V − r²/V²).
func gaussTerm(mu, o, varRead, w float64) (t, dt float64) {
	V := mu + varRead
	if !(V > 0) {
		return math.Inf(1), math.Inf(-1)
	}
	r := mu - o
	q := r / V
	return w * 0.5 * (math.Log(2*math.Pi*V) + r*q), w * 0.5 * (1/V + q*(2-q))
}

// poissonTerm is the Poisson term w·(v − o·ln v) and its derivative:
// poissonTermLanes on one lane (ln: logLanes, math.Log's bits on amd64),
// the one formula of the loss rows' lanes and of Term.
func poissonTerm(v, o, w float64) (t, dt float64) { return poissonTermLanes(v, o, w) }

// Value is the loss of image img, its terms added with Neumaier's
// compensated summation: a megapixel sum then keeps ~1e-16 relative
// precision, which finite-difference checks of the loss rely on.
func (l *PixelLoss) Value(img []float64) float64 {
	var s, comp float64
	for i, v := range img {
		if l.skips(i) {
			continue
		}
		t, _ := l.Term(i, v)
		s, comp = neumaier(s, comp, t)
	}
	return s + comp
}
