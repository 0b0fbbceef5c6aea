package physics

import (
	"fmt"
	"math"
	"slices"
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
	// Pixels, when not nil, lists the pixels the loss covers (image
	// indices, slow-major, ascending, each once): Observed, Weights and
	// Background (those given) then hold one value per listed pixel, in
	// the list's order, and every pixel not listed is left out. The
	// loss is the same as that of the full images with weight 0 off the
	// list, to the bit; but a loss row reads the listed pixels' values
	// one after another instead of scanning every weight of the image and
	// gathering the rest from three images (a fit's spot boxes are a
	// fraction of the detector).
	Pixels []int32
	// ReadNoise is LossGauss's read-out noise σ (photons).
	ReadNoise float64
}

// Check validates l against an image of n pixels.
func (l *PixelLoss) Check(n int) error {
	if l.Kind < 0 || int(l.Kind) >= len(lossNames) {
		return fmt.Errorf("unknown loss %d", int(l.Kind))
	}
	m, of := n, "the model"
	if l.Pixels != nil {
		m, of = len(l.Pixels), "the pixel list"
		if m > 0 && (l.Pixels[0] < 0 || int(l.Pixels[m-1]) >= n) {
			p := l.Pixels[0]
			if p >= 0 {
				p = l.Pixels[m-1]
			}
			return fmt.Errorf("pixel list: pixel %d outside the image's %d", p, n)
		}
		for j := 1; j < m; j++ {
			if l.Pixels[j] <= l.Pixels[j-1] {
				return fmt.Errorf("pixel list: %d after %d (want ascending pixels, each once)", l.Pixels[j], l.Pixels[j-1])
			}
		}
	}
	if l.Kind.NeedsObserved() && len(l.Observed) != m {
		if l.Observed == nil {
			return fmt.Errorf("the %s loss needs an observed image", l.Kind)
		}
		return fmt.Errorf("observed image has %d pixels, %s %d", len(l.Observed), of, m)
	}
	if l.Weights != nil && len(l.Weights) != m {
		return fmt.Errorf("weight image has %d pixels, %s %d", len(l.Weights), of, m)
	}
	if l.Background != nil && len(l.Background) != m {
		return fmt.Errorf("background image has %d pixels, %s %d", len(l.Background), of, m)
	}
	if math.IsNaN(l.ReadNoise) || math.IsInf(l.ReadNoise, 0) || l.ReadNoise < 0 {
		return fmt.Errorf("read-out noise %g: want a finite number ≥ 0", l.ReadNoise)
	}
	return nil
}

// skipsAny reports whether the loss may leave some pixel out (skips).
func (l *PixelLoss) skipsAny() bool {
	return l.Weights != nil || l.Kind == LossLinear || l.Pixels != nil
}

// index is where pixel i's values are in Observed, Weights and
// Background: i, or with a pixel list its place there (−1 for a pixel
// not listed).
func (l *PixelLoss) index(i int) int {
	at := 0
	return l.indexAt(i, &at)
}

// indexAt is index for pixels taken in ascending order: the search
// starts at *at (listFrom), which it leaves after pixel i's place, so
// that ascending pixels cost a comparison each.
func (l *PixelLoss) indexAt(i int, at *int) int {
	px := l.Pixels
	if px == nil {
		return i
	}
	j := listFrom(px, i, *at)
	if j < len(px) && int(px[j]) == i {
		*at = j + 1
		return j
	}
	*at = j
	return -1
}

// listFrom is the place of the first pixel of list px at or after pixel
// i, searched from place at when every listed pixel before at comes
// before i (as where the search for an earlier pixel of a row ended: kept
// per goroutine by listChunk and indexAt), a comparison when it is there,
// and by binary search otherwise (any at is safe).
func listFrom(px []int32, i, at int) int {
	if at < 0 || at > len(px) || (at > 0 && int(px[at-1]) >= i) {
		at = 0
	}
	if at == len(px) || int(px[at]) >= i {
		return at
	}
	if i > math.MaxInt32 {
		return len(px)
	}
	d, _ := slices.BinarySearch(px[at:], int32(i))
	return at + d
}

// skips reports whether the loss leaves pixel i out.
func (l *PixelLoss) skips(i int) bool {
	j := l.index(i)
	return j < 0 || l.skipsAt(j)
}

// skipsAt is skips for the values at index j (index).
func (l *PixelLoss) skipsAt(j int) bool {
	return (l.Weights != nil && l.Weights[j] == 0) || (l.Kind == LossLinear && l.Observed[j] == 0)
}

// Term returns pixel i's term of the loss at image intensity v and its
// derivative by v (for a pixel the loss leaves out, 0 and 0).
func (l *PixelLoss) Term(i int, v float64) (t, dt float64) {
	j := l.index(i)
	if j < 0 {
		return 0, 0
	}
	return l.termAt(j, v)
}

// termAt is Term for the values at index j (index).
func (l *PixelLoss) termAt(i int, v float64) (t, dt float64) {
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

// at returns the weight at index i (index) and the intensity v with the
// background there.
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

// chunkValues are a chunk's counts, weights and background for terms
// (gather): lossScratch's, or a run of the loss's values (with onesRow
// for weights it does not have).
type chunkValues struct{ o, w, b []float64 }

// onesRow is gather's weights of a loss without them.
var onesRow = func() (r [rowChunk]float64) {
	for i := range r {
		r[i] = 1
	}
	return r
}()

// summed reports whether the loss is the plain sum of the intensities
// (no weights, no background): its terms need no pixel's index.
func (l *PixelLoss) summed() bool {
	return l.Kind == LossSum && l.Weights == nil && l.Background == nil
}

// indices stores in js the index (index) of each pixel base+fs[p] of a
// loss without a pixel list: base+fs[p] (listChunk gives a list's).
func indices(base int, fs []int, js *[rowChunk]int) []int {
	for p, f := range fs {
		js[p] = base + f
	}
	return js[:len(fs)]
}

// gather stores the observed counts, weights (1 without) and background
// (0 without) at indices js[p] (indices) in sc, for terms: the Poisson
// loss's lanes load them as vectors, and gathered at a chunk's start
// (before its terms) their stores are done by then (a vector load of
// values stored one by one just before waits for the stores to reach the
// cache).
//
// A chunk whose indices follow one another (a row's pixels without a
// mask, or a list of the pixels of non-zero weight) is not copied: o, w
// and b are its run of the loss's values (w 1 from onesRow without
// weights; without a background b is not read). Copied one by one, they
// cost a full image's Poisson gradient ~7 cycles a pixel (cubic 1024²,
// Go 1.27 vector build, one CPU: 21.3 → 19.4 ms).
func (l *PixelLoss) gather(js []int, sc *lossScratch) chunkValues {
	n := len(js)
	if n > 0 && js[n-1]-js[0] == n-1 {
		j := js[0] // (js ascends: the indices are j, j+1, …)
		cv := chunkValues{l.Observed[j : j+n], onesRow[:n], sc.b[:n]}
		if l.Weights != nil {
			cv.w = l.Weights[j : j+n]
		}
		if l.Background != nil {
			cv.b = l.Background[j : j+n]
		}
		return cv
	}
	for p, i := range js {
		sc.o[p], sc.w[p], sc.b[p] = l.Observed[i], 1, 0
		if l.Weights != nil {
			sc.w[p] = l.Weights[i]
		}
		if l.Background != nil {
			sc.b[p] = l.Background[i]
		}
	}
	return chunkValues{sc.o[:n], sc.w[:n], sc.b[:n]}
}

// terms replaces the intensities v of the pixels at indices js[p]
// (indices; none of them left out; of a summed loss only their number is
// read) by the loss's derivatives there and
// adds the terms to the tile's sums ls (term p to sum p mod lossSlots),
// the kind's case taken once. sc, when not nil, holds what gather stored
// for these pixels, and the Poisson loss takes the vector lanes; the
// summed-image loss always does (lossSums, on one lane where the CPU has
// no vector lanes: the same sums).
func (l *PixelLoss) terms(js []int, v []float64, ls *lossSum, sc *lossScratch, cv chunkValues) {
	v = v[:len(js)]
	n := len(js) / maxLanes * maxLanes // the whole vectors
	switch {
	case l.summed():
		lossSums(v, n, true, ls)
		for p := n; p < len(v); p++ {
			ls.add(p, v[p])
			v[p] = 1
		}
	case l.Kind == LossSSE && l.Weights == nil && l.Background == nil:
		for p, i := range js {
			r := v[p] - l.Observed[i]
			ls.add(p, r*r)
			v[p] = 2 * r
		}
	case l.Kind == LossPoisson && sc != nil:
		// Term's Poisson case (a fit's usual loss): the pixels' counts,
		// weights and background gathered in sc (gather, at the chunk's
		// start), the terms and derivatives of whole vectors of pixels on
		// vector lanes (poissonLanes, poissonTerm's bits), the rest by
		// poissonTerm, then the terms summed.
		poisson(v, cv.b, cv.o, cv.w, sc.t[:], sc.g[:], n, l.Background != nil)
		lossSums(sc.t[:], n, false, ls)
		for p := n; p < len(js); p++ {
			x := v[p]
			if l.Background != nil {
				x += cv.b[p]
			}
			sc.t[p], sc.g[p] = poissonTerm(x, cv.o[p], cv.w[p])
			ls.add(p, sc.t[p])
		}
		copy(v, sc.g[:])
	case l.Kind == LossPoisson:
		// Without vector lanes (sc nil), one pixel after another: the
		// same terms, without the gather.
		for p, i := range js {
			w, x := l.at(i, v[p])
			var t float64
			t, v[p] = poissonTerm(x, l.Observed[i], w)
			ls.add(p, t)
		}
	default:
		for p, i := range js {
			var t float64
			t, v[p] = l.termAt(i, v[p])
			ls.add(p, t)
		}
	}
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
	if l.Pixels != nil {
		for j, i := range l.Pixels {
			if l.skipsAt(j) {
				continue
			}
			t, _ := l.termAt(j, img[i])
			s, comp = neumaier(s, comp, t)
		}
		return s + comp
	}
	for i, v := range img {
		if l.skips(i) {
			continue
		}
		t, _ := l.Term(i, v)
		s, comp = neumaier(s, comp, t)
	}
	return s + comp
}
