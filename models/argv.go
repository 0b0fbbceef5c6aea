package models

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/models/formats"
)

// Args is a nanoBragg command line, parsed but not yet turned into a Model:
// the values are still in the reference's flag units (mm, degrees, Å, µm).
type Args struct {
	Detector DetectorInput
	// Crystal.
	Cell             [6]float64 // a b c (Å) α β γ (deg); zero: unset
	HasCell          bool
	MatFile, HKLFile string
	// HKLGrid, when set, holds the structure factors in place of -hkl
	// (building a model from Go values; see Setup).
	HKLGrid    *formats.HKLGrid
	DumpFile   string // Fdump cache, default "Fdump.bin"
	Misset     [3]float64
	Na, Nb, Nc int
	DefaultF   float64
	// Interpolate: −1 automatic (on when any N ≤ 2), 0 off, 1 on; the
	// last of -interpolate/-nointerpolate wins.
	Interpolate int
	// Beam.
	LambdaA               float64
	Fluence, Flux         float64
	ExposureS, BeamsizeMM float64
	Kahn                  float64
	NoPolar               bool
	// Spindle (one φ step only in this version).
	PhiDeg, OscDeg, PhiStepDeg float64 // NaN: unset
	PhiSteps                   int     // < 0: unset
	MosaicDeg                  float64 // NaN: unset
	MosaicDomains              int
	// Seeds as given on the command line (the reference negates them).
	Seed, MosaicSeed, MissetSeed int64
	HasSeed, HasMissetSeed       bool
	MissetRandom                 bool
	// Crystal shape.
	Shape Shape
	Fudge float64
	// Sources: divergence (mrad), dispersion (%), or a file. NaN/−1: unset.
	HDivRange, VDivRange, HDivStep, VDivStep float64
	HDivSteps, VDivSteps                     int
	SquareDiv                                bool
	Dispersion                               float64
	DispSteps                                int
	SourceFile                               string
	SourceDistanceMM                         float64 // parsed; without effect, as in the reference
	// Sensor (µm): thickness, attenuation length; ThickSteps −1 unset.
	DetThickUM, DetAbsUM float64
	DetAbsOff            bool
	ThickSteps           int
	// Background, cut-off, region.
	WaterUM, DminA float64
	ROI            [4]int
	Curved         bool
	// Outputs.
	FloatFile, IntFile, PGMFile, NoiseFile string
	IntScale, PGMScale, ADC                float64
	NoPGM                                  bool
	// Mask holds the -mask file's pixels (nil: none).
	Mask []float64
	// ImgFile, MaskFile: the -img and -mask files read.
	ImgFile, MaskFile string
	// ExptFile is gobragg's -expt: a DIALS experiment list describing the
	// image's geometry exactly. CBF (-cbf) writes -intfile and -noisefile
	// as miniCBF whatever their names (a .cbf name does so anyway).
	ExptFile string
	CBF      bool
	// MaxWork (pixel terms) and MaxMemoryMB (MB) are -max_work and
	// -max_memory, 0 when not given: the limits Model checks (see Limits).
	MaxWork, MaxMemoryMB float64
	// PixelBytes is the memory the command needs per image pixel, for the
	// memory estimate (0: GradientPixelBytes).
	PixelBytes float64
	// SizeMM are the crystal's sizes along a, b, c (mm; 0: not given):
	// -xtal_size and its family. Model sets N from them as the reference
	// does, N = ⌈size/|edge|⌉, overriding -N.
	SizeMM [3]float64
	// DensityGCC and MolecularWeight are -density and -MW: read, and
	// without effect, as in the reference (it overwrites both before use).
	DensityGCC, MolecularWeight float64
	// StolFile is an amorphous structure-factor table (-stol, -4stol or -Q,
	// named by StolFlag; StolMult scales its first column to sin(θ)/λ in
	// 1/m). The reference reads and checks it but never uses it: neither
	// does gobragg. StolOut (-stolout) is accepted and never written, as
	// in the reference.
	StolFile, StolFlag, StolOut string
	StolMult                    float64
	// Coherent is -coherent: accepted, without effect, as in the reference.
	Coherent bool
	// Printout (-printout, -printout_pixel) asks for the reference's
	// per-pixel block: for every pixel, or for PrintoutPixel (fast, slow)
	// when that is not (−1, −1).
	Printout      bool
	PrintoutPixel [2]int
	// Progress is −1 (automatic: a bar when the run is long and stderr a
	// terminal), 0 (-noprogress) or 1 (-progress).
	Progress int
	// JSON is -json: the statistics as one JSON object.
	JSON bool
	// Warnings are printed by Model: things the reference accepts silently.
	Warnings []string
}

// DefaultArgs is the reference program's state before any flag.
func DefaultArgs() Args {
	nan := math.NaN()
	return Args{Detector: DefaultDetectorInput(), DumpFile: "Fdump.bin", Na: 1, Nb: 1, Nc: 1, Interpolate: -1,
		LambdaA: 1, Fluence: 125932015286227086360700780544.0, ExposureS: 1, BeamsizeMM: 0.1,
		PhiDeg: nan, OscDeg: nan, PhiStepDeg: nan, PhiSteps: -1, MosaicDeg: nan, ADC: 40,
		MosaicSeed: 12345678, Fudge: 1, HDivRange: nan, VDivRange: nan, HDivStep: nan, VDivStep: nan,
		HDivSteps: -1, VDivSteps: -1, DispSteps: -1, SourceDistanceMM: 10000, DetAbsUM: nan, ThickSteps: -1,
		ROI: [4]int{-1, -1, -1, -1}, PrintoutPixel: [2]int{-1, -1}, Progress: -1}
}

// ErrUsage marks command-line mistakes (unknown flag, missing or malformed
// value); the CLI maps it to its usage exit code.
var ErrUsage = errors.New("usage")

func usagef(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUsage}, a...)...)
}

// flagSpec is one reference flag: its spellings, how many values it takes
// (-1: the variable-length -cell), what it sets, and its description for
// the help text: the values' names with their units and what the flag
// does, with its default (the group is set by the table, flags.go).
type flagSpec struct {
	names []string
	n     int
	set   func(a *Args, flag string, v []string) error
	args  string
	doc   string
	group string
}

func num(flag, s string) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, usagef("%s: %q is not a number", flag, s)
	}
	return x, nil
}

func integer(flag, s string) (int, error) {
	x, err := num(flag, s)
	if err != nil {
		return 0, err
	}
	if x != math.Trunc(x) || math.Abs(x) > 1<<31 {
		return 0, usagef("%s: %q is not a whole number", flag, s)
	}
	return int(x), nil
}

func f1(dst func(*Args) *float64) func(*Args, string, []string) error {
	return func(a *Args, flag string, v []string) error {
		x, err := num(flag, v[0])
		*dst(a) = x
		return err
	}
}

func i1(dst func(*Args) *int) func(*Args, string, []string) error {
	return func(a *Args, flag string, v []string) error {
		x, err := integer(flag, v[0])
		*dst(a) = x
		return err
	}
}

func v3(dst func(*Args) *[3]float64, custom bool) func(*Args, string, []string) error {
	return func(a *Args, flag string, v []string) error {
		for i := 0; i < 3; i++ {
			x, err := num(flag, v[i])
			if err != nil {
				return err
			}
			dst(a)[i] = x
		}
		if custom {
			a.Detector.Convention = CUSTOM
		}
		return nil
	}
}

// conv selects a convention and, as the reference's argv loop does, the
// pivot that a later CUSTOM vector flag would keep (xds: sample, others:
// beam).
func conv(c Convention) func(*Args, string, []string) error {
	return func(a *Args, _ string, _ []string) error {
		a.Detector.Convention = c
		a.Detector.PivotFromArgs = PivotBeam
		if c == XDS {
			a.Detector.PivotFromArgs = PivotSample
		}
		return nil
	}
}

func str(dst func(*Args) *string) func(*Args, string, []string) error {
	return func(a *Args, _ string, v []string) error { *dst(a) = v[0]; return nil }
}

func on(dst func(*Args) *bool) func(*Args, string, []string) error {
	return func(a *Args, _ string, _ []string) error { *dst(a) = true; return nil }
}

func seed(dst func(*Args) *int64) func(*Args, string, []string) error {
	return func(a *Args, flag string, v []string) error {
		x, err := integer(flag, v[0])
		*dst(a) = int64(x)
		return err
	}
}

// pivotAfter wraps a setter with the pivot the reference's argv loop
// records for that flag (only the CUSTOM convention keeps it).
func pivotAfter(p Pivot, set func(*Args, string, []string) error) func(*Args, string, []string) error {
	return func(a *Args, flag string, v []string) error {
		a.Detector.PivotFromArgs = p
		return set(a, flag, v)
	}
}

var byName = func() map[string]*flagSpec {
	m := map[string]*flagSpec{}
	for i := range specs {
		for _, n := range specs[i].names {
			m[n] = &specs[i]
		}
	}
	return m
}()

// cellDefaults applies the reference's defaults for a short -cell (b = c =
// a, 90° angles) and converts the angles to radians.
func cellDefaults(cell [6]float64) (a, b, c, al, be, ga float64) {
	for i := 1; i < 3; i++ {
		if cell[i] <= 0 {
			cell[i] = cell[0]
		}
	}
	for i := 3; i < 6; i++ {
		if cell[i] <= 0 {
			cell[i] = 90
		}
	}
	return cell[0], cell[1], cell[2], rad(cell[3]), rad(cell[4]), rad(cell[5])
}

func shape(sh Shape) func(*Args, string, []string) error {
	return func(a *Args, _ string, _ []string) error { a.Shape = sh; return nil }
}

func setCell(a *Args, flag string, v []string) error {
	if len(v) == 0 {
		return usagef("%s: needs the cell a b c (Å) α β γ (deg)", flag)
	}
	a.HasCell = true
	// As the reference: a -cell of fewer than six numbers sets those it
	// gives and keeps an earlier -cell's others (0, unset, at first).
	for i, s := range v {
		x, err := num(flag, s)
		if err != nil {
			return err
		}
		a.Cell[i] = x
	}
	return nil
}

func setMisset(a *Args, flag string, v []string) error {
	if strings.HasPrefix(v[0], "rand") {
		a.MissetRandom = true
		return nil
	}
	a.MissetRandom = false // the later -misset wins, as in the reference
	for i := 0; i < 3; i++ {
		x, err := num(flag, v[i])
		if err != nil {
			return err
		}
		a.Misset[i] = x
	}
	return nil
}

// ParseArgs reads a nanoBragg argv (without the program name). Flags are
// matched by their exact spelling (the reference's aliases included), not
// by substring as the reference does, so "-twotheta_axis" no longer also
// sets -twotheta and "-misset_seed" no longer sets -misset.
//
// As the reference does, a -mask and then an -img SMV file are read first:
// their headers set the detector defaults that the other flags may then
// override, and the mask's non-zero pixels are the ones rendered.
func ParseArgs(argv []string) (*Args, error) {
	a := DefaultArgs()
	for _, name := range []string{"-mask", "-img"} {
		for i := 0; i+1 < len(argv); i++ {
			if argv[i] == name {
				if err := a.ingest(name, argv[i+1]); err != nil {
					return nil, err
				}
				if name == "-img" {
					a.ImgFile = argv[i+1]
				} else {
					a.MaskFile = argv[i+1]
				}
			}
		}
	}
	for i := 0; i < len(argv); i++ {
		flag := argv[i]
		sp, ok := byName[flag]
		if !ok {
			if !strings.HasPrefix(flag, "-") {
				if _, err := strconv.ParseFloat(flag, 64); err == nil {
					// The reference skips stray values (e.g. angles left
					// after "-cell 100 100 100 -curved_det 90 90 90"); say so.
					a.Warnings = append(a.Warnings, fmt.Sprintf("WARNING: ignoring stray value %q", flag))
					continue
				}
				return nil, usagef("unexpected argument %q (values must follow their flag)", flag)
			}
			if near := SuggestFlags(flag); len(near) > 0 {
				return nil, usagef("unknown flag %s (did you mean %s?)", flag, strings.Join(near, ", "))
			}
			return nil, usagef("unknown flag %s (gobragg simulate --help lists the flags)", flag)
		}
		var vals []string
		if sp.n < 0 {
			// -cell: up to six numbers, stopping at the next flag.
			for j := i + 1; j < len(argv) && j <= i+6; j++ {
				if _, err := strconv.ParseFloat(argv[j], 64); err != nil {
					break
				}
				vals = append(vals, argv[j])
			}
		} else {
			if i+sp.n >= len(argv) {
				// -misset random takes one value, not three.
				if !(flag == "-misset" && i+1 < len(argv) && strings.HasPrefix(argv[i+1], "rand")) {
					return nil, usagef("%s: needs %d value(s)", flag, sp.n)
				}
			}
			end := i + 1 + sp.n
			if flag == "-misset" && strings.HasPrefix(argv[i+1], "rand") {
				end = i + 2
			}
			if end > len(argv) {
				end = len(argv)
			}
			vals = argv[i+1 : end]
		}
		if sp.args == "FILE" && len(vals) == 1 && vals[0] == "" {
			// ("" would take the default name, or read nothing.)
			return nil, usagef("%s \"\": an empty file name", flag)
		}
		if err := sp.set(&a, flag, vals); err != nil {
			return nil, err
		}
		i += len(vals)
	}
	return &a, nil
}

// InputFile is a file a command line reads, with the flag that names it.
type InputFile struct{ Flag, Path string }

// InputFiles lists the files the arguments read: -hkl (or the Fdump cache
// read in its place), -mat, -sourcefile, -img and -mask.
func (a *Args) InputFiles() []InputFile {
	var in []InputFile
	for _, f := range []InputFile{{"-hkl", a.HKLFile}, {"-mat", a.MatFile}, {"-sourcefile", a.SourceFile},
		{"-img", a.ImgFile}, {"-mask", a.MaskFile}, {a.StolFlag, a.StolFile}} {
		if f.Path != "" {
			in = append(in, f)
		}
	}
	if a.HKLFile == "" {
		in = append(in, InputFile{"structure-factor cache", a.DumpFile})
	}
	return in
}

// Model turns parsed arguments into a validated Model, reading the input
// files the arguments name. Like the reference it reads the structure
// factor cache (a.DumpFile) when no -hkl is given and that file exists;
// it writes no file (the reference writes the cache after reading -hkl:
// commands that want that call WriteDump). log receives the lines the
// reference prints about these files.
//
// The work and memory the model implies are checked against the limits
// (-max_work, -max_memory) as soon as they are known: the work before any
// structure factors are read, the grid's size before it is allocated.
func (a *Args) Model(log io.Writer) (*Model, error) {
	if log == nil {
		log = io.Discard
	}
	for _, w := range a.Warnings {
		fmt.Fprintln(log, w)
	}
	d, err := NewDetector(a.Detector)
	if err != nil {
		return nil, err
	}
	lambda := a.LambdaA * 1e-10
	fluence := a.Fluence
	if a.Flux != 0 && a.ExposureS > 0 && a.BeamsizeMM >= 0 {
		if a.BeamsizeMM == 0 {
			return nil, usagef("-beamsize 0: a flux needs a non-zero beam size")
		}
		b := a.BeamsizeMM / 1000
		fluence = a.Flux * a.ExposureS / (b * b)
	}
	beam := &Beam{Lambda: lambda, Fluence: fluence, Kahn: a.Kahn, NoPolar: a.NoPolar}
	clamp := func(n int) float64 { return math.Max(1, float64(n)) } // the reference's N ≤ 1 → 1
	c := &Crystal{Na: clamp(a.Na), Nb: clamp(a.Nb), Nc: clamp(a.Nc), DefaultF: a.DefaultF,
		MissetX: rad(a.Misset[0]), MissetY: rad(a.Misset[1]), MissetZ: rad(a.Misset[2]),
		Shape: a.Shape, Fudge: a.Fudge}
	if a.MissetRandom {
		ms := a.missetSeed()
		c.MissetX, c.MissetY, c.MissetZ = RandomMisset(ms)
		fmt.Fprintf(log, "random orientation misset angles: %f %f %f deg\n", c.MissetX*180/math.Pi,
			c.MissetY*180/math.Pi, c.MissetZ*180/math.Pi)
	}
	switch {
	case a.MatFile != "":
		f, err := formats.OpenInput(a.MatFile, formats.MaxMatrixBytes)
		if err != nil {
			return nil, fmt.Errorf("models: -mat: %w", err)
		}
		c.Matrix, err = formats.ReadMatrix(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("models: -mat %s: %w", a.MatFile, err)
		}
		c.FromMatrix = true
		if a.HasCell {
			// The reference keeps the matrix's orientation and forces the
			// cell's edge lengths and volume onto it.
			c.CellLengths = true
			c.CellA, c.CellB, c.CellC, c.Alpha, c.Beta, c.Gamma = cellDefaults(a.Cell)
		}
	case a.HasCell:
		c.CellA, c.CellB, c.CellC, c.Alpha, c.Beta, c.Gamma = cellDefaults(a.Cell)
	default:
		return nil, usagef("no crystal: give -cell a b c alpha beta gamma or -mat FILE")
	}
	if err := a.limitFlags(); err != nil {
		return nil, err
	}
	a.crystalSize(c, lambda, log)
	steps, step, osc, err := a.phiSweep()
	if err != nil {
		return nil, err
	}
	if !math.IsNaN(a.PhiDeg) {
		c.Phi = rad(a.PhiDeg)
	}
	c.PhiSteps, c.PhiStep = steps, rad(step)
	if err := a.mosaic(c, log); err != nil {
		return nil, err
	}
	if err := a.sensor(d, log); err != nil {
		return nil, err
	}
	if beam.Sources, err = a.sources(d); err != nil {
		return nil, err
	}
	beam.Water, beam.Dmin = a.WaterUM*1e-6, a.DminA*1e-10
	if err := a.region(d); err != nil {
		return nil, err
	}
	d.Curved = a.Curved
	if a.Mask != nil {
		if len(a.Mask) != d.FPixels*d.SPixels {
			return nil, usagef("-mask: %d pixels, the detector has %dx%d", len(a.Mask), d.FPixels, d.SPixels)
		}
		d.Mask = a.Mask
	}
	m := &Model{Crystal: c, Beam: beam, Detector: d, Osc: rad(osc)}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	limits := Limits{MaxWork: a.MaxWork, MaxMemory: a.MaxMemoryMB * (1 << 20)}
	if err := m.CheckWork(limits); err != nil {
		return nil, err
	}
	pixelBytes := a.PixelBytes
	if pixelBytes <= 0 {
		pixelBytes = GradientPixelBytes
	}
	if err := m.CheckMemory(limits, pixelBytes); err != nil {
		return nil, err
	}
	if err := a.loadF(c, log, m.hklCellsLeft(limits, pixelBytes)); err != nil {
		return nil, err
	}
	// The reference's rule: interpolate when asked, or by default when the
	// crystal is at most 2 cells wide; never without a table.
	c.Interpolate = c.HKL != nil && (a.Interpolate == 1 || (a.Interpolate < 0 && (c.Na <= 2 || c.Nb <= 2 || c.Nc <= 2)))
	if err := a.readStol(log); err != nil {
		return nil, err
	}
	return m, nil
}

// WriteDump writes the structure-factor cache (-dump, default Fdump.bin)
// of a model built from these arguments, when they read an -hkl file, as
// the reference does so that a later run without -hkl reads it back. Model
// never writes it: a command calls WriteDump once the model is known to be
// valid. A cache that cannot be written, or that would overwrite one of the
// run's input files, is a warning on log, not an error (the run goes on
// without it).
func (a *Args) WriteDump(m *Model, log io.Writer) {
	if a.HKLFile == "" || m == nil || m.Crystal.HKL == nil {
		return
	}
	if log == nil {
		log = io.Discard
	}
	err := a.dumpIsInput()
	if err == nil {
		err = formats.WriteFileAtomic(a.DumpFile, func(w io.Writer) error { return formats.WriteFdump(w, m.Crystal.HKL) })
	}
	if err != nil {
		fmt.Fprintf(log, "WARNING: unable to write dump file %s: %v\n", a.DumpFile, err)
	} else {
		fmt.Fprintf(log, "writing dump file for next time: %s\n", a.DumpFile)
	}
}

// readStol reads an amorphous structure-factor table (-stol, -4stol, -Q)
// as the reference does (ReadColumns: two columns, as lenient as its
// reader) and refuses one without a data line, as it does. The reference
// then never uses it for the image; neither does gobragg.
func (a *Args) readStol(log io.Writer) error {
	if a.StolFile == "" {
		return nil
	}
	fmt.Fprintf(log, "reading %s\n", a.StolFile)
	f, err := formats.OpenInput(a.StolFile, formats.MaxColumnBytes)
	if err != nil {
		return fmt.Errorf("models: %s: %w", a.StolFlag, err)
	}
	defer f.Close()
	if _, err := formats.ReadColumns(f, 2); err != nil {
		return fmt.Errorf("models: %s %s: %w", a.StolFlag, a.StolFile, err)
	}
	return nil
}

// crystalSize applies -xtal_size and its family: the sizes along b and c
// are clipped to the beam (with the reference's warnings) when -beamsize
// is not negative, and each given size sets N = ⌈size/|edge|⌉ (at least 1)
// along its axis, as the reference does once it knows the cell. A size
// within 1e-9 (relative) above a whole number of cells counts as that
// number, so that 0.0008 mm of a 100 Å cell is 80 cells whatever the last
// bit of the edge's length.
func (a *Args) crystalSize(c *Crystal, lambda float64, log io.Writer) {
	size := a.SizeMM
	if size == [3]float64{} {
		return
	}
	for i := 0; i < 3; i++ {
		size[i] /= 1000 // mm → m
	}
	if beam := a.BeamsizeMM / 1000; beam >= 0 {
		if beam < size[1] {
			fmt.Fprintf(log, "WARNING: clipping sample (%s m high) with beam (%s m)\n", formats.G(size[1]), formats.G(beam))
			size[1] = beam
		}
		if beam < size[2] {
			fmt.Fprintf(log, "WARNING: clipping sample (%s m wide) with beam (%s m)\n", formats.G(size[2]), formats.G(beam))
			size[2] = beam
		}
	}
	A := Float{}
	va, vb, vc := RealVectors[float64](A, c, c.Params(), lambda)
	edges := [3]float64{Norm[float64](A, va), Norm[float64](A, vb), Norm[float64](A, vc)}
	n := [3]*float64{&c.Na, &c.Nb, &c.Nc}
	for i := range edges {
		if !(size[i] > 0) || !(edges[i] > 0) || math.IsInf(edges[i], 0) {
			continue
		}
		r := size[i] / edges[i]
		cells := math.Ceil(r)
		if cells-r > 1-1e-9*r {
			cells--
		}
		*n[i] = math.Max(1, cells)
	}
	fmt.Fprintf(log, "crystal is %s x %s x %s microns: %sx%sx%s cells\n", formats.G(edges[0]*c.Na*1e6), formats.G(edges[1]*c.Nb*1e6),
		formats.G(edges[2]*c.Nc*1e6), formats.G(c.Na), formats.G(c.Nb), formats.G(c.Nc))
}

// dumpIsInput refuses to write the structure-factor cache over one of the
// run's input files (-dump P1.hkl would destroy the HKL file).
func (a *Args) dumpIsInput() error {
	st, err := os.Stat(a.DumpFile)
	if err != nil {
		return nil
	}
	for _, in := range a.InputFiles() {
		if ist, err := os.Stat(in.Path); err == nil && os.SameFile(st, ist) {
			return fmt.Errorf("it is also the %s input file", in.Flag)
		}
	}
	return nil
}

// limitFlags checks -max_work and -max_memory.
func (a *Args) limitFlags() error {
	if a.MaxWork < 0 {
		return usagef("-max_work %g: must be positive", a.MaxWork)
	}
	if a.MaxMemoryMB < 0 {
		return usagef("-max_memory %g MB: must be positive", a.MaxMemoryMB)
	}
	return nil
}

// loadF reads -hkl or the structure-factor cache, refusing a grid of more
// than maxCells cells before allocating it.
func (a *Args) loadF(c *Crystal, log io.Writer, maxCells int) error {
	tooLarge := func(flag string, err error) error {
		var big *formats.GridTooLarge
		if errors.As(err, &big) && big.Max < 1<<28 {
			return fmt.Errorf("models: %s: its grid (%s) needs %.3g cells, about %s of memory, more than the rest of the memory budget allows; give -max_memory %.0f (MB) to run it anyway",
				flag, big.Ranges, big.Cells, mb(big.Cells*hklCellBytes), math.Ceil((a.memoryBudget()+(big.Cells-float64(big.Max))*hklCellBytes)/(1<<20)))
		}
		return fmt.Errorf("models: %s: %w", flag, err)
	}
	if g := a.HKLGrid; g != nil {
		if len(g.F) > maxCells {
			return fmt.Errorf("models: the structure-factor grid has %d cells, more than the memory budget allows (%d)", len(g.F), maxCells)
		}
		c.HKL = g
		return checkF(g, "structure factors")
	}
	if a.HKLFile != "" {
		f, err := formats.OpenInput(a.HKLFile, formats.MaxHKLBytes)
		if err != nil {
			return fmt.Errorf("models: -hkl: %w", err)
		}
		defer f.Close()
		if c.HKL, err = formats.ReadHKLMax(f, a.DefaultF, maxCells); err != nil {
			return tooLarge("-hkl "+a.HKLFile, err)
		}
		return checkF(c.HKL, "-hkl "+a.HKLFile)
	}
	f, err := formats.OpenInput(a.DumpFile, 256+8*int64(maxCells))
	if errors.Is(err, formats.ErrTooLarge) {
		return fmt.Errorf("models: %w", err)
	}
	if err != nil {
		if a.DefaultF == 0 {
			return usagef("no structure factors: give -hkl FILE or -default_F F (and no %s to reuse)", a.DumpFile)
		}
		return nil
	}
	defer f.Close()
	fmt.Fprintf(log, "reading Fs from %s\n", a.DumpFile)
	if c.HKL, err = formats.ReadFdumpMax(f, maxCells); err != nil {
		return tooLarge(a.DumpFile, err)
	}
	return checkF(c.HKL, a.DumpFile)
}

// memoryBudget is -max_memory in bytes, or the default.
func (a *Args) memoryBudget() float64 {
	return Limits{MaxMemory: a.MaxMemoryMB * (1 << 20)}.memory()
}

// checkF refuses structure factors that are not finite or are larger than
// MaxF (the image would overflow).
func checkF(g *formats.HKLGrid, what string) error {
	_, kr, lr := g.Ranges()
	for i, f := range g.F {
		if !(math.Abs(f) <= MaxF) {
			l := i % (lr + 1)
			k := i / (lr + 1) % (kr + 1)
			h := i / ((lr + 1) * (kr + 1))
			return fmt.Errorf("models: %s: F(%d,%d,%d) = %g: structure factors must be finite and at most %g in magnitude",
				what, g.HMin+h, g.KMin+k, g.LMin+l, f, MaxF)
		}
	}
	return nil
}

// phiSweep applies the reference's automatic φ rules: the number of
// steps, the step and the oscillation range (degrees) from whichever of
// -phisteps, -phistep and -osc were given (or an -img header's PHI and
// OSC_RANGE, which may be infinite: an error).
func (a *Args) phiSweep() (steps int, step, osc float64, err error) {
	for _, v := range []struct {
		name string
		x    float64
	}{{"-phi", a.PhiDeg}, {"-osc", a.OscDeg}, {"-phistep", a.PhiStepDeg}} {
		if math.IsInf(v.x, 0) || math.Abs(v.x) > MaxAngleDeg {
			return 0, 0, 0, usagef("%s %g deg: must be a finite angle of at most %g degrees", v.name, v.x, float64(MaxAngleDeg))
		}
	}
	steps, step, osc = a.phiRule()
	return steps, step, osc, nil
}

// MaxAngleDeg bounds angles given in degrees (φ, oscillation, rotations):
// far beyond any real use, small enough for sines and cosines to stay
// exact to a few ulps.
const MaxAngleDeg = 1e6

func (a *Args) phiRule() (steps int, step, osc float64) {
	steps, step, osc = a.PhiSteps, a.PhiStepDeg, a.OscDeg
	unset := func(x float64) bool { return math.IsNaN(x) || x <= 0 }
	if steps < 0 {
		switch {
		case math.IsNaN(osc) && unset(step):
			return 1, 0, 0
		case math.IsNaN(osc):
			return 2, step, step
		case unset(step):
			return 2, osc / 2, osc
		default:
			return countOf(math.Ceil(osc / step)), step, osc
		}
	}
	if steps == 0 {
		steps = 1
	}
	switch {
	case math.IsNaN(osc) && unset(step):
		return steps, 1.0 / float64(steps), 1
	case math.IsNaN(osc):
		return 2, step, step
	case math.IsNaN(step) || step < 0:
		return steps, osc / float64(steps), osc
	}
	return steps, step, osc
}

// ingest reads an SMV file's header into the detector defaults, as the
// reference's -img and -mask do (a mask's BEAM_CENTER_Y counts from the
// other edge), and keeps a mask's pixels.
func (a *Args) ingest(flag, path string) error {
	f, err := formats.OpenInput(path, formats.MaxImageBytes)
	if err != nil {
		return fmt.Errorf("models: %s: %w", flag, err)
	}
	defer f.Close()
	im, err := formats.ReadSMV(f)
	if err != nil {
		return fmt.Errorf("models: %s %s: %w", flag, path, err)
	}
	d := &a.Detector
	d.FPixels, d.SPixels = im.Width, im.Height
	// A key given as "nan" is refused (the reference would take the NaN);
	// infinite values reach the checks of the values they set.
	var nan string
	val := func(key string) (float64, bool) {
		v, given := im.Value(key)
		if given && math.IsNaN(v) && nan == "" {
			nan = key
		}
		return v, !math.IsNaN(v)
	}
	if v, ok := val("PIXEL_SIZE"); ok {
		d.PixelMM = v
	}
	d.DetsizeFMM, d.DetsizeSMM = d.PixelMM*float64(im.Width), d.PixelMM*float64(im.Height)
	// Header keys and the defaults they set (BEAM_CENTER_Y separately: a
	// mask counts it from the far edge).
	for _, kv := range []struct {
		key string
		dst *float64
	}{{"DISTANCE", &d.DistanceMM}, {"CLOSE_DISTANCE", &d.CloseDistanceMM}, {"WAVELENGTH", &a.LambdaA},
		{"BEAM_CENTER_X", &d.XbeamMM}, {"ORGX", &d.ORGX}, {"ORGY", &d.ORGY}, {"PHI", &a.PhiDeg},
		{"OSC_RANGE", &a.OscDeg}} {
		if v, ok := val(kv.key); ok {
			*kv.dst = v
		}
	}
	if v, ok := val("BEAM_CENTER_Y"); ok {
		d.YbeamMM = v
		if flag == "-mask" {
			d.YbeamMM = d.DetsizeSMM - v
		}
	}
	if nan != "" {
		return fmt.Errorf("models: %s %s: header %s is not a number", flag, path, nan)
	}
	// The reference reads TWOTHETA into a variable it never uses; so does
	// gobragg (the detector's two-theta comes only from -twotheta).
	if flag == "-mask" {
		a.Mask = make([]float64, len(im.Data))
		for i, v := range im.Data {
			a.Mask[i] = float64(v)
		}
	}
	return nil
}
