package models

import (
	"math"
	"sort"
	"strings"
)

// The flag table: every nanoBragg flag ParseArgs accepts, in groups, with
// the text `gobragg simulate --help` prints (generated from this table, so
// the help cannot leave a flag out; TestFlagsDocumented checks it).
// Values are in the reference's units: mm, µm where said, degrees, Å,
// mrad for divergence.

// Flag groups, in the order the help prints them.
const (
	GroupCrystal  = "crystal"
	GroupRotation = "rotation and mosaicity"
	GroupBeam     = "beam"
	GroupDetector = "detector"
	GroupSensor   = "sensor, sampling and region"
	GroupBack     = "background"
	GroupOutput   = "output"
	GroupGobragg  = "gobragg's own"
)

func group(name string, fs ...flagSpec) []flagSpec {
	for i := range fs {
		fs[i].group = name
	}
	return fs
}

func flat(groups ...[]flagSpec) []flagSpec {
	var out []flagSpec
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// sizeFlag sets crystal sizes (mm) along the axes named by 0 (a), 1 (b),
// 2 (c): the reference's -xtal_size family, which sets N from the cell.
func sizeFlag(axes ...int) func(*Args, string, []string) error {
	return func(a *Args, f string, v []string) error {
		x, err := num(f, v[0])
		if err == nil && !(x >= 0 && x <= maxLengthMM) {
			err = usagef("%s %s mm: a crystal size must be between 0 and %g mm", f, v[0], float64(maxLengthMM))
		}
		for _, i := range axes {
			a.SizeMM[i] = x
		}
		return err
	}
}

// stolFlag reads an amorphous structure-factor table with the reference's
// scale of its first column into sin(θ)/λ (1/m).
func stolFlag(mult float64) func(*Args, string, []string) error {
	return func(a *Args, f string, v []string) error {
		a.StolFile, a.StolFlag, a.StolMult = v[0], f, mult
		return nil
	}
}

var specs = flat(
	group(GroupCrystal,
		flagSpec{names: []string{"-cell"}, n: -1, set: setCell, args: "a [b c α β γ]",
			doc: "unit cell (Å, degrees); b and c default to a, the angles to 90"},
		flagSpec{names: []string{"-mat", "-matrix"}, n: 1, set: str(func(a *Args) *string { return &a.MatFile }), args: "FILE",
			doc: "MOSFLM orientation matrix: the reciprocal vectors times λ (Å⁻¹·Å); with -cell, the cell's lengths are kept"},
		flagSpec{names: []string{"-misset"}, n: 3, set: setMisset, args: "X Y Z | random",
			doc: "rotate the crystal about the lab x, y, z axes (degrees), or a random orientation"},
		flagSpec{names: []string{"-misset_seed"}, n: 1, set: func(a *Args, f string, v []string) error {
			a.HasMissetSeed = true
			return seed(func(a *Args) *int64 { return &a.MissetSeed })(a, f, v)
		}, args: "N", doc: "seed of -misset random (default: the clock)"},
		flagSpec{names: []string{"-hkl"}, n: 1, set: str(func(a *Args) *string { return &a.HKLFile }), args: "FILE",
			doc: "structure factors, lines of h k l F (nearest whole hkl; absent ones take -default_F)"},
		flagSpec{names: []string{"-default_F"}, n: 1, set: f1(func(a *Args) *float64 { return &a.DefaultF }), args: "F",
			doc: "structure factor of every reflection not in -hkl (default 0)"},
		flagSpec{names: []string{"-dump", "-dumpfile"}, n: 1, set: str(func(a *Args) *string { return &a.DumpFile }), args: "FILE",
			doc: "structure-factor cache written after reading -hkl and read back by a run without -hkl (default Fdump.bin)"},
		flagSpec{names: []string{"-N"}, n: 1, set: func(a *Args, f string, v []string) error {
			n, err := integer(f, v[0])
			a.Na, a.Nb, a.Nc = n, n, n
			return err
		}, args: "N", doc: "unit cells along each axis (default 1)"},
		flagSpec{names: []string{"-Na"}, n: 1, set: i1(func(a *Args) *int { return &a.Na }), args: "N", doc: "unit cells along a"},
		flagSpec{names: []string{"-Nb"}, n: 1, set: i1(func(a *Args) *int { return &a.Nb }), args: "N", doc: "unit cells along b"},
		flagSpec{names: []string{"-Nc"}, n: 1, set: i1(func(a *Args) *int { return &a.Nc }), args: "N", doc: "unit cells along c"},
		flagSpec{names: []string{"-xtal_size", "-xtalsize", "-sample_size", "-samplesize"}, n: 1, set: sizeFlag(0, 1, 2), args: "MM",
			doc: "crystal size along a, b and c (mm): N = ⌈size/cell edge⌉, in place of -N"},
		flagSpec{names: []string{"-xtal_x", "-xtal_thick", "-sample_x", "-sample_thick"}, n: 1, set: sizeFlag(0), args: "MM",
			doc: "crystal size along a (mm): Na = ⌈size/|a|⌉"},
		flagSpec{names: []string{"-xtal_y", "-xtal_width", "-sample_y", "-sample_width", "-width"}, n: 1, set: sizeFlag(1), args: "MM",
			doc: "crystal size along b (mm), clipped to -beamsize"},
		flagSpec{names: []string{"-xtal_z", "-xtal_height", "-sample_z", "-sample_height", "-height"}, n: 1, set: sizeFlag(2), args: "MM",
			doc: "crystal size along c (mm), clipped to -beamsize"},
		flagSpec{names: []string{"-density", "-sample_density"}, n: 1, set: f1(func(a *Args) *float64 { return &a.DensityGCC }), args: "G/CM3",
			doc: "sample density: accepted and, as in the reference, without effect"},
		flagSpec{names: []string{"-MW", "-molecular_weight", "-molecules", "-molec"}, n: 1, set: f1(func(a *Args) *float64 { return &a.MolecularWeight }), args: "G/MOL",
			doc: "molecular weight: accepted and, as in the reference, without effect"},
		flagSpec{names: []string{"-interpolate"}, n: 0, set: func(a *Args, _ string, _ []string) error { a.Interpolate = 1; return nil },
			doc: "tricubic interpolation of structure factors between reflections (default: on when any N ≤ 2)"},
		flagSpec{names: []string{"-nointerpolate"}, n: 0, set: func(a *Args, _ string, _ []string) error { a.Interpolate = 0; return nil },
			doc: "nearest-reflection structure factors"},
		flagSpec{names: []string{"-square_xtal"}, n: 0, set: shape(Square), doc: "parallelepiped crystal, sin(Nπh)/sin(πh) spots (default)"},
		flagSpec{names: []string{"-round_xtal"}, n: 0, set: shape(Round), doc: "ellipsoidal crystal"},
		flagSpec{names: []string{"-gauss_xtal"}, n: 0, set: shape(Gauss), doc: "Gaussian spots, no fringes between reflections"},
		flagSpec{names: []string{"-tophat_spots", "-binary_spots"}, n: 0, set: shape(Tophat), doc: "flat-topped spots, no fringes between reflections"},
		flagSpec{names: []string{"-fudge"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Fudge }), args: "X",
			doc: "width factor of the round, Gaussian and top-hat spot shapes (default 1)"},
	),
	group(GroupRotation,
		flagSpec{names: []string{"-phi"}, n: 1, set: f1(func(a *Args) *float64 { return &a.PhiDeg }), args: "DEG",
			doc: "spindle angle of the first φ step (default 0)"},
		flagSpec{names: []string{"-osc"}, n: 1, set: f1(func(a *Args) *float64 { return &a.OscDeg }), args: "DEG",
			doc: "oscillation range about the spindle axis"},
		flagSpec{names: []string{"-phistep"}, n: 1, set: f1(func(a *Args) *float64 { return &a.PhiStepDeg }), args: "DEG",
			doc: "φ step (default: -osc over -phisteps)"},
		flagSpec{names: []string{"-phisteps"}, n: 1, set: i1(func(a *Args) *int { return &a.PhiSteps }), args: "N",
			doc: "φ steps rendered over the oscillation (default 1, or 2 with -osc alone)"},
		flagSpec{names: []string{"-mosaic", "-mosaic_spread", "-mosaicity"}, n: 1, set: f1(func(a *Args) *float64 { return &a.MosaicDeg }), args: "DEG",
			doc: "isotropic mosaic spread (default 0)"},
		flagSpec{names: []string{"-mosaic_dom", "-mosaic_domains"}, n: 1, set: i1(func(a *Args) *int { return &a.MosaicDomains }), args: "N",
			doc: "mosaic domains drawn within the spread (default 10 with a spread, else 1)"},
		flagSpec{names: []string{"-mosaic_seed"}, n: 1, set: seed(func(a *Args) *int64 { return &a.MosaicSeed }), args: "N",
			doc: "seed of the mosaic domains (default 12345678)"},
	),
	group(GroupBeam,
		flagSpec{names: []string{"-lambda", "-wave", "-wavelength"}, n: 1, set: f1(func(a *Args) *float64 { return &a.LambdaA }), args: "Å",
			doc: "wavelength (default 1)"},
		flagSpec{names: []string{"-energy"}, n: 1, set: func(a *Args, f string, v []string) error {
			e, err := num(f, v[0])
			if err == nil && !(e > 0) {
				err = usagef("%s %s: the photon energy (eV) must be positive", f, v[0])
			}
			a.LambdaA = 12398.42 / e
			return err
		}, args: "EV", doc: "photon energy, in place of -lambda"},
		flagSpec{names: []string{"-fluence"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Fluence }), args: "PHOTONS/M²",
			doc: "incident photons per m² (default 1.26e29)"},
		flagSpec{names: []string{"-flux"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Flux }), args: "PHOTONS/S",
			doc: "flux: the fluence is flux × -exposure / -beamsize²"},
		flagSpec{names: []string{"-exposure"}, n: 1, set: f1(func(a *Args) *float64 { return &a.ExposureS }), args: "S",
			doc: "exposure time for -flux (default 1)"},
		flagSpec{names: []string{"-beamsize"}, n: 1, set: f1(func(a *Args) *float64 { return &a.BeamsizeMM }), args: "MM",
			doc: "beam size for -flux; crystal sizes beyond it are clipped (default 0.1)"},
		flagSpec{names: []string{"-polar"}, n: 1, set: func(a *Args, f string, v []string) error {
			x, err := num(f, v[0])
			a.Kahn, a.NoPolar = x, false
			return err
		}, args: "K", doc: "Kahn polarization factor, −1 to 1 (default 0: unpolarized)"},
		flagSpec{names: []string{"-nopolar"}, n: 0, set: on(func(a *Args) *bool { return &a.NoPolar }), doc: "no polarization correction"},
		flagSpec{names: []string{"-divergence"}, n: 1, set: func(a *Args, f string, v []string) error {
			x, err := num(f, v[0])
			a.HDivRange, a.VDivRange = x, x
			return err
		}, args: "MRAD", doc: "beam divergence, horizontal and vertical (default 0)"},
		flagSpec{names: []string{"-hdivrange"}, n: 1, set: f1(func(a *Args) *float64 { return &a.HDivRange }), args: "MRAD", doc: "horizontal divergence"},
		flagSpec{names: []string{"-vdivrange"}, n: 1, set: f1(func(a *Args) *float64 { return &a.VDivRange }), args: "MRAD", doc: "vertical divergence"},
		flagSpec{names: []string{"-hdivstep"}, n: 1, set: f1(func(a *Args) *float64 { return &a.HDivStep }), args: "MRAD", doc: "horizontal divergence step"},
		flagSpec{names: []string{"-vdivstep"}, n: 1, set: f1(func(a *Args) *float64 { return &a.VDivStep }), args: "MRAD", doc: "vertical divergence step"},
		flagSpec{names: []string{"-hdivsteps"}, n: 1, set: i1(func(a *Args) *int { return &a.HDivSteps }), args: "N", doc: "horizontal source points"},
		flagSpec{names: []string{"-vdivsteps"}, n: 1, set: i1(func(a *Args) *int { return &a.VDivSteps }), args: "N", doc: "vertical source points"},
		flagSpec{names: []string{"-divsteps"}, n: 1, set: func(a *Args, f string, v []string) error {
			n, err := integer(f, v[0])
			a.HDivSteps, a.VDivSteps = n, n
			return err
		}, args: "N", doc: "source points along each direction"},
		flagSpec{names: []string{"-round_div"}, n: 0, set: func(a *Args, _ string, _ []string) error { a.SquareDiv = false; return nil },
			doc: "divergence grid with its corners cut off (default)"},
		flagSpec{names: []string{"-square_div"}, n: 0, set: on(func(a *Args) *bool { return &a.SquareDiv }), doc: "the full divergence grid"},
		flagSpec{names: []string{"-dispersion"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Dispersion }), args: "%",
			doc: "spectral width Δλ/λ (default 0)"},
		flagSpec{names: []string{"-dispsteps"}, n: 1, set: i1(func(a *Args) *int { return &a.DispSteps }), args: "N", doc: "wavelengths across -dispersion"},
		flagSpec{names: []string{"-sourcefile"}, n: 1, set: str(func(a *Args) *string { return &a.SourceFile }), args: "FILE",
			doc: "sources, lines of X Y Z weight λ(m) (the weight is read and ignored, as in the reference)"},
		flagSpec{names: []string{"-source_distance"}, n: 1, set: f1(func(a *Args) *float64 { return &a.SourceDistanceMM }), args: "MM",
			doc: "accepted and, as in the reference (whose parsing of it is commented out), without effect: the sources sit 10 m away"},
	),
	group(GroupDetector,
		flagSpec{names: []string{"-mosflm"}, n: 0, set: conv(MOSFLM), doc: "MOSFLM convention: beam along +x (default)"},
		flagSpec{names: []string{"-xds"}, n: 0, set: conv(XDS), doc: "XDS convention, -ORGX/-ORGY place the beam"},
		flagSpec{names: []string{"-dials"}, n: 0, set: conv(DIALS), doc: "DIALS convention"},
		flagSpec{names: []string{"-adxv"}, n: 0, set: conv(ADXV), doc: "ADXV convention"},
		flagSpec{names: []string{"-denzo"}, n: 0, set: conv(DENZO), doc: "DENZO convention"},
		flagSpec{names: []string{"-distance"}, n: 1, set: pivotAfter(PivotBeam, f1(func(a *Args) *float64 { return &a.Detector.DistanceMM })), args: "MM",
			doc: "sample to detector along the beam (default 100)"},
		flagSpec{names: []string{"-close_distance"}, n: 1, set: pivotAfter(PivotSample, f1(func(a *Args) *float64 { return &a.Detector.CloseDistanceMM })), args: "MM",
			doc: "sample to detector plane along its normal"},
		flagSpec{names: []string{"-Xbeam"}, n: 1, set: pivotAfter(PivotBeam, f1(func(a *Args) *float64 { return &a.Detector.XbeamMM })), args: "MM",
			doc: "direct-beam position along the fast axis (default: centre)"},
		flagSpec{names: []string{"-Ybeam"}, n: 1, set: pivotAfter(PivotBeam, f1(func(a *Args) *float64 { return &a.Detector.YbeamMM })), args: "MM",
			doc: "direct-beam position along the slow axis (default: centre)"},
		flagSpec{names: []string{"-Xclose"}, n: 1, set: pivotAfter(PivotSample, f1(func(a *Args) *float64 { return &a.Detector.XcloseMM })), args: "MM",
			doc: "fast coordinate of the point nearest the sample"},
		flagSpec{names: []string{"-Yclose"}, n: 1, set: pivotAfter(PivotSample, f1(func(a *Args) *float64 { return &a.Detector.YcloseMM })), args: "MM",
			doc: "slow coordinate of the point nearest the sample"},
		flagSpec{names: []string{"-ORGX"}, n: 1, set: pivotAfter(PivotSample, f1(func(a *Args) *float64 { return &a.Detector.ORGX })), args: "PIXELS",
			doc: "XDS beam centre, fast (pixels)"},
		flagSpec{names: []string{"-ORGY"}, n: 1, set: pivotAfter(PivotSample, f1(func(a *Args) *float64 { return &a.Detector.ORGY })), args: "PIXELS",
			doc: "XDS beam centre, slow (pixels)"},
		flagSpec{names: []string{"-pixel"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Detector.PixelMM }), args: "MM",
			doc: "pixel size (default 0.1)"},
		flagSpec{names: []string{"-detpixels"}, n: 1, set: func(a *Args, f string, v []string) error {
			n, err := integer(f, v[0])
			a.Detector.FPixels, a.Detector.SPixels = n, n
			return err
		}, args: "N", doc: "pixels along each edge (default: -detsize/-pixel, 1024)"},
		flagSpec{names: []string{"-detpixels_x", "-detpixels_f"}, n: 1, set: i1(func(a *Args) *int { return &a.Detector.FPixels }), args: "N", doc: "pixels along the fast axis"},
		flagSpec{names: []string{"-detpixels_y", "-detpixels_s"}, n: 1, set: i1(func(a *Args) *int { return &a.Detector.SPixels }), args: "N", doc: "pixels along the slow axis"},
		flagSpec{names: []string{"-detsize"}, n: 1, set: func(a *Args, f string, v []string) error {
			x, err := num(f, v[0])
			a.Detector.DetsizeFMM, a.Detector.DetsizeSMM = x, x
			return err
		}, args: "MM", doc: "detector edge (default 102.4)"},
		flagSpec{names: []string{"-detsize_f"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Detector.DetsizeFMM }), args: "MM", doc: "detector size along the fast axis"},
		flagSpec{names: []string{"-detsize_s"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Detector.DetsizeSMM }), args: "MM", doc: "detector size along the slow axis"},
		flagSpec{names: []string{"-detector_rotx"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Detector.RotXDeg }), args: "DEG", doc: "rotate the detector about the lab x axis"},
		flagSpec{names: []string{"-detector_roty"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Detector.RotYDeg }), args: "DEG", doc: "rotate the detector about y"},
		flagSpec{names: []string{"-detector_rotz"}, n: 1, set: f1(func(a *Args) *float64 { return &a.Detector.RotZDeg }), args: "DEG", doc: "rotate the detector about z"},
		flagSpec{names: []string{"-twotheta"}, n: 1, set: pivotAfter(PivotSample, f1(func(a *Args) *float64 { return &a.Detector.TwoThetaDeg })), args: "DEG",
			doc: "swing the detector about the two-theta axis (below 90)"},
		flagSpec{names: []string{"-pivot"}, n: 1, set: func(a *Args, f string, v []string) error {
			switch v[0] {
			case "beam":
				a.Detector.PivotFromArgs = PivotBeam
			case "sample":
				a.Detector.PivotFromArgs = PivotSample
			default:
				return usagef("%s %q: want beam or sample", f, v[0])
			}
			return nil
		}, args: "beam|sample", doc: "what the detector rotates about (only the custom convention keeps it)"},
		flagSpec{names: []string{"-fdet_vector"}, n: 3, set: v3(func(a *Args) *[3]float64 { return &a.Detector.FDet }, true), args: "X Y Z",
			doc: "fast-axis direction (custom convention; default 0 0 1)"},
		flagSpec{names: []string{"-sdet_vector"}, n: 3, set: v3(func(a *Args) *[3]float64 { return &a.Detector.SDet }, true), args: "X Y Z",
			doc: "slow-axis direction (default 0 −1 0)"},
		flagSpec{names: []string{"-odet_vector"}, n: 3, set: v3(func(a *Args) *[3]float64 { return &a.Detector.ODet }, true), args: "X Y Z",
			doc: "detector normal, away from the sample (default 1 0 0)"},
		flagSpec{names: []string{"-beam_vector"}, n: 3, set: v3(func(a *Args) *[3]float64 { return &a.Detector.Beam }, true), args: "X Y Z",
			doc: "beam direction (default 1 0 0)"},
		flagSpec{names: []string{"-polar_vector"}, n: 3, set: v3(func(a *Args) *[3]float64 { return &a.Detector.Polar }, true), args: "X Y Z",
			doc: "E-vector of the polarization (default 0 0 1)"},
		flagSpec{names: []string{"-spindle_axis"}, n: 3, set: v3(func(a *Args) *[3]float64 { return &a.Detector.Spindle }, true), args: "X Y Z",
			doc: "φ rotation axis (default 0 0 1)"},
		// The reference's substring match makes -twotheta_axis also a
		// -twotheta: gobragg keeps its pivot choice (sample) but not the angle.
		flagSpec{names: []string{"-twotheta_axis"}, n: 3, set: pivotAfter(PivotSample, v3(func(a *Args) *[3]float64 { return &a.Detector.TwoThetaAx }, true)), args: "X Y Z",
			doc: "two-theta rotation axis (default 0 1 0)"},
		// The reference parses -pix0_vector, selects CUSTOM, and then
		// overwrites the vector when it places the detector; so does gobragg.
		flagSpec{names: []string{"-pix0_vector"}, n: 3, set: v3(func(a *Args) *[3]float64 { return &a.Detector.Pix0M }, true), args: "X Y Z",
			doc: "selects the custom convention; the position is recomputed, as in the reference"},
		flagSpec{names: []string{"-img"}, n: 1, set: func(*Args, string, []string) error { return nil }, args: "FILE",
			doc: "take the detector from an SMV header (read before the other flags)"},
	),
	group(GroupSensor,
		flagSpec{names: []string{"-oversample"}, n: 1, set: i1(func(a *Args) *int { return &a.Detector.Oversample }), args: "N",
			doc: "sub-pixels per pixel edge (default: the reference's rule from crystal size and pixel)"},
		flagSpec{names: []string{"-oversample_omega"}, n: 0, set: on(func(a *Args) *bool { return &a.Detector.OversampleOmega }),
			doc: "solid angle per sub-pixel (the reference's running-sum rule)"},
		flagSpec{names: []string{"-oversample_polar"}, n: 0, set: on(func(a *Args) *bool { return &a.Detector.OversamplePolar }),
			doc: "polarization per sub-pixel"},
		flagSpec{names: []string{"-oversample_thick"}, n: 0, set: on(func(a *Args) *bool { return &a.Detector.OversampleThick }),
			doc: "sensor absorption per sub-pixel"},
		flagSpec{names: []string{"-point_pixel"}, n: 0, set: on(func(a *Args) *bool { return &a.Detector.PointPixel }),
			doc: "solid angle 1/R², no obliquity"},
		flagSpec{names: []string{"-curved_det", "-curved_detector"}, n: 0, set: on(func(a *Args) *bool { return &a.Curved }),
			doc: "every pixel at the same distance from the sample"},
		flagSpec{names: []string{"-detector_thick"}, n: 1, set: f1(func(a *Args) *float64 { return &a.DetThickUM }), args: "µM",
			doc: "sensor thickness (default 0)"},
		flagSpec{names: []string{"-detector_abs", "-detector_absorb", "-detector_absorption"}, n: 1, set: func(a *Args, f string, v []string) error {
			// "inf" or 0: no absorption and, at this point of the command line,
			// no thickness (a later -detector_thick still sets one, as in the
			// reference, leaving μ = 0).
			if strings.HasPrefix(v[0], "inf") {
				a.DetAbsOff, a.DetThickUM = true, 0
				return nil
			}
			x, err := num(f, v[0])
			a.DetAbsUM, a.DetAbsOff = x, x == 0
			if x == 0 {
				a.DetThickUM = 0
			}
			return err
		}, args: "µM|inf", doc: "sensor attenuation length (default: none)"},
		flagSpec{names: []string{"-thicksteps", "-detector_thicksteps"}, n: 1, set: i1(func(a *Args) *int { return &a.ThickSteps }), args: "N",
			doc: "sensor layers (default 1)"},
		flagSpec{names: []string{"-roi"}, n: 4, set: func(a *Args, f string, v []string) error {
			for i := 0; i < 4; i++ {
				n, err := integer(f, v[i])
				if err != nil {
					return err
				}
				a.ROI[i] = n
			}
			return nil
		}, args: "FMIN FMAX SMIN SMAX", doc: "render only these pixels (inclusive)"},
		flagSpec{names: []string{"-mask"}, n: 1, set: func(*Args, string, []string) error { return nil }, args: "FILE",
			doc: "SMV image: render only its non-zero pixels (its header read first, as -img)"},
		flagSpec{names: []string{"-dmin"}, n: 1, set: f1(func(a *Args) *float64 { return &a.DminA }), args: "Å",
			doc: "skip scattering beyond this resolution"},
	),
	group(GroupBack,
		flagSpec{names: []string{"-water"}, n: 1, set: f1(func(a *Args) *float64 { return &a.WaterUM }), args: "µM",
			doc: "add the scattering of this thickness of water (default 0)"},
		flagSpec{names: []string{"-stol"}, n: 1, set: stolFlag(1e10), args: "FILE",
			doc: "amorphous F against sin(θ)/λ (Å⁻¹): read and checked; as in the reference, the image does not change"},
		flagSpec{names: []string{"-4stol"}, n: 1, set: stolFlag(1e10 / 4), args: "FILE", doc: "the same, against 4 sin(θ)/λ"},
		flagSpec{names: []string{"-Q"}, n: 1, set: stolFlag(1e10 / math.Pi / 4), args: "FILE", doc: "the same, against Q = 4π sin(θ)/λ"},
		flagSpec{names: []string{"-stolout"}, n: 1, set: str(func(a *Args) *string { return &a.StolOut }), args: "FILE",
			doc: "accepted; the reference never writes this file, nor does gobragg"},
		flagSpec{names: []string{"-coherent"}, n: 0, set: on(func(a *Args) *bool { return &a.Coherent }),
			doc: "accepted; without effect, as in the reference"},
	),
	group(GroupOutput,
		flagSpec{names: []string{"-floatfile", "-floatimage"}, n: 1, set: str(func(a *Args) *string { return &a.FloatFile }), args: "FILE",
			doc: "float32 photons per pixel, no header (default floatimage.bin, always written)"},
		flagSpec{names: []string{"-intfile", "-intimage"}, n: 1, set: str(func(a *Args) *string { return &a.IntFile }), args: "FILE",
			doc: "noiseless SMV image, scaled by -scale plus -adc"},
		flagSpec{names: []string{"-noisefile", "-noiseimage"}, n: 1, set: str(func(a *Args) *string { return &a.NoiseFile }), args: "FILE",
			doc: "SMV image with Poisson noise (seed -seed)"},
		flagSpec{names: []string{"-pgmfile", "-pgmimage"}, n: 1, set: func(a *Args, _ string, v []string) error { a.PGMFile, a.NoPGM = v[0], false; return nil },
			args: "FILE", doc: "8-bit PGM preview"},
		flagSpec{names: []string{"-scale"}, n: 1, set: f1(func(a *Args) *float64 { return &a.IntScale }), args: "X",
			doc: "-intfile counts per photon (default 55000/max)"},
		flagSpec{names: []string{"-adc"}, n: 1, set: f1(func(a *Args) *float64 { return &a.ADC }), args: "COUNTS",
			doc: "offset added to SMV pixels (default 40)"},
		flagSpec{names: []string{"-pgmscale"}, n: 1, set: f1(func(a *Args) *float64 { return &a.PGMScale }), args: "X",
			doc: "PGM grey levels per photon (default 250/(5·rmsd))"},
		flagSpec{names: []string{"-nopgm"}, n: 0, set: on(func(a *Args) *bool { return &a.NoPGM }), doc: "no PGM file"},
		flagSpec{names: []string{"-seed"}, n: 1, set: func(a *Args, f string, v []string) error {
			a.HasSeed = true
			return seed(func(a *Args) *int64 { return &a.Seed })(a, f, v)
		}, args: "N", doc: "seed of the noise image (default: the clock)"},
		flagSpec{names: []string{"-nonoise"}, n: 0, set: func(a *Args, _ string, _ []string) error { a.NoiseFile = ""; return nil },
			doc: "no noise image, as in the reference: a later -noisefile turns it back on"},
		flagSpec{names: []string{"-progress"}, n: 0, set: func(a *Args, _ string, _ []string) error { a.Progress = 1; return nil },
			doc: "progress bar on a terminal from the start, or percentage lines on stderr when it is not one"},
		flagSpec{names: []string{"-noprogress"}, n: 0, set: func(a *Args, _ string, _ []string) error { a.Progress = 0; return nil },
			doc: "no progress bar (default: a bar on a terminal for runs over a second)"},
		flagSpec{names: []string{"-printout"}, n: 0, set: on(func(a *Args) *bool { return &a.Printout }),
			doc: "print every pixel's values, as the reference"},
		flagSpec{names: []string{"-printout_pixel"}, n: 2, set: func(a *Args, f string, v []string) error {
			a.Printout = true
			for i := 0; i < 2; i++ {
				n, err := integer(f, v[i])
				if err != nil {
					return err
				}
				a.PrintoutPixel[i] = n
			}
			return nil
		}, args: "F S", doc: "print that pixel's values: position, hkl, F, polarization, solid angle..."},
	),
	group(GroupGobragg,
		flagSpec{names: []string{"-max_work"}, n: 1, set: f1(func(a *Args) *float64 { return &a.MaxWork }), args: "TERMS",
			doc: "refuse runs of more pixel terms than this (default 1e10, about five minutes)"},
		flagSpec{names: []string{"-max_memory"}, n: 1, set: f1(func(a *Args) *float64 { return &a.MaxMemoryMB }), args: "MB",
			doc: "refuse runs needing more memory than this (default 768)"},
		flagSpec{names: []string{"-json"}, n: 0, set: on(func(a *Args) *bool { return &a.JSON }),
			doc: "print the statistics as one JSON object on stdout (also --json)"},
		flagSpec{names: []string{"-expt"}, n: 1, set: str(func(a *Args) *string { return &a.ExptFile }), args: "FILE",
			doc: "write a DIALS experiment list (.expt) with the image's exact geometry"},
		flagSpec{names: []string{"-cbf"}, n: 0, set: on(func(a *Args) *bool { return &a.CBF }),
			doc: "write -intfile and -noisefile as miniCBF whatever their names (a .cbf name does so anyway)"},
	),
)

// FlagInfo describes one flag ParseArgs accepts.
type FlagInfo struct {
	Names  []string // its spellings, the usual one first
	Values int      // values it takes (−1: one to six numbers, for -cell)
	Args   string   // the values' names, with units where they have one
	Doc    string   // what it does, with its default
	Group  string   // one of the Group constants
}

// Flags lists every flag ParseArgs accepts, grouped (crystal, rotation
// and mosaicity, beam, detector, sensor, background, output, gobragg's
// own) in the order of the help text.
func Flags() []FlagInfo {
	out := make([]FlagInfo, len(specs))
	for i, s := range specs {
		out[i] = FlagInfo{Names: append([]string(nil), s.names...), Values: s.n, Args: s.args, Doc: s.doc, Group: s.group}
	}
	return out
}

// SuggestFlags returns up to three known flags nearest to name in edit
// distance (at most a third of its length, and at most 3 edits), nearest
// first: "-lamda" → "-lambda".
func SuggestFlags(name string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	limit := min(3, max(1, len(name)/3))
	for n := range byName {
		if d := EditDistance(strings.ToLower(name), strings.ToLower(n)); d <= limit {
			cs = append(cs, cand{n, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// EditDistance is the Levenshtein distance of a and b, counting bytes
// (for "did you mean" suggestions).
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
