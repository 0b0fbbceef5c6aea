package models

import (
	"fmt"
	"math"
)

// Convention names a detector/beam axis convention of the reference program.
type Convention int

// The conventions, MOSFLM first because it is the reference's default.
const (
	MOSFLM Convention = iota
	XDS
	DIALS
	ADXV
	DENZO
	CUSTOM
)

func (c Convention) String() string {
	return [...]string{"mosflm", "xds", "dials", "adxv", "denzo", "custom"}[c]
}

// Pivot is what stays fixed when the detector is rotated.
type Pivot int

const (
	// PivotBeam keeps the direct-beam spot at the same detector coordinate.
	PivotBeam Pivot = iota
	// PivotSample keeps the point of closest approach fixed before rotation.
	PivotSample
)

// MaxPixels bounds the image size (8192² pixels): enough for any real
// detector, and the float64 image and its copies stay within a few GB.
const MaxPixels = 1 << 26

// Detector is a validated flat pixel-array detector in SI units (metres,
// radians). Build one with NewDetector; the zero value is not usable.
type Detector struct {
	Convention Convention
	Pivot      Pivot
	FPixels    int     // pixels along the fast axis
	SPixels    int     // pixels along the slow axis
	Pixel      float64 // pixel pitch, m
	// DetsizeF, DetsizeS: the detector's extent (m) as the reference keeps
	// it (from -detsize, or pixels × pitch); headers use DetsizeS.
	DetsizeF, DetsizeS float64
	// Distance is the sample-to-detector distance along the beam (m), as
	// the reference's -distance; CloseDistance the perpendicular one (m).
	// Exactly one of them is the user's; the other is derived.
	Distance      float64
	CloseDistance float64
	// Fbeam, Sbeam: direct-beam position on the fast/slow axes (m), used by
	// the BEAM pivot. Fclose, Sclose: foot of the perpendicular from the
	// sample (m), used by the SAMPLE pivot.
	Fbeam, Sbeam, Fclose, Sclose float64
	// Xbeam, Ybeam: the user-facing beam centre written to SMV headers (m).
	Xbeam, Ybeam float64
	// Rotations of the detector about lab x, y, z (applied in that order),
	// then about TwoThetaAxis by TwoTheta; radians.
	RotX, RotY, RotZ, TwoTheta float64
	// Unit vectors before rotation.
	FDet, SDet, ODet, Beam, Polar, Spindle, TwoThetaAxis [3]float64
	// PointPixel replaces the pixel solid angle by 1/R² (no obliquity).
	PointPixel bool
	// Oversample is the number of sub-pixels per pixel edge (≥ 1).
	Oversample int
	// OversampleOmega, OversamplePolar, OversampleThick: recompute ω /
	// polarization / capture fraction for every sub-pixel instead of using
	// the first sub-pixel's value.
	OversampleOmega, OversamplePolar, OversampleThick bool
	// Sensor: ThickSteps layers ThickStep apart (m), attenuation Mu (1/m).
	// Thick is false for an infinitely thin sensor (capture fraction 1).
	Thick      bool
	ThickSteps int
	ThickStep  float64
	Mu         float64
	// Curved puts every pixel at Distance from the sample.
	Curved bool
	// ROI holds inclusive pixel bounds fmin, fmax, smin, smax.
	ROI [4]int
	// Mask, when non-nil, renders only pixels whose value is non-zero
	// (slow-major, FPixels·SPixels values).
	Mask []float64
	// In is the description the detector was built from, kept so that a
	// user-level parameter (-distance, -Xbeam, …) can be changed with the
	// reference's bookkeeping (see Model.With).
	In DetectorInput
	// FrameFix is added to the placed frame (Place): a residual of a few
	// rounding errors that makes a detector read from another program's
	// description (a DIALS experiment list) sit exactly, bit for bit, where
	// that description puts it. Zero for detectors from a command line. A
	// constant: it has no gradient and moves with no parameter.
	FrameFix Frame[float64]
}

// DetectorInput is the user's detector description in the reference's
// flag units (mm, degrees, pixels). NaN marks "not given" for the float
// fields that have reference defaults.
type DetectorInput struct {
	Convention          Convention
	PivotFromArgs       Pivot // pivot the argv implied; only CUSTOM keeps it
	FPixels, SPixels    int   // 0: from DetsizeFMM/DetsizeSMM
	DetsizeFMM          float64
	DetsizeSMM          float64
	PixelMM             float64
	DistanceMM          float64
	CloseDistanceMM     float64 // NaN if absent
	XbeamMM, YbeamMM    float64 // NaN if absent
	XcloseMM, YcloseMM  float64 // NaN if absent
	ORGX, ORGY          float64 // NaN if absent (pixels)
	RotXDeg, RotYDeg    float64
	RotZDeg             float64
	TwoThetaDeg         float64
	FDet, SDet, ODet    [3]float64 // CUSTOM only
	Beam, Polar         [3]float64 // CUSTOM only
	Spindle, TwoThetaAx [3]float64 // CUSTOM only
	Pix0M               [3]float64 // parsed, then overwritten by placement as in the reference
	PointPixel          bool
	Oversample          int // ≤ 0: automatic
	OversampleOmega     bool
	OversamplePolar     bool
	OversampleThick     bool
}

// DefaultDetectorInput is the reference's detector before any flag:
// MOSFLM, 102.4 mm square, 0.1 mm pixels, 100 mm, beam centred.
func DefaultDetectorInput() DetectorInput {
	nan := math.NaN()
	return DetectorInput{
		Convention: MOSFLM, PivotFromArgs: PivotBeam,
		DetsizeFMM: 102.4, DetsizeSMM: 102.4, PixelMM: 0.1, DistanceMM: 100,
		CloseDistanceMM: nan, XbeamMM: nan, YbeamMM: nan, XcloseMM: nan, YcloseMM: nan,
		ORGX: nan, ORGY: nan,
		// The reference's initial vectors, used as-is by CUSTOM when the
		// user leaves one out.
		FDet: [3]float64{0, 0, 1}, SDet: [3]float64{0, -1, 0}, ODet: [3]float64{1, 0, 0},
		Beam: [3]float64{1, 0, 0}, Polar: [3]float64{0, 0, 1}, Spindle: [3]float64{0, 0, 1},
		TwoThetaAx: [3]float64{0, 1, 0},
	}
}

// NewDetector validates in and converts it to SI, deciding the beam-centre
// bookkeeping and pivot exactly as the reference does after parsing.
func NewDetector(in DetectorInput) (*Detector, error) {
	if !(in.PixelMM >= minPixelMM && in.PixelMM <= maxLengthMM) {
		return nil, fmt.Errorf("models: -pixel %g mm: must be a size between %g and %g mm", in.PixelMM, minPixelMM, maxLengthMM)
	}
	if in.FPixels < 0 || in.SPixels < 0 {
		return nil, fmt.Errorf("models: -detpixels %d %d: must be positive", in.FPixels, in.SPixels)
	}
	if err := in.checkFinite(); err != nil {
		return nil, err
	}
	d := &Detector{In: in, Convention: in.Convention, Pixel: in.PixelMM / 1000, PointPixel: in.PointPixel,
		RotX: rad(in.RotXDeg), RotY: rad(in.RotYDeg), RotZ: rad(in.RotZDeg), TwoTheta: rad(in.TwoThetaDeg),
		OversampleOmega: in.OversampleOmega, OversamplePolar: in.OversamplePolar, OversampleThick: in.OversampleThick}
	detF, detS := in.DetsizeFMM/1000, in.DetsizeSMM/1000
	if in.FPixels > 0 {
		detF = d.Pixel * float64(in.FPixels)
	}
	if in.SPixels > 0 {
		detS = d.Pixel * float64(in.SPixels)
	}
	d.DetsizeF, d.DetsizeS = detF, detS
	// Pixel counts from sizes, rounded as the reference does; checked as
	// floats before they become ints.
	nf, ns := math.Ceil(detF/d.Pixel-0.5), math.Ceil(detS/d.Pixel-0.5)
	if !(nf >= 1 && ns >= 1) {
		return nil, fmt.Errorf("models: detector of %.3gx%.3g pixels: need at least one pixel", nf, ns)
	}
	if nf*ns > MaxPixels {
		return nil, fmt.Errorf("models: detector of %.3gx%.3g pixels (-detsize %g %g mm, -pixel %g mm) is too large: at most %d pixels (8192²) are supported",
			nf, ns, detF*1000, detS*1000, in.PixelMM, MaxPixels)
	}
	d.FPixels, d.SPixels = int(nf), int(ns)
	if !(in.DistanceMM > 0) && math.IsNaN(in.CloseDistanceMM) {
		return nil, fmt.Errorf("models: -distance %g mm: must be positive", in.DistanceMM)
	}
	if !math.IsNaN(in.CloseDistanceMM) && !(in.CloseDistanceMM > 0) {
		return nil, fmt.Errorf("models: -close_distance %g mm: must be positive", in.CloseDistanceMM)
	}
	mm := func(x float64) float64 { return x / 1000 }
	fclose, sclose := math.NaN(), math.NaN()
	if !math.IsNaN(in.ORGX) {
		fclose = (in.ORGX - 0.5) * d.Pixel
	}
	if !math.IsNaN(in.ORGY) {
		sclose = (in.ORGY - 0.5) * d.Pixel
	}
	if math.IsNaN(fclose) {
		fclose = detF / 2
	}
	if math.IsNaN(sclose) {
		sclose = detS / 2
	}
	xclose, yclose := mm(in.XcloseMM), mm(in.YcloseMM)
	if math.IsNaN(xclose) {
		xclose = fclose
	}
	if math.IsNaN(yclose) {
		yclose = sclose
	}
	xbeam, ybeam := mm(in.XbeamMM), mm(in.YbeamMM)
	or := func(v, def float64) float64 {
		if math.IsNaN(v) {
			return def
		}
		return v
	}
	p := d.Pixel
	var fbeam, sbeam float64
	switch in.Convention {
	case ADXV:
		xbeam, ybeam = or(xbeam, (detF+p)/2), or(ybeam, (detS-p)/2)
		d.Beam, d.FDet, d.SDet, d.ODet = [3]float64{0, 0, 1}, [3]float64{1, 0, 0}, [3]float64{0, -1, 0}, [3]float64{0, 0, 1}
		d.TwoThetaAxis, d.Polar, d.Spindle = [3]float64{-1, 0, 0}, [3]float64{1, 0, 0}, [3]float64{1, 0, 0}
		fbeam, sbeam, d.Pivot = xbeam, detS-ybeam, PivotBeam
	case MOSFLM, DENZO:
		xbeam, ybeam = or(xbeam, (detS+p)/2), or(ybeam, (detF+p)/2)
		d.Beam, d.ODet, d.FDet, d.SDet = [3]float64{1, 0, 0}, [3]float64{1, 0, 0}, [3]float64{0, 0, 1}, [3]float64{0, -1, 0}
		d.TwoThetaAxis, d.Polar, d.Spindle = [3]float64{0, 0, -1}, [3]float64{0, 0, 1}, [3]float64{0, 0, 1}
		half := 0.5 * p // MOSFLM's beam centre is a pixel corner away from DENZO's
		if in.Convention == DENZO {
			half = 0
		}
		fbeam, sbeam, d.Pivot = ybeam+half, xbeam+half, PivotBeam
	case XDS, DIALS:
		xbeam, ybeam = or(xbeam, xclose), or(ybeam, yclose)
		d.Beam, d.FDet, d.SDet, d.ODet = [3]float64{0, 0, 1}, [3]float64{1, 0, 0}, [3]float64{0, 1, 0}, [3]float64{0, 0, 1}
		if in.Convention == XDS {
			d.TwoThetaAxis, d.Polar, d.Spindle = [3]float64{1, 0, 0}, [3]float64{1, 0, 0}, [3]float64{1, 0, 0}
		} else {
			d.TwoThetaAxis, d.Polar, d.Spindle = [3]float64{0, 1, 0}, [3]float64{0, 1, 0}, [3]float64{0, 1, 0}
		}
		fbeam, sbeam, d.Pivot = xbeam, ybeam, PivotSample
	case CUSTOM:
		xbeam, ybeam = or(xbeam, xclose), or(ybeam, yclose)
		d.Beam, d.FDet, d.SDet, d.ODet = in.Beam, in.FDet, in.SDet, in.ODet
		d.TwoThetaAxis, d.Polar, d.Spindle = in.TwoThetaAx, in.Polar, in.Spindle
		fbeam, sbeam, fclose, sclose = xbeam, ybeam, xbeam, ybeam
		d.Pivot = in.PivotFromArgs
	default:
		return nil, fmt.Errorf("models: unknown detector convention %d", in.Convention)
	}
	// Unit vectors; a zero vector is the user's error, not a NaN later.
	for _, v := range []struct {
		name string
		v    *[3]float64
	}{{"-beam_vector", &d.Beam}, {"-fdet_vector", &d.FDet}, {"-sdet_vector", &d.SDet},
		{"-polar_vector", &d.Polar}, {"-spindle_axis", &d.Spindle}, {"-twotheta_axis", &d.TwoThetaAxis}} {
		n := math.Sqrt(v.v[0]*v.v[0] + v.v[1]*v.v[1] + v.v[2]*v.v[2])
		if !(n > 0) || math.IsInf(n, 0) {
			return nil, fmt.Errorf("models: %s %v: must be a finite non-zero vector", v.name, *v.v)
		}
		// The reference normalises every axis but the two-theta axis,
		// which it uses as given (a longer one over-rotates).
		if v.name != "-twotheta_axis" {
			*v.v = [3]float64{v.v[0] / n, v.v[1] / n, v.v[2] / n}
		}
	}
	// Parallel fast and slow axes put every pixel on one line (the
	// reference renders that without complaint).
	if fs := Cross[float64](Float{}, d.FDet, d.SDet); Norm[float64](Float{}, fs) < 1e-6 {
		return nil, fmt.Errorf("models: -fdet_vector and -sdet_vector are parallel")
	}
	// The reference rebuilds odet as fdet × sdet unless it was already a
	// unit vector.
	if n := math.Sqrt(d.ODet[0]*d.ODet[0] + d.ODet[1]*d.ODet[1] + d.ODet[2]*d.ODet[2]); n != 1 {
		c := Cross[float64](Float{}, d.FDet, d.SDet)
		cn := Norm[float64](Float{}, c)
		if !(cn > 0) {
			return nil, fmt.Errorf("models: -fdet_vector and -sdet_vector are parallel")
		}
		d.ODet = [3]float64{c[0] / cn, c[1] / cn, c[2] / cn}
	}
	d.Xbeam, d.Ybeam, d.Fbeam, d.Sbeam, d.Fclose, d.Sclose = xbeam, ybeam, fbeam, sbeam, fclose, sclose
	for name, v := range map[string]float64{"beam centre": fbeam + sbeam, "detector origin": fclose + sclose} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("models: %s is not finite", name)
		}
	}

	// Beam/detector-normal obliquity before the two-theta swing decides
	// how -distance and -close_distance relate (reference semantics).
	ratio := d.obliquity()
	if ratio == 0 || math.IsNaN(ratio) {
		return nil, fmt.Errorf("models: the detector rotations make its plane parallel to the beam")
	}
	if math.IsNaN(in.CloseDistanceMM) {
		d.CloseDistance = math.Abs(ratio * mm(in.DistanceMM))
	} else {
		d.CloseDistance = mm(in.CloseDistanceMM)
	}
	d.Distance = d.CloseDistance / ratio

	d.Oversample = in.Oversample
	d.ROI = [4]int{0, d.FPixels, 0, d.SPixels}
	if err := d.checkFacing(); err != nil {
		return nil, err
	}
	return d, nil
}

// Bounds on detector lengths (mm): far outside anything real, inside what
// the arithmetic handles.
const (
	minPixelMM  = 1e-6
	maxLengthMM = 1e7 // 10 km: distances, beam centres, detector sizes
)

// checkFinite refuses infinite or absurd numbers (an -img header can carry
// "inf"; NaN means "not given" where the field allows it).
func (in *DetectorInput) checkFinite() error {
	for _, v := range []struct {
		name  string
		x     float64
		unset bool // NaN allowed
		max   float64
	}{
		{"-distance", in.DistanceMM, false, maxLengthMM}, {"-close_distance", in.CloseDistanceMM, true, maxLengthMM},
		{"-detsize_f", in.DetsizeFMM, false, maxLengthMM}, {"-detsize_s", in.DetsizeSMM, false, maxLengthMM},
		{"-Xbeam", in.XbeamMM, true, maxLengthMM}, {"-Ybeam", in.YbeamMM, true, maxLengthMM},
		{"-Xclose", in.XcloseMM, true, maxLengthMM}, {"-Yclose", in.YcloseMM, true, maxLengthMM},
		{"-ORGX", in.ORGX, true, maxLengthMM / minPixelMM}, {"-ORGY", in.ORGY, true, maxLengthMM / minPixelMM},
		{"-detector_rotx", in.RotXDeg, false, 1e6}, {"-detector_roty", in.RotYDeg, false, 1e6},
		{"-detector_rotz", in.RotZDeg, false, 1e6}, {"-twotheta", in.TwoThetaDeg, false, 1e6},
	} {
		if v.unset && math.IsNaN(v.x) {
			continue
		}
		if !(math.Abs(v.x) <= v.max) {
			return fmt.Errorf("models: %s %g: must be a finite number of magnitude at most %g", v.name, v.x, v.max)
		}
	}
	return nil
}

// checkFacing refuses a detector that does not face the forward beam:
// after all its rotations its normal must make an angle of less than 90°
// with the beam, and the sample must lie on its front side (positive
// close distance). Otherwise the solid angles are negative (the image too)
// or the distance along the beam is infinite: -twotheta 90 and beyond
// (back-scattering geometries), which the reference computes without
// complaint, are refused.
func (d *Detector) checkFacing() error {
	A := Float{}
	fr := Place[float64](A, d, d.Params())
	cosBeam := Dot[float64](A, d.Beam, fr.O)
	close := Dot[float64](A, fr.Pix0, fr.O)
	if cosBeam > 1e-6 && close > 0 && !math.IsInf(close, 0) {
		return nil
	}
	angle := math.Acos(math.Max(-1, math.Min(1, cosBeam))) * 180 / math.Pi
	return fmt.Errorf("models: the detector does not face the forward beam (its normal is %.4g° from the beam, -twotheta %g, -detector_rotx/y/z %g %g %g): it must be less than 90°",
		angle, d.In.TwoThetaDeg, d.In.RotXDeg, d.In.RotYDeg, d.In.RotZDeg)
}

func rad(deg float64) float64 { return deg * math.Pi / 180 }

// obliquity is beam · (rotated detector normal), rotations x,y,z only.
func (d *Detector) obliquity() float64 {
	A := Float{}
	o := RotateXYZ[float64](A, d.ODet, d.RotX, d.RotY, d.RotZ)
	return Dot[float64](A, d.Beam, o)
}

// DetectorParams are a detector's continuous parameters over an algebra.
type DetectorParams[T any] struct {
	Distance                   T // m, along the beam (BEAM pivot)
	CloseDistance              T // m, perpendicular (SAMPLE pivot)
	Fbeam, Sbeam               T // m
	Fclose, Sclose             T // m
	RotX, RotY, RotZ, TwoTheta T // rad
	Pixel                      T // m
	ThickStep, Mu              T // m, 1/m
}

// Params returns the detector's parameter values.
func (d *Detector) Params() DetectorParams[float64] {
	return DetectorParams[float64]{Distance: d.Distance, CloseDistance: d.CloseDistance,
		Fbeam: d.Fbeam, Sbeam: d.Sbeam, Fclose: d.Fclose, Sclose: d.Sclose,
		RotX: d.RotX, RotY: d.RotY, RotZ: d.RotZ, TwoTheta: d.TwoTheta, Pixel: d.Pixel,
		ThickStep: d.ThickStep, Mu: d.Mu}
}

// Frame is a placed detector: the lab position of the corner of the first
// pixel and the rotated fast, slow and normal unit vectors (m).
type Frame[T any] struct {
	Pix0, F, S, O V3[T]
}

// Place rotates and positions the detector (reference order: x, y, z
// rotations, then the two-theta swing; the pivot decides whether the beam
// spot or the closest-approach point stays put).
func Place[T any](A Alg[T], d *Detector, p DetectorParams[T]) Frame[T] {
	rot := func(v V3[T]) V3[T] {
		v = RotateXYZ(A, v, p.RotX, p.RotY, p.RotZ)
		return RotateAxis(A, v, ConstV(A, d.TwoThetaAxis), p.TwoTheta)
	}
	f0, s0, o0 := ConstV(A, d.FDet), ConstV(A, d.SDet), ConstV(A, d.ODet)
	var fr Frame[T]
	fr.F, fr.S, fr.O = rot(f0), rot(s0), rot(o0)
	switch {
	case d.Pivot == PivotSample:
		var p0 V3[T]
		for i := 0; i < 3; i++ {
			p0[i] = A.Sub(A.Mul(p.CloseDistance, o0[i]), A.Add(A.Mul(p.Fclose, f0[i]), A.Mul(p.Sclose, s0[i])))
		}
		fr.Pix0 = rot(p0)
	default:
		beam := ConstV(A, d.Beam)
		for i := 0; i < 3; i++ {
			fr.Pix0[i] = A.Sub(A.Mul(p.Distance, beam[i]), A.Add(A.Mul(p.Fbeam, fr.F[i]), A.Mul(p.Sbeam, fr.S[i])))
		}
	}
	if d.FrameFix != (Frame[float64]{}) {
		fix := func(v *V3[T], f V3[float64]) {
			for i := range v {
				if f[i] != 0 {
					v[i] = A.Add(v[i], A.Const(f[i]))
				}
			}
		}
		fix(&fr.Pix0, d.FrameFix.Pix0)
		fix(&fr.F, d.FrameFix.F)
		fix(&fr.S, d.FrameFix.S)
		fix(&fr.O, d.FrameFix.O)
	}
	return fr
}

// Derived is the bookkeeping the reference recomputes from a placed
// detector for its headers: all lengths in m.
type Derived struct {
	Fclose, Sclose, CloseDistance float64
	Fbeam, Sbeam, Distance        float64
	ORGX, ORGY                    float64    // pixels
	DialsOrigin                   [3]float64 // mm
}

// Derive computes the header quantities of a placed detector.
func (d *Detector) Derive(fr Frame[float64]) Derived {
	A := Float{}
	var r Derived
	r.Fclose = -Dot[float64](A, fr.Pix0, fr.F)
	r.Sclose = -Dot[float64](A, fr.Pix0, fr.S)
	r.CloseDistance = Dot[float64](A, fr.Pix0, fr.O)
	ratio := d.obliquity()
	beam := V3[float64](d.Beam)
	var v V3[float64]
	for i := 0; i < 3; i++ {
		v[i] = r.CloseDistance/ratio*beam[i] - fr.Pix0[i]
	}
	r.Fbeam = Dot[float64](A, fr.F, v)
	r.Sbeam = Dot[float64](A, fr.S, v)
	r.Distance = r.CloseDistance / ratio
	r.ORGX = r.Fclose/d.Pixel + 0.5
	r.ORGY = r.Sclose/d.Pixel + 0.5
	r.DialsOrigin = [3]float64{1000 * fr.Pix0[2], 1000 * fr.Pix0[1], -1000 * fr.Pix0[0]}
	return r
}
