package physics

import (
	"math"
	"unsafe"
)

// What the lane kernels (lanes.go) read besides the lane values, built by
// scalar code before they run: every value they combine with lanes
// repeated maxLanes times, so that a vector of it is one load of any
// width (vrep), and the vector kernels need no scalar floating-point
// instruction (see lanes.go).

// maxLanes is the widest lane kernel's lanes.
const maxLanes = 8

// rowChunk (the loss rows' chunks) and geoChunk (the forward rows') are
// multiples of maxLanes.
var _ [0]struct{} = [rowChunk%maxLanes + geoChunk%maxLanes]struct{}{}

// laneVal is a value repeated for the widest lane kernel.
type laneVal [maxLanes]float64

// laneSteps holds each lane's index (stepsLanes).
var laneSteps = [maxLanes]float64{0, 1, 2, 3, 4, 5, 6, 7}

// Repeated values the lane kernels need that no Go constant can hold:
// +Inf, −Inf, the NaN Go's amd64 math.Log returns for a negative
// argument (logLanes, poissonLanes), and every bit but the sign's, whose
// and with a value is its magnitude (neumaierLanes).
var (
	posInfRep = repeat(math.Inf(1))
	negInfRep = repeat(math.Inf(-1))
	logNaNRep = repeat(math.Float64frombits(0x7FF8000000000001))
	absRep    = repeat(math.Float64frombits(1<<63 - 1))
)

func repeat(x float64) (r laneVal) {
	for i := range r {
		r[i] = x
	}
	return r
}

func repeat3(v [3]float64) (r [3]laneVal) {
	repeat3To(&r, v)
	return r
}

// repeat3To stores repeat3(v) in *r: in place, without the 192-byte
// value repeat3 returns (the rows' set-up does this per row: returned
// and copied, 15 % of lossRow's own time in a fit's evaluation of its
// boxes).
func repeat3To(r *[3]laneVal, v [3]float64) {
	for j := range r {
		for i := range r[j] {
			r[j][i] = v[j]
		}
	}
}

// laneSrc is one source's incident direction, E- and B-vectors and 1/λ.
type laneSrc struct {
	inc, ein, bin [3]laneVal
	il            laneVal
}

func laneSrcOf(sr *source) laneSrc {
	return laneSrc{inc: repeat3(sr.inc), ein: repeat3(sr.ein), bin: repeat3(sr.bin), il: repeat(sr.invLambda)}
}

// laneReps is the kernel's part of what the lane kernels read.
type laneReps struct {
	// The repeated values first (at multiples of 64 bytes from the start).
	fd, sd, od, pix0                                     [3]laneVal
	sub, half, scale, omegaNum, ibg, defaultF, kahn      laneVal
	count                                                laneVal // ω terms per pixel (omegaTerms)
	hmin, hmax, kmin, kmax, lmin, lmax, hstride, kstride laneVal
	span                                                 [3]laneVal // the table's h, k, l ranges, max − min + 1 (interpFLanes)
	nan                                                  laneVal    // NaN (interpFLanes)
	pitch2, closeD                                       laneVal
	astar, bstar, cstar                                  [3]laneVal // the unrotated reciprocal axes (shapeLatticeLanes)
	nabc, fudge                                          laneVal    // Na·Nb·Nc and the spot shapes' fudge
	dmin                                                 laneVal    // the resolution limit (dminMergeLanes)
	distance                                             laneVal    // the curved detector's radius (bendLanes)
	beamD                                                [3]laneVal // distance·beam (bendLanes)
	nv                                                   [3]laneVal // per axis: N
	negZero                                              laneVal    // −0: its bits are the sign bit
	hklUnit                                              laneVal    // the unit of σ's sums (termUnits)
	// 2(j + 1) at j: the weights of U′_{n−1}'s sum (sincgGradLanes).
	uw [maxChebyshevN]laneVal

	hs, ks                          int     // the table's strides (interpFLanes' vgatherCube)
	shape                           Shape   // the crystal's (shapeLatticeLanes: Round, Gauss or Tophat)
	nn                              [3]int  // per axis: whole N (nChebyshev)
	nmode                           [3]int8 // per axis: nOne, nChebyshev or nRatio
	axes                            bool    // N per axis (sincgAxesLanes), not one whole N for all three
	kahnZero                        bool
	thickRule, polarRule, omegaRule bool // -oversample_thick, _polar, _omega (pixelsAxesRulesLanes)
}

// laneLists are the lane kernels' repeated values per sub-pixel column,
// sensor layer, orientation and source: apart from laneReps, which holds
// no pointers so that it can sit at a 64-byte boundary (align.go). Each
// list does too.
type laneLists struct {
	subF   []laneVal    // float64(subF) for each sub-pixel column
	odet   [][3]laneVal // odet·(detector normal) for each layer
	orient [][9]laneVal // a, b, c of each orientation (nil beyond maxRepOrient)
	many   []orientVals // beyond maxRepOrient: a, b, c of each orientation
	src    []laneSrc
}

// The lattice factor's evaluation on one axis in the lane kernels
// (laneReps.nmode; kernel.newKernel sets them).
const (
	nOne       int8 = iota // N ≤ 1: the factor is 1
	nChebyshev             // whole 1 < N ≤ maxChebyshevN: U_{N−1}(cos πx)
	nRatio                 // 1 < N < maxRatioN, not whole or beyond maxChebyshevN: sin(Nπd)/sin(πd)
	nGeneral               // any other N: only the general loops
)

// maxRatioN bounds the N of the ratio form on the lane kernels: N·d
// stays below 2⁵¹ and is rounded as the kernels round.
const maxRatioN = 1 << 20

// maxRepOrient bounds the orientations laneLists repeats (576 bytes each,
// 37.7 MB at the bound). The terms stream the whole table once per vector
// of pixels, and each orientation's 576 bytes meet ~150 vector
// operations, so a table beyond the caches still keeps up: at 64² with
// 20,000 and 60,000 mosaic domains the lanes took 0.45 and 1.49 s where
// the general loops took 2.08 and 6.88 s (4.6×; 1 << 14 was the bound
// before). Beyond it the forward of kernel.simple's structures takes the
// compact table (laneLists.many, 80 bytes an orientation; pixelsManyLanes
// and pixelsAxesManyLanes) where it does not interpolate, and the rest
// the general loops.
const maxRepOrient = 1 << 16

// orientVals are an orientation's a, b, c in a row, one value each, and
// a tenth, 0: hklManyLanes broadcasts each value to the lanes from a
// two-value load (vbcp), whose ninth reads the tenth too.
type orientVals [10]float64

// newLaneReps builds the kernel's laneReps and laneLists (orientations
// only when orient is set), at 64-byte boundaries.
func (k *kernel) newLaneReps(orient bool) (*laneReps, *laneLists) {
	c := k.c
	r := &alignedMake[laneReps](1)[0]
	*r = laneReps{fd: repeat3(k.fd), sd: repeat3(k.sd), od: repeat3(k.od), pix0: repeat3(k.pix0),
		sub: repeat(k.sub), half: repeat(k.sub / 2), scale: repeat(k.scale), omegaNum: repeat(k.omegaNum),
		ibg: repeat(k.ibg), defaultF: repeat(k.defaultF), kahn: repeat(k.kahn), kahnZero: k.kahn == 0,
		hmin: repeat(float64(c.HMin)), hmax: repeat(float64(c.HMax)), kmin: repeat(float64(c.KMin)),
		kmax: repeat(float64(c.KMax)), lmin: repeat(float64(c.LMin)), lmax: repeat(float64(c.LMax)),
		hstride: repeat(float64(k.hStride)), kstride: repeat(float64(k.kStride)),
		span: repeat3([3]float64{float64(c.HMax - c.HMin + 1), float64(c.KMax - c.KMin + 1), float64(c.LMax - c.LMin + 1)}),
		hs:   k.hStride, ks: k.kStride, nan: repeat(math.NaN()),
		count:   repeat(float64(c.ThickSteps * c.Oversample * c.Oversample)),
		negZero: repeat(math.Copysign(0, -1)),
		pitch2:  repeat(k.pitch * k.pitch), closeD: repeat(k.closeD),
		shape: c.Shape, astar: repeat3(k.astar), bstar: repeat3(k.bstar), cstar: repeat3(k.cstar),
		nabc: repeat(k.nabc), fudge: repeat(k.fudge), dmin: repeat(k.dmin),
		thickRule: c.OversampleThick, polarRule: c.OversamplePolar, omegaRule: c.OversampleOmega,
		distance: repeat(k.distance), beamD: repeat3([3]float64{k.distance * c.Beam[0], k.distance * c.Beam[1], k.distance * c.Beam[2]})}
	r.axes, r.nmode = k.nmode != [3]int8{nChebyshev, nChebyshev, nChebyshev} || k.nn[0] != k.nn[1] || k.nn[0] != k.nn[2], k.nmode
	r.uw = uWeights()
	hu, _, _ := k.termUnits()
	r.hklUnit = repeat(hu)
	for i, n := range [3]float64{k.na, k.nb, k.nc} {
		r.nv[i] = repeat(n)
		if k.nmode[i] == nChebyshev {
			r.nn[i] = int(n)
		}
	}
	l := &laneLists{subF: alignedMake[laneVal](c.Oversample), odet: alignedMake[[3]laneVal](c.ThickSteps),
		src: alignedMake[laneSrc](len(k.src))}
	for subF := range l.subF {
		l.subF[subF] = repeat(float64(subF))
	}
	for t := range l.odet {
		odet := float64(t) * k.thickStep
		l.odet[t] = repeat3([3]float64{odet * k.od[0], odet * k.od[1], odet * k.od[2]})
	}
	if orient && len(k.orient) > maxRepOrient {
		l.many = make([]orientVals, len(k.orient))
		for oi, o := range k.orient {
			for i := range o {
				copy(l.many[oi][3*i:], o[i][:])
			}
		}
	} else if orient {
		l.orient = alignedMake[[9]laneVal](len(k.orient))
		for oi, o := range k.orient {
			for i := range o {
				for j := range o[i] {
					l.orient[oi][3*i+j] = repeat(o[i][j])
				}
			}
		}
	}
	for si := range k.src {
		l.src[si] = laneSrcOf(&k.src[si])
	}
	return r, l
}

// bitsOf is the bit patterns of x, sharing its memory (the lane kernels
// gather structure factors with integer loads).
func bitsOf(x []float64) []uint64 {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&x[0])), len(x))
}

// rowBuf is one worker's row of lane-kernel pixels: their indices (idx;
// nil for a run of pixels from f0), float64(f·Oversample) (f), the
// slow-axis parts of each sub-pixel row (sdet), scratch space (geo), and
// the results of pixelsLanes (v, w, polar, par; om and omDone).
type rowBuf struct {
	idx                 []int
	f0                  int
	runF0, runN         int // f holds the run of runN pixels from runF0 (lanesRow; runN 0: not a run)
	f, v, w, polar, par []float64
	sdet                [][3]laneVal
	geo                 *[4][geoChunk]float64 // pixelsLanes: d and ω of a chunk
	om                  laneVal               // the running solid-angle sum (first lane)
	omDone              int                   // the pixels whose ω terms pixelsLanes added to om
	cube                []float64             // interpFLanes' scratch (kernel.interpLanes only)
	interp              bool                  // the row interpolates (pixelsAxesInterpLanes)
}

func (k *kernel) newRowBuf() *rowBuf {
	n := (k.c.FPixels + maxLanes - 1) / maxLanes * maxLanes
	rb := &rowBuf{f: alignedMake[float64](n), v: alignedMake[float64](n), w: alignedMake[float64](n),
		polar: alignedMake[float64](n), par: alignedMake[float64](n), sdet: alignedMake[[3]laneVal](k.c.Oversample),
		geo: &alignedMake[[4][geoChunk]float64](1)[0]}
	if k.interpLanes() {
		rb.cube = alignedMake[float64](cubeLen)
	}
	return rb
}

// uWeights is laneReps.uw: 2(j + 1) at j, U′_{n−1}'s weights
// (sincgGradLanes).
func uWeights() (w [maxChebyshevN]laneVal) {
	for j := range w {
		w[j] = repeat(float64(2 * (j + 1)))
	}
	return w
}
