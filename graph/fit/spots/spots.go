// Package spots finds Bragg spots on an observed image, estimates the
// image's background and lays boxes around the spots, which a refinement
// then fits pixel by pixel.
//
// # Conventions
//
//   - Images are photons per pixel, slow-major: Data[s*W+f], the layout of
//     the simulator's images. Pixel (f, s) covers [f, f+1) × [s, s+1) in
//     pixel coordinates, so its centre is (f+½, s+½); centroids are in
//     these coordinates.
//   - A pixel is usable when the mask (nil: every pixel) holds a non-zero
//     value there; unusable pixels take part in nothing.
//   - The tests are Poisson tests: the finder assumes counts (photons),
//     as the reference's noise images hold once their ADC offset is
//     removed.
package spots

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mathext"
)

// Image is a photon image and its usable pixels.
type Image struct {
	W, H int
	Data []float64
	// Mask: non-zero where a pixel may be used; nil for every pixel.
	Mask []float64
	// Overload: a pixel at or above it is saturated (0: none is). Boxes
	// that hold one are dropped.
	Overload float64
}

func (im *Image) usable(i int) bool { return im.Mask == nil || im.Mask[i] != 0 }

// Check reports an image whose sizes do not agree or that holds values
// that are not photon counts.
func (im *Image) Check() error {
	if im.W < 1 || im.H < 1 || len(im.Data) != im.W*im.H {
		return fmt.Errorf("spots: %d values for a %dx%d image", len(im.Data), im.W, im.H)
	}
	if im.Mask != nil && len(im.Mask) != len(im.Data) {
		return fmt.Errorf("spots: mask has %d values, the image %d", len(im.Mask), len(im.Data))
	}
	for i, v := range im.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("spots: pixel %d %d is %g", i%im.W, i/im.W, v)
		}
	}
	return nil
}

// Settings tune the finder. Zero values take the defaults.
type Settings struct {
	// Alpha is the false-alarm probability of the strong-pixel test
	// (default 1e-5): a pixel is strong when its 3×3 neighbourhood holds
	// more photons than the background predicts with probability below
	// Alpha.
	Alpha float64
	// MinPhotons is the least number of photons above the background a
	// spot must hold (default 3).
	MinPhotons float64
	// Block is the edge of the background estimate's blocks, in pixels
	// (default 32, or the image's shorter edge if smaller).
	Block int
}

func (s Settings) withDefaults(im *Image) Settings {
	if s.Alpha <= 0 {
		s.Alpha = 1e-5
	}
	if s.MinPhotons <= 0 {
		s.MinPhotons = 3
	}
	if s.Block <= 0 {
		s.Block = 32
	}
	s.Block = min(s.Block, im.W, im.H)
	return s
}

// Spot is a connected group of strong pixels.
type Spot struct {
	// F, S: the centroid of the photons above the background (pixel
	// coordinates, see the package conventions).
	F, S float64
	// Peak is the index of the spot's brightest pixel.
	Peak int
	// Photons above the background, and the spot's strong pixels.
	Photons float64
	Pixels  int
	// Overloaded: the spot holds a saturated pixel.
	Overloaded bool
}

// Result is what Find returns.
type Result struct {
	Spots []Spot
	// Background is the estimated background, photons per pixel (0 on
	// unusable pixels).
	Background []float64
	// Strong marks the strong pixels (the spots' pixels).
	Strong []bool
}

// Find estimates im's background and finds its spots, brightest first.
//
// The background is a map of block means: the image is cut into blocks
// of Settings.Block pixels; each block's mean is taken over its usable
// pixels less those near strong pixels (the spots, grown by two pixels)
// and less single pixels the block's own mean makes improbable
// (Poisson upper tail below 1e-3), as (photons + ½)/pixels (the Jeffreys
// estimate, so that an empty block gives a small positive background
// rather than 0); between block centres it is interpolated bilinearly.
// Strong pixels are found with the current map, and the map is re-made
// without them, three times.
//
// A usable pixel is strong when it holds more photons than its
// background and the photons in its 3×3 neighbourhood (usable pixels
// only) exceed the background's prediction for that neighbourhood with
// Poisson tail probability below Settings.Alpha: the 3×3 sum keeps the
// test sensitive on sparse images where a spot is a few photons over
// several pixels. This is a threshold finder in the spirit of
// dials.find_spots' dispersion algorithm, but it tests counts against the
// local background's Poisson tail instead of the local variance, which is
// meaningless with almost no background. Spots are the 8-connected groups
// of strong pixels, split at their peaks (see components), holding at
// least Settings.MinPhotons photons above the background.
func Find(im *Image, s Settings) (*Result, error) {
	if err := im.Check(); err != nil {
		return nil, err
	}
	s = s.withDefaults(im)
	n := len(im.Data)
	excluded := make([]bool, n)
	var bg []float64
	var strong []bool
	for pass := 0; pass < 3; pass++ {
		bg = blockBackground(im, excluded, s.Block)
		strong = strongPixels(im, bg, s.Alpha)
		grow(im, strong, 2, excluded)
	}
	res := &Result{Background: bg, Strong: strong}
	res.Spots = components(im, bg, strong, s.MinPhotons)
	return res, nil
}

// blockBackground is Find's block-mean map, leaving out excluded pixels.
func blockBackground(im *Image, excluded []bool, block int) []float64 {
	nf, ns := (im.W+block-1)/block, (im.H+block-1)/block
	means := make([]float64, nf*ns)
	var vals []float64
	for bs := 0; bs < ns; bs++ {
		for bf := 0; bf < nf; bf++ {
			vals = vals[:0]
			for s := bs * block; s < min((bs+1)*block, im.H); s++ {
				for f := bf * block; f < min((bf+1)*block, im.W); f++ {
					if i := s*im.W + f; im.usable(i) && !excluded[i] {
						vals = append(vals, im.Data[i])
					}
				}
			}
			means[bs*nf+bf] = clippedMean(vals)
		}
	}
	// Blocks without a usable pixel take the mean of the others.
	var sum float64
	var cnt int
	for _, m := range means {
		if !math.IsNaN(m) {
			sum += m
			cnt++
		}
	}
	fill := 0.0
	if cnt > 0 {
		fill = sum / float64(cnt)
	}
	for i, m := range means {
		if math.IsNaN(m) {
			means[i] = fill
		}
	}
	out := make([]float64, len(im.Data))
	// Bilinear between block centres, constant beyond the outer ones.
	at := func(x float64, nb int) (int, int, float64) {
		x = x/float64(block) - 0.5
		if x <= 0 {
			return 0, 0, 0
		}
		if x >= float64(nb-1) {
			return nb - 1, nb - 1, 0
		}
		i := int(x)
		return i, i + 1, x - float64(i)
	}
	for s := 0; s < im.H; s++ {
		s0, s1, ts := at(float64(s)+0.5, ns)
		for f := 0; f < im.W; f++ {
			i := s*im.W + f
			if !im.usable(i) {
				continue
			}
			f0, f1, tf := at(float64(f)+0.5, nf)
			top := means[s0*nf+f0]*(1-tf) + means[s0*nf+f1]*tf
			bot := means[s1*nf+f0]*(1-tf) + means[s1*nf+f1]*tf
			out[i] = top*(1-ts) + bot*ts
		}
	}
	return out
}

// clippedMean is the Jeffreys mean (Σ + ½)/n of vals after dropping,
// repeatedly, values whose Poisson upper tail at the current mean is
// below 1e-3; NaN for no values.
func clippedMean(vals []float64) float64 {
	if len(vals) == 0 {
		return math.NaN()
	}
	sort.Float64s(vals)
	n := len(vals)
	for iter := 0; iter < 10; iter++ {
		sum := 0.0
		for _, v := range vals[:n] {
			sum += v
		}
		m := (sum + 0.5) / float64(n)
		k := n
		for k > 1 && upperTail(vals[k-1], m) < 1e-3 {
			k--
		}
		if k == n {
			return m
		}
		n = k
	}
	sum := 0.0
	for _, v := range vals[:n] {
		sum += v
	}
	return (sum + 0.5) / float64(n)
}

// upperTail is P(X ≥ k) for X Poisson with mean mu (k real: the
// regularised lower incomplete gamma function P(k, mu)).
func upperTail(k, mu float64) float64 {
	if k <= 0 {
		return 1
	}
	if mu <= 0 {
		return 0
	}
	return mathext.GammaIncReg(k, mu)
}

// strongPixels applies Find's strong-pixel test with background bg.
func strongPixels(im *Image, bg []float64, alpha float64) []bool {
	out := make([]bool, len(im.Data))
	logAlpha := math.Log(alpha)
	for s := 0; s < im.H; s++ {
		for f := 0; f < im.W; f++ {
			i := s*im.W + f
			if !im.usable(i) || im.Data[i] <= bg[i] {
				continue
			}
			var obs, exp float64
			for ds := -1; ds <= 1; ds++ {
				for df := -1; df <= 1; df++ {
					ff, ss := f+df, s+ds
					if ff < 0 || ss < 0 || ff >= im.W || ss >= im.H {
						continue
					}
					if j := ss*im.W + ff; im.usable(j) {
						obs += im.Data[j]
						exp += bg[j]
					}
				}
			}
			out[i] = obs > exp && tailBelow(obs, exp, alpha, logAlpha)
		}
	}
	return out
}

// tailBelow reports upperTail(k, mu) < alpha (logAlpha: ln alpha) for
// k > mu, from two bounds on P(k, mu) where they decide and from the
// function itself where they do not: Find asks for every pixel over its
// background, and the function's series took most of Find's time (which
// was ~4 % of the reference series' 19-image fit). Above:
// e^{k−mu}·(mu/k)^k, Chernoff's bound on the lower tail of the gamma
// distribution, P(k, mu) = Pr[G ≤ mu] for G ~ Gamma(k, 1) (the minimum over
// t > 0 of e^{t·mu}·(1 + t)^{−k}, at t = k/mu − 1). Below: mu^k·e^{−mu}/Γ(k+1),
// the first term of P's series e^{−mu}·mu^k·Σ mu^n/Γ(k+n+1), whose terms are
// all positive. A bound decides only when it is beyond alpha by more than
// the rounding of its logarithm (a relative 1e-6, or more for large k).
func tailBelow(k, mu, alpha, logAlpha float64) bool {
	// (Below the normal numbers, Go's amd64 math.Log is not accurate, so
	// a subnormal alpha's logarithm cannot place the bounds.)
	if !(mu > 0) || !(k > mu) || !(alpha >= 0x1p-1022) {
		return upperTail(k, mu) < alpha
	}
	lower, upper, margin := tailBounds(k, mu)
	if lower > logAlpha+margin {
		return false // P ≥ its series' first term > alpha
	}
	if upper < logAlpha-margin {
		return true // P ≤ Chernoff's bound < alpha
	}
	return upperTail(k, mu) < alpha
}

// tailBounds returns the logarithms of tailBelow's bounds on P(k, mu)
// (k > mu > 0) and the rounding allowed for in them.
func tailBounds(k, mu float64) (lower, upper, margin float64) {
	lmu := math.Log(mu)
	lgk, _ := math.Lgamma(k + 1)
	margin = 1e-6 + 1e-13*(k*math.Abs(lmu)+mu+math.Abs(lgk))
	return k*lmu - mu - lgk, k - mu + k*(lmu-math.Log(k)), margin
}

// grow sets out to the pixels within r (Chebyshev distance) of a marked
// one.
func grow(im *Image, marked []bool, r int, out []bool) {
	clear(out)
	for s := 0; s < im.H; s++ {
		for f := 0; f < im.W; f++ {
			if !marked[s*im.W+f] {
				continue
			}
			for ss := max(0, s-r); ss <= min(im.H-1, s+r); ss++ {
				for ff := max(0, f-r); ff <= min(im.W-1, f+r); ff++ {
					out[ss*im.W+ff] = true
				}
			}
		}
	}
}

// peakRadius is the least distance (Chebyshev, pixels) between two
// spots' peaks.
const peakRadius = 2

// components splits the strong pixels into spots, brightest first (ties
// by position, so the order is deterministic). Spots along a lattice row
// touch each other through their side maxima, so connected groups are
// split at their peaks: a peak is a strong pixel whose 3×3 sum is the
// largest within peakRadius (the first in scan order among equals), and
// every strong pixel joins the nearest peak of its 8-connected group.
func components(im *Image, bg []float64, strong []bool, minPhotons float64) []Spot {
	w, h := im.W, im.H
	sum3 := make([]float64, len(strong))
	for i, st := range strong {
		if !st {
			continue
		}
		f, s := i%w, i/w
		for ss := max(0, s-1); ss <= min(h-1, s+1); ss++ {
			for ff := max(0, f-1); ff <= min(w-1, f+1); ff++ {
				if j := ss*w + ff; im.usable(j) {
					sum3[i] += im.Data[j] - bg[j]
				}
			}
		}
	}
	isPeak := func(i int) bool {
		f, s := i%w, i/w
		for ss := max(0, s-peakRadius); ss <= min(h-1, s+peakRadius); ss++ {
			for ff := max(0, f-peakRadius); ff <= min(w-1, f+peakRadius); ff++ {
				j := ss*w + ff
				if strong[j] && (sum3[j] > sum3[i] || (sum3[j] == sum3[i] && j < i)) {
					return false
				}
			}
		}
		return true
	}
	group := make([]int, len(strong))
	for i := range group {
		group[i] = -1
	}
	var stack, members []int
	var spots []Spot
	for start, st := range strong {
		if !st || group[start] >= 0 {
			continue
		}
		// One 8-connected group, then its peaks.
		members = members[:0]
		group[start] = start
		stack = append(stack[:0], start)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			members = append(members, i)
			f, s := i%w, i/w
			for ss := max(0, s-1); ss <= min(h-1, s+1); ss++ {
				for ff := max(0, f-1); ff <= min(w-1, f+1); ff++ {
					if j := ss*w + ff; strong[j] && group[j] < 0 {
						group[j] = start
						stack = append(stack, j)
					}
				}
			}
		}
		sort.Ints(members)
		var peaks []int
		for _, i := range members {
			if isPeak(i) {
				peaks = append(peaks, i)
			}
		}
		if len(peaks) == 0 { // cannot happen: the group's largest sum is a peak
			peaks = members[:1]
		}
		acc := make([]struct {
			sp               Spot
			wsum, fsum, ssum float64
		}, len(peaks))
		for k, p := range peaks {
			acc[k].sp.Peak = p
		}
		for _, i := range members {
			f, s := i%w, i/w
			best, bd := 0, math.Inf(1)
			for k, p := range peaks {
				df, ds := float64(p%w-f), float64(p/w-s)
				if d := df*df + ds*ds; d < bd {
					best, bd = k, d
				}
			}
			a := &acc[best]
			v := im.Data[i]
			net := v - bg[i]
			a.sp.Photons += net
			a.sp.Pixels++
			if wt := math.Max(net, 0); wt > 0 {
				a.wsum += wt
				a.fsum += wt * (float64(f) + 0.5)
				a.ssum += wt * (float64(s) + 0.5)
			}
			if v > im.Data[a.sp.Peak] {
				a.sp.Peak = i
			}
			if im.Overload > 0 && v >= im.Overload {
				a.sp.Overloaded = true
			}
		}
		for _, a := range acc {
			if a.sp.Photons < minPhotons || a.wsum == 0 {
				continue
			}
			a.sp.F, a.sp.S = a.fsum/a.wsum, a.ssum/a.wsum
			spots = append(spots, a.sp)
		}
	}
	sort.SliceStable(spots, func(i, j int) bool { return spots[i].Photons > spots[j].Photons })
	return spots
}

// Box is the square of pixels [F0, F0+Size) × [S0, S0+Size) around
// spot Spot.
type Box struct {
	F0, S0, Size int
	Spot         int
}

// Pixels calls fn with the index of every pixel of b in an image w
// pixels wide.
func (b Box) Pixels(w int, fn func(i int)) {
	for s := b.S0; s < b.S0+b.Size; s++ {
		for f := b.F0; f < b.F0+b.Size; f++ {
			fn(s*w + f)
		}
	}
}

// Boxes lays a size×size box centred on each spot's centroid and keeps
// those that lie inside the image and hold neither an unusable nor a
// saturated pixel.
func Boxes(im *Image, spots []Spot, size int) []Box {
	var out []Box
	for k, sp := range spots {
		b := Box{F0: int(math.Round(sp.F - float64(size)/2)), S0: int(math.Round(sp.S - float64(size)/2)), Size: size, Spot: k}
		if b.F0 < 0 || b.S0 < 0 || b.F0+size > im.W || b.S0+size > im.H || sp.Overloaded {
			continue
		}
		ok := true
		b.Pixels(im.W, func(i int) {
			if !im.usable(i) || (im.Overload > 0 && im.Data[i] >= im.Overload) {
				ok = false
			}
		})
		if ok {
			out = append(out, b)
		}
	}
	return out
}

// Weights is the 0/1 weight image of the boxes' pixels (overlapping
// boxes count once) for an image of w×h pixels.
func Weights(w, h int, boxes []Box) []float64 {
	out := make([]float64, w*h)
	for _, b := range boxes {
		b.Pixels(w, func(i int) { out[i] = 1 })
	}
	return out
}
