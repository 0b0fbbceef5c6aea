package models

import (
	"io"
	"math"

	"github.com/gobragg/gobragg/models/formats"
)

// Setup describes a simulation with Go values, in the reference's units
// (Å, degrees, mm), for programs that build models without a command
// line. Its zero value is the reference's default for every field but
// the crystal, which needs Cell (or MatFile) and structure factors
// (DefaultF, HKL or HKLFile): 1 Å, 1024² pixels of 0.1 mm at 100 mm, the
// MOSFLM convention, the beam centred, one unit cell.
//
// Model builds it through the same rules as a command line (Args.Model),
// so that a Setup and the equivalent nanoBragg flags give the same model;
// Setup.Args gives the Args for what Setup does not cover.
type Setup struct {
	// Crystal.
	Cell      [6]float64 // a b c (Å) α β γ (deg); b, c 0: a; angles 0: 90
	MatFile   string     // MOSFLM A matrix file, in place of (or with) Cell
	MissetDeg [3]float64 // rotation about lab x, then y, then z
	// N are the unit cells along a, b, c (0: 1); SizeMM, when set, gives
	// the crystal's size instead (N = ⌈size/edge⌉, as -xtal_size).
	N      [3]int
	SizeMM [3]float64
	Shape  Shape
	// DefaultF is the structure factor of reflections not in HKL (or of
	// all, without one); HKL holds structure factors (formats.ReadHKL),
	// HKLFile names a file of them (read by Model; no cache is written).
	DefaultF float64
	HKL      *formats.HKLGrid
	HKLFile  string
	// Spindle: the first φ (deg), the oscillation range (deg, 0: none)
	// and its steps (0: the reference's rule).
	PhiDeg, OscDeg float64
	PhiSteps       int
	// Mosaicity: the spread (deg), its domains (0: 10 with a spread) and
	// their seed (0: the reference's 12345678).
	MosaicDeg     float64
	MosaicDomains int
	MosaicSeed    int64
	// Beam: wavelength (Å, 0: 1), fluence (photons/m², 0: the reference's
	// 1.26e29), Kahn polarization factor, or none at all.
	LambdaA float64
	Fluence float64
	Kahn    float64
	NoPolar bool
	// Detector: the convention, distance (mm, 0: 100), pixel (mm, 0:
	// 0.1), pixels along fast and slow (0: 1024), the direct beam's
	// position (mm, both 0: centred; -Xbeam/-Ybeam in MOSFLM, ORGX/ORGY
	// are used instead under XDS and DIALS), rotations about x, y, z and
	// the two-theta swing (deg), and sub-pixels per edge (0: automatic).
	Convention       Convention
	DistanceMM       float64
	PixelMM          float64
	Pixels           [2]int
	XbeamMM, YbeamMM float64
	RotDeg           [3]float64
	TwoThetaDeg      float64
	Oversample       int
	// Background and region: water thickness (µm), resolution cut-off
	// (Å, 0: none) and the pixels rendered (fmin fmax smin smax
	// inclusive; all zero: the whole detector).
	WaterUM float64
	DminA   float64
	ROI     [4]int
}

// Args returns the arguments a command line with the same meaning would
// parse to: change them for what Setup does not cover (sources,
// divergence, sensor, custom detector vectors), then call Args.Model.
func (s *Setup) Args() *Args {
	a := DefaultArgs()
	if s.Cell != [6]float64{} {
		a.Cell, a.HasCell = s.Cell, true
	}
	a.MatFile, a.HKLFile, a.HKLGrid = s.MatFile, s.HKLFile, s.HKL
	a.Misset = s.MissetDeg
	for i, n := range s.N {
		if n > 0 {
			*[]*int{&a.Na, &a.Nb, &a.Nc}[i] = n
		}
	}
	a.SizeMM = s.SizeMM
	a.Shape, a.DefaultF = s.Shape, s.DefaultF
	if s.PhiDeg != 0 {
		a.PhiDeg = s.PhiDeg
	}
	if s.OscDeg != 0 {
		a.OscDeg = s.OscDeg
	}
	if s.PhiSteps > 0 {
		a.PhiSteps = s.PhiSteps
	}
	if s.MosaicDeg != 0 {
		a.MosaicDeg = s.MosaicDeg
	}
	a.MosaicDomains = s.MosaicDomains
	if s.MosaicSeed != 0 {
		a.MosaicSeed = s.MosaicSeed
	}
	if s.LambdaA != 0 {
		a.LambdaA = s.LambdaA
	}
	if s.Fluence != 0 {
		a.Fluence = s.Fluence
	}
	a.Kahn, a.NoPolar = s.Kahn, s.NoPolar
	d := &a.Detector
	d.Convention = s.Convention
	if s.Convention == XDS {
		d.PivotFromArgs = PivotSample
	}
	if s.DistanceMM != 0 {
		d.DistanceMM = s.DistanceMM
	}
	if s.PixelMM != 0 {
		d.PixelMM = s.PixelMM
		d.DetsizeFMM, d.DetsizeSMM = 1024*s.PixelMM, 1024*s.PixelMM
	}
	if s.Pixels[0] > 0 {
		d.FPixels = s.Pixels[0]
	}
	if s.Pixels[1] > 0 {
		d.SPixels = s.Pixels[1]
	}
	if s.XbeamMM != 0 || s.YbeamMM != 0 {
		d.XbeamMM, d.YbeamMM = s.XbeamMM, s.YbeamMM
	}
	d.RotXDeg, d.RotYDeg, d.RotZDeg = s.RotDeg[0], s.RotDeg[1], s.RotDeg[2]
	d.TwoThetaDeg = s.TwoThetaDeg
	d.Oversample = s.Oversample
	a.WaterUM, a.DminA = s.WaterUM, s.DminA
	if s.ROI != [4]int{} {
		a.ROI = s.ROI
	}
	return &a
}

// Model builds and validates the model (reading MatFile or HKLFile if
// named; writing nothing). log receives the reference's notes and
// warnings (nil: discarded).
func (s *Setup) Model(log io.Writer) (*Model, error) {
	return s.Args().Model(log)
}

// SMVHeader is the SMV header the reference writes for the model's
// images: pixel size, distance, wavelength, the beam centre in each
// program's convention, the DIALS origin, XDS ORGX/ORGY, φ, oscillation
// and two-theta (formats.WriteSMV writes it).
func (m *Model) SMVHeader() formats.SMVHeader {
	d := m.Detector
	p := m.Params()
	fr := Place[float64](Float{}, d, p.Detector)
	g := d.Derive(fr)
	deg := 180 / math.Pi
	return formats.SMVHeader{PixelMM: d.Pixel * 1000, DistanceMM: g.Distance * 1000,
		WavelengthA: m.Beam.Lambda * 1e10, BeamCenterXMM: d.Xbeam * 1000, BeamCenterYMM: d.Ybeam * 1000,
		ADXVCenterXMM: g.Fbeam * 1000, ADXVCenterYMM: (d.DetsizeS - g.Sbeam) * 1000,
		MOSFLMCenterXMM: (g.Sbeam - 0.5*d.Pixel) * 1000, MOSFLMCenterYMM: (g.Fbeam - 0.5*d.Pixel) * 1000,
		DenzoXBeamMM: g.Sbeam * 1000, DenzoYBeamMM: g.Fbeam * 1000, DialsOriginMM: g.DialsOrigin,
		XDSOrgXPx: g.ORGX, XDSOrgYPx: g.ORGY, CloseDistanceMM: g.CloseDistance * 1000,
		PhiDeg: m.Crystal.Phi * deg, OscStartDeg: m.Crystal.Phi * deg, OscRangeDeg: m.Osc * deg,
		TwoThetaDeg: d.TwoTheta * deg}
}
