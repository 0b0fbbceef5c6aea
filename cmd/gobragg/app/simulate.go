package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gobragg/gobragg/cmd/gobragg/progress"
	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
	"github.com/gobragg/gobragg/physics"
)

// DemoArgs is the embedded default: a triclinic lysozyme-sized cell with a
// misset, 5×5×5 unit cells, 1 Å, 256² pixels of 0.1 mm at 100 mm.
var DemoArgs = []string{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30",
	"-default_F", "100", "-N", "5", "-lambda", "1", "-distance", "100", "-pixel", "0.1",
	"-detpixels", "256", "-floatfile", "gobragg_demo.bin"}

// demoPNG is where the demo's preview goes.
const demoPNG = "gobragg_demo.png"

// Result is a finished simulation: the model, its image (photons per
// pixel, slow-major, float32 as written) and the reference's statistics.
type Result struct {
	Model *models.Model
	Image []float32
	Stats Stats
	// Seconds are the wall times of building the model (reading its
	// files), compiling (or finding) the program, and rendering.
	Seconds struct{ Model, Compile, Render float64 }
	// tracer and printPixel serve -printout (nil without it).
	tracer     *physics.Tracer
	printPixel [2]int
	cfg        physics.Config  // of the program that rendered it
	in         *physics.Inputs // what the kernel read (FloatInputs)
	lateRows   int             // rows of the statistics summed after the render, not as it finished them
}

// Stats are the numbers the reference prints after rendering.
type Stats struct {
	SolidAngle      float64 // sr
	MaxI            float64
	MaxX, MaxY      float64 // m, fast/slow position of the max pixel's last sub-pixel
	MaxF, MaxS      int     // the max pixel (fast, slow)
	Mean, RMS, RMSD float64
	IntScale        float64
}

// Render parses a nanoBragg argv and renders the image (no files written
// except the Fdump cache the reference also writes).
func Render(argv []string, log io.Writer) (*Result, *models.Args, error) {
	args, err := models.ParseArgs(argv)
	if err != nil {
		return nil, nil, err
	}
	r, err := render(args, log)
	return r, args, err
}

// render renders parsed arguments.
func render(args *models.Args, log io.Writer) (*Result, error) {
	return renderProgress(args, log, nil)
}

// renderProgress is render reporting the rows rendered to progress (nil:
// none).
func renderProgress(args *models.Args, log io.Writer, progress func(rows, total int)) (*Result, error) {
	t0 := time.Now()
	args.PixelBytes = models.SimulatePixelBytes
	m, err := args.Model(log)
	if err != nil {
		return nil, err
	}
	// The reference's structure-factor cache, once the model is valid.
	args.WriteDump(m, log)
	r, err := renderModel(m, args.IntScale, log, progress, t0)
	if err != nil {
		return nil, err
	}
	if args.Printout {
		r.tracer, r.printPixel = physics.NewTracer(&r.cfg, r.in), args.PrintoutPixel
	}
	return r, nil
}

// renderModel renders a validated model; intScale is -scale (≤ 0:
// automatic), progress (nil: none) receives the rows rendered, t0 is when
// the model was begun (for the timings).
func renderModel(m *models.Model, intScale float64, log io.Writer, progress func(rows, total int), t0 time.Time) (*Result, error) {
	t1 := time.Now()
	// The float image is written in float32, as the reference stores it:
	// render straight into float32.
	sim, err := graph.New(m, graph.Float32Image())
	if err != nil {
		return nil, err
	}
	sim.Progress = progress
	cfg := sim.Program().Key().Pixels
	in := graph.FloatInputs(m)
	// The statistics' sums of each row as the render finishes it.
	rs := newRowStats(&cfg, m, in)
	sim.RowDone = rs.row
	t2 := time.Now()
	img, err := sim.Image32()
	if err != nil {
		return nil, err
	}
	t3 := time.Now()
	r := &Result{Model: m, Image: img}
	r.Seconds.Model, r.Seconds.Compile, r.Seconds.Render = t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), t3.Sub(t2).Seconds()
	if r.Stats, err = rs.stats(img, intScale); err != nil {
		return nil, err
	}
	r.lateRows = rs.late
	if p, hkl := sim.InterpolationCutoff(); p >= 0 {
		fmt.Fprintf(log, "WARNING: out of range for three point interpolation at pixel %d %d (h,k,l = %s,%s,%s): nearest structure factors from there on\n",
			p%cfg.FPixels, p/cfg.FPixels, formats.G(hkl[0]), formats.G(hkl[1]), formats.G(hkl[2]))
	}
	r.Stats.SolidAngle = sim.SolidAngle()
	r.cfg, r.in = cfg, in
	return r, nil
}

// stats reproduces the reference's summary: max, mean and rms over the
// rendered pixels (inside the ROI and unmasked) of the float32 image,
// rms = sqrt(Σ I²/(n−1)), rmsd about that mean over every ROI pixel (masked
// ones included, as the reference's second loop does), and the position of
// the first maximum in scan order. It sums every row of img (rowStats);
// simulate has the render sum each row as it finishes it instead.
//
// The sums are physics.ImageSums': per row, in partial sums (column j
// from the ROI's first in sum j mod 4, mod 8 in the Go 1.27 vector build), on vector lanes in the vector
// build (rows with a mask in scalar code), the rows then added in order.
// The reference's one running sum is a chain of dependent additions, one
// pixel per addition's latency, which made its two passes 17 % of a whole
// 4096² run (perf, vector build); in partial sums they took 21 ms instead
// of 54 there (in-process, BenchmarkStats4096), and summed row by row as
// the render finishes each, while it is in cache, the whole 4096² process
// is ~10 % faster again (the image's two more passes through memory
// gone). The deviations for rmsd are each row's about its own mean,
// moved to the image's mean (physics.ImageSums.AddDev: exact in exact
// arithmetic, its rounding error bounded as a direct sum's). The sums differ from the reference's in
// their last bits (their rounding errors are, if anything, smaller), far
// below the 6 digits it prints, and are the same on every machine, lane
// kernel and number of threads.
//
// It also refuses an image with a pixel that is not a finite
// non-negative number: intensities cannot be negative, and an overflow
// (inputs each in range whose product is not) must not pass for a result.
// It names the first such pixel in scan order, and looks at the rendered
// pixels only; the others are 0 (the renderer writes only rendered pixels
// of a zeroed image). The check rides on the sums (a row's smallest
// value and whether its sum is finite); only a row that fails it is
// looked at again, as is the first row holding the maximum (for its
// position).
func stats(cfg *physics.Config, m *models.Model, img []float32, in *physics.Inputs, scale float64) (Stats, error) {
	rs := newRowStats(cfg, m, in)
	return rs.stats(img, scale)
}

// rowStats are the per-row sums of stats: rows are summed by row (from
// the rendering goroutines, each row its own) and stats adds them.
type rowStats struct {
	cfg            *physics.Config
	d              *models.Detector
	in             *physics.Inputs
	f0, f1, s0, s1 int // the ROI within the detector (s1 < s0: no rows)
	sums           []physics.RowSums
	done           []bool // rows summed
	late           int    // rows stats summed itself (not handed to row)
}

func newRowStats(cfg *physics.Config, m *models.Model, in *physics.Inputs) *rowStats {
	d := m.Detector
	rs := &rowStats{cfg: cfg, d: d, in: in,
		f0: max(cfg.ROIFMin, 0), f1: min(cfg.ROIFMax, d.FPixels-1),
		s0: max(cfg.ROISMin, 0), s1: min(cfg.ROISMax, d.SPixels-1)}
	if rs.f0 > rs.f1 {
		rs.s1 = rs.s0 - 1
	}
	if n := rs.s1 - rs.s0 + 1; n > 0 {
		rs.sums, rs.done = make([]physics.RowSums, n), make([]bool, n)
	}
	return rs
}

// row sums row s of the image (FPixels values; called again for a row
// rendered again, whose later values replace the earlier). Safe for
// concurrent use on different rows.
func (rs *rowStats) row(s int, row []float32) {
	if s < rs.s0 || s > rs.s1 {
		return
	}
	rs.sums[s-rs.s0].Set(row[rs.f0:rs.f1+1], rs.mask(s))
	rs.done[s-rs.s0] = true
}

// mask returns row s's part of the mask within the ROI (nil: none).
func (rs *rowStats) mask(s int) []float64 {
	if !rs.cfg.HasMask {
		return nil
	}
	return rs.in.Mask[s*rs.d.FPixels:][rs.f0 : rs.f1+1]
}

// stats sums the rows of img not summed yet and returns the statistics.
func (rs *rowStats) stats(img []float32, scale float64) (Stats, error) {
	var st Stats
	d := rs.d
	for s := rs.s0; s <= rs.s1; s++ {
		if !rs.done[s-rs.s0] {
			rs.row(s, img[s*d.FPixels:][:d.FPixels])
			rs.late++
		}
	}
	var sums physics.ImageSums
	n, maxS := 0, -1
	all := len(rs.sums) * (rs.f1 - rs.f0 + 1) // every ROI pixel (rmsd's)
	for s := rs.s0; s <= rs.s1; s++ {
		r := &rs.sums[s-rs.s0]
		sums.Add(r)
		n += r.N
		if r.Lo < 0 || !r.Finite {
			// An impossible pixel (negative, NaN or +Inf: a NaN is in
			// neither Lo nor Hi, but makes the row's sum not finite):
			// the first in this row, rows in order, is the first.
			mask := rs.mask(s)
			for j, v := range img[s*d.FPixels:][rs.f0 : rs.f1+1] {
				if x := float64(v); (mask == nil || mask[j] != 0) && !(x >= 0 && x <= math.MaxFloat32) {
					return st, fmt.Errorf("the image has an impossible pixel (%d %d = %g): the inputs together overflow or cancel what the physics can represent (look at -fluence, -default_F or the structure factors, -N)",
						rs.f0+j, s, x)
				}
			}
		}
		if r.Hi > st.MaxI {
			st.MaxI, maxS = r.Hi, s
		}
	}
	if maxS >= 0 {
		// The first maximum in scan order: in the first row that has it.
		mask := rs.mask(maxS)
		for j, v := range img[maxS*d.FPixels:][rs.f0 : rs.f1+1] {
			if float64(v) == st.MaxI && (mask == nil || mask[j] != 0) {
				f := rs.f0 + j
				st.MaxF, st.MaxS = f, maxS
				sub := d.Pixel / float64(d.Oversample)
				st.MaxX = sub*float64(f*d.Oversample+d.Oversample-1) + sub/2
				st.MaxY = sub*float64(maxS*d.Oversample+d.Oversample-1) + sub/2
				break
			}
		}
	}
	sum, sumsq := sums.Sum(), sums.SumSq()
	st.Mean = sum / float64(max(n, 1))
	st.RMS = math.Sqrt(sumsq / float64(max(n, 2)-1))
	for s := rs.s0; s <= rs.s1; s++ {
		sums.AddDev(&rs.sums[s-rs.s0], st.Mean)
	}
	st.RMSD = math.Sqrt(sums.Dev() / float64(max(all, 2)-1))
	st.IntScale = scale
	if st.IntScale <= 0 {
		st.IntScale = 1
		if st.MaxI > 0 {
			st.IntScale = 55000 / st.MaxI
		}
	}
	return st, nil
}

// Simulate runs `gobragg simulate ARGS`: render, write the requested
// files, print the reference's statistics lines to out (an output named
// "-" goes to out as well).
func Simulate(argv []string, out io.Writer) error {
	return SimulateStreams(argv, out, out)
}

// SimulateStreams is Simulate with the process's two streams: the
// statistics and warnings go to stdout, unless an output file is "-" or
// /dev/stdout, in which case stdout carries only that file and the lines
// go to stderr.
func SimulateStreams(argv []string, stdout, stderr io.Writer) error {
	return simulate(argv, false, stdout, stderr)
}

// simulate is SimulateStreams; with asJSON (--json, or -json among the
// flags) stdout carries only the JSON statistics (SimulateJSON) and every
// other line goes to stderr.
func simulate(argv []string, asJSON bool, stdout, stderr io.Writer) error {
	start := time.Now()
	demo := len(argv) == 0
	if demo {
		argv = DemoArgs
	}
	args, err := models.ParseArgs(argv)
	if err != nil {
		return err
	}
	asJSON = asJSON || args.JSON
	outputs := outputFiles(args, demo)
	out := stdout
	if asJSON {
		out = stderr
	}
	for _, o := range outputs {
		if formats.IsStdout(o.path) {
			if asJSON {
				return usagef("%s %s: --json prints on stdout; give the file a name", o.flag, o.path)
			}
			out = stderr
		}
	}
	if demo {
		fmt.Fprintln(out, "no arguments: rendering the embedded demo crystal")
	}
	// Check every destination before the (possibly long) rendering.
	if err := checkOutputs(args, outputs); err != nil {
		return err
	}
	bar := progress.Start(stderr, "rendering rows", int64(args.Detector.SPixels), progress.ModeOf(args.Progress))
	r, err := renderProgress(args, bar.Writer(out), func(rows, total int) {
		bar.SetTotal(int64(total))
		bar.Set(int64(rows))
	})
	if err != nil {
		bar.Abort()
		return err
	}
	bar.Finish()
	written := time.Now()
	st := r.Stats
	m := r.Model
	writePrintout(out, r, m.Beam.Lambda)
	fmt.Fprintf(out, "%s convention, %dx%d pixels, %d-fold oversampling\n", m.Detector.Convention,
		m.Detector.FPixels, m.Detector.SPixels, m.Detector.Oversample)
	fmt.Fprintf(out, "solid angle subtended by detector = %s steradian ( %s%% sphere)\n",
		formats.G(st.SolidAngle), formats.G(100*st.SolidAngle/4/math.Pi))
	fmt.Fprintf(out, "max_I = %s  at %s %s\n", formats.G(st.MaxI), formats.G(st.MaxX), formats.G(st.MaxY))
	fmt.Fprintf(out, "mean= %s rms= %s rmsd= %s\n", formats.G(st.Mean), formats.G(st.RMS), formats.G(st.RMSD))
	fmt.Fprintf(out, "intfile_scale = %s\n", formats.G(st.IntScale))

	// Every file's content is written before any replaces an earlier one
	// (writeAll); the lines saying so wait for the last.
	var lines bytes.Buffer
	floatFile := outputs[0].path
	files := []outFile{{"-floatfile", floatFile, func(w io.Writer) error {
		fmt.Fprintf(&lines, "writing %s as %d 4-byte floats\n", floatFile, len(r.Image))
		return formats.WriteFloatImage(w, r.Image)
	}}}
	if args.IntFile != "" {
		files = append(files, outFile{"-intfile", args.IntFile, func(w io.Writer) error {
			fmt.Fprintf(&lines, "writing %s as %s\n", args.IntFile, countsFormat(args.IntFile, kindOf(args.CBF)))
			data := intCounts(r.Image, m, st.IntScale, args.ADC)
			return countsWriter(args.IntFile, m, data, kindOf(args.CBF))(w)
		}})
	}
	js := SimulateJSON{Convention: m.Detector.Convention.String(), FPixels: m.Detector.FPixels, SPixels: m.Detector.SPixels,
		Oversample: m.Detector.Oversample, SolidAngleSr: st.SolidAngle, SpherePercent: 100 * st.SolidAngle / 4 / math.Pi,
		MaxI: st.MaxI, MaxIFastM: st.MaxX, MaxISlowM: st.MaxY, MaxIPixel: [2]int{st.MaxF, st.MaxS},
		Mean: st.Mean, RMS: st.RMS, RMSD: st.RMSD, IntfileScale: st.IntScale, Files: map[string]string{},
		Lanes: physics.VectorLanes()}
	for _, o := range outputs {
		js.Files[strings.TrimPrefix(o.flag, "-")] = o.path
	}
	if args.NoiseFile != "" {
		seed := args.Seed
		if !args.HasSeed {
			seed = time.Now().Unix() // the reference's default seed
		}
		files = append(files, outFile{"-noisefile", args.NoiseFile, func(w io.Writer) error {
			data, photons, overloads := physics.NoiseImage(r.Image, m.Detector.FPixels, m.Detector.ROI, args.ADC, seed)
			js.Photons, js.Overloads = &photons, &overloads
			fmt.Fprintf(&lines, "%.0f photons on noise image (%d overloads)\n", photons, overloads)
			fmt.Fprintf(&lines, "writing %s as %s\n", args.NoiseFile, countsFormat(args.NoiseFile, kindOf(args.CBF)))
			return countsWriter(args.NoiseFile, m, data, kindOf(args.CBF))(w)
		}})
	}
	if args.PGMFile != "" && !args.NoPGM {
		scale := pgmScale(args, st)
		js.PGMScale = &scale
		files = append(files, outFile{"-pgmfile", args.PGMFile, func(w io.Writer) error {
			fmt.Fprintf(&lines, "pgm_scale = %s\n", formats.G(scale))
			fmt.Fprintf(&lines, "writing %s as 1-byte integers\n", args.PGMFile)
			return formats.WritePGM(w, m.Detector.FPixels, m.Detector.SPixels, r.Image, scale)
		}})
	}
	if args.ExptFile != "" {
		f, err := simulateExpt(args, m, &lines)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	if demo {
		files = append(files, outFile{"demo preview", demoPNG, func(w io.Writer) error {
			fmt.Fprintf(&lines, "demo image written to %s (float32) and %s (preview)\n", floatFile, demoPNG)
			return formats.WritePNGPreview(w, m.Detector.FPixels, m.Detector.SPixels, r.Image)
		}})
	}
	if err := writeAll(formats.Output{Stdout: stdout, Log: out}, files); err != nil {
		return err
	}
	if _, err := lines.WriteTo(out); err != nil {
		return err
	}
	if asJSON {
		end := time.Now()
		js.Seconds = SimulateSeconds{Model: r.Seconds.Model, Compile: r.Seconds.Compile, Render: r.Seconds.Render,
			Write: end.Sub(written).Seconds(), Total: end.Sub(start).Seconds()}
		b, err := json.Marshal(js)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			return err
		}
	}
	return nil
}

// SimulateJSON is what `gobragg simulate --json` prints: the reference's
// statistics (solid angle, the maximum and where, mean, rms, rmsd, the
// intfile scale, the noise image's photons and overloads), the image's
// shape, the files written and the times taken.
type SimulateJSON struct {
	Convention    string  `json:"convention"`
	FPixels       int     `json:"fpixels"`
	SPixels       int     `json:"spixels"`
	Oversample    int     `json:"oversample"`
	SolidAngleSr  float64 `json:"solid_angle_sr"`
	SpherePercent float64 `json:"solid_angle_sphere_percent"`
	MaxI          float64 `json:"max_I"`
	// MaxIFastM and MaxISlowM are the reference's position of the
	// maximum (m: the centre of its last sub-pixel); MaxIPixel is the
	// pixel (fast, slow).
	MaxIFastM    float64 `json:"max_I_fast_m"`
	MaxISlowM    float64 `json:"max_I_slow_m"`
	MaxIPixel    [2]int  `json:"max_I_pixel"`
	Mean         float64 `json:"mean"`
	RMS          float64 `json:"rms"`
	RMSD         float64 `json:"rmsd"`
	IntfileScale float64 `json:"intfile_scale"`
	// PGMScale is set with -pgmfile; Photons and Overloads with
	// -noisefile (null otherwise).
	PGMScale  *float64          `json:"pgm_scale"`
	Photons   *float64          `json:"photons"`
	Overloads *int              `json:"overloads"`
	Files     map[string]string `json:"files"` // output flag (floatfile, intfile, …) → path
	Seconds   SimulateSeconds   `json:"seconds"`
	// Lanes names the lane kernels that ran (physics.VectorLanes:
	// "avx512", "avx2" or "scalar"; GOBRAGG_LANES picks one).
	Lanes string `json:"lanes"`
}

// SimulateSeconds are the wall times of a simulate run's parts.
type SimulateSeconds struct {
	Model   float64 `json:"model"`   // parsing done, building the model and reading its files
	Compile float64 `json:"compile"` // building and compiling the program (or finding it cached)
	Render  float64 `json:"render"`  // the image
	Write   float64 `json:"write"`   // statistics, noise and output files
	Total   float64 `json:"total"`   // the whole command
}

// output is one file simulate will write: its flag and path.
type output struct{ flag, path string }

// outputFiles lists the files a run writes, the float image first.
func outputFiles(args *models.Args, demo bool) []output {
	floatFile := args.FloatFile
	if floatFile == "" {
		floatFile = "floatimage.bin" // the reference always writes it, by default under this name
	}
	outs := []output{{"-floatfile", floatFile}}
	if args.IntFile != "" {
		outs = append(outs, output{"-intfile", args.IntFile})
	}
	if args.NoiseFile != "" {
		outs = append(outs, output{"-noisefile", args.NoiseFile})
	}
	if args.PGMFile != "" && !args.NoPGM {
		outs = append(outs, output{"-pgmfile", args.PGMFile})
	}
	if args.ExptFile != "" {
		outs = append(outs, output{"-expt", args.ExptFile})
	}
	if demo {
		outs = append(outs, output{"demo preview", demoPNG})
	}
	return outs
}

// checkOutputs refuses, before any work, outputs that cannot be written,
// outputs that are one of the run's input files (writing the image over
// -hkl or -mat would destroy it) and two outputs that are one file (the
// later would replace the earlier; on standard output they would run
// together). After reading -hkl a run also writes the structure-factor
// cache (-dump, default Fdump.bin), which counts as an output here: an
// image over it would make the next run without -hkl fail.
func checkOutputs(args *models.Args, outs []output) error {
	inputs := statInputs(args.InputFiles())
	seen := newOutputSet()
	if args.HKLFile != "" {
		// Not checked for writing: a cache that cannot be written is a
		// warning (Args.WriteDump).
		seen.add(output{"-dump", args.DumpFile})
	}
	for _, o := range outs {
		if err := formats.CheckWritable(o.path); err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
		st, err := seen.add(o)
		if err != nil {
			return err
		}
		if st == nil {
			continue
		}
		if err := overwritesInput(o, st, inputs); err != nil {
			return err
		}
	}
	return nil
}

// statedInput is an existing input file with its file information.
type statedInput struct {
	flag string
	st   os.FileInfo
}

// statInputs returns those of ins that exist, each stated once however
// many outputs are compared with it.
func statInputs(ins []models.InputFile) []statedInput {
	var out []statedInput
	for _, in := range ins {
		if st, err := os.Stat(in.Path); err == nil {
			out = append(out, statedInput{in.Flag, st})
		}
	}
	return out
}

// overwritesInput refuses output o, an existing regular file st, when it
// is one of the inputs (through any name: os.SameFile).
func overwritesInput(o output, st os.FileInfo, inputs []statedInput) error {
	for _, in := range inputs {
		if os.SameFile(st, in.st) {
			return usagef("%s %s: is also the %s input file; refusing to overwrite it", o.flag, o.path, in.flag)
		}
	}
	return nil
}

// outputSet holds a run's outputs to find two that are one file: two
// names of standard output, two existing files that os.SameFile finds the
// same (through hard or symbolic links, as checkOutputs compares outputs
// with inputs), or two new files with the same name in the same directory
// (its path cleaned and its links resolved: o.img and ./o.img). Devices,
// FIFOs and sockets are written in place and left out: two outputs to
// /dev/null are fine.
type outputSet struct {
	stdout *output
	// Existing regular files by size and modification time (a file's
	// links share both), compared by os.SameFile within one.
	existing map[[2]int64][]existingOutput
	created  map[string]output // new files by their resolved path
	dirs     map[string]string // a directory as given → resolved
}

type existingOutput struct {
	output
	st os.FileInfo
}

func newOutputSet() *outputSet {
	return &outputSet{existing: map[[2]int64][]existingOutput{}, created: map[string]output{}, dirs: map[string]string{}}
}

// add records o, or returns a usage error naming o and the output it
// shares a file with. It returns o's file information when o is an
// existing regular file.
func (s *outputSet) add(o output) (os.FileInfo, error) {
	clash := func(p output) error {
		if formats.IsStdout(o.path) {
			return usagef("%s %s and %s %s both write to standard output; give one a file name", p.flag, p.path, o.flag, o.path)
		}
		return usagef("%s %s and %s %s are the same file; give each its own name", p.flag, p.path, o.flag, o.path)
	}
	if formats.IsStdout(o.path) {
		if s.stdout != nil {
			return nil, clash(*s.stdout)
		}
		s.stdout = &o
		return nil, nil
	}
	st, err := os.Stat(o.path)
	if err == nil && !st.Mode().IsRegular() {
		return nil, nil
	}
	if err == nil {
		k := [2]int64{st.Size(), st.ModTime().UnixNano()}
		for _, e := range s.existing[k] {
			if os.SameFile(st, e.st) {
				return nil, clash(e.output)
			}
		}
		s.existing[k] = append(s.existing[k], existingOutput{o, st})
		return st, nil
	}
	dir, base := filepath.Split(o.path)
	resolved, ok := s.dirs[dir]
	if !ok {
		resolved = dir
		if abs, err := filepath.Abs(dir); err == nil {
			resolved = abs
		}
		if r, err := filepath.EvalSymlinks(resolved); err == nil {
			resolved = r
		}
		s.dirs[dir] = resolved
	}
	key := filepath.Join(resolved, base)
	if p, ok := s.created[key]; ok {
		return nil, clash(p)
	}
	s.created[key] = o
	return nil, nil
}

// outFile is one file of a run: its flag, path and content.
type outFile struct {
	flag, path string
	write      func(io.Writer) error
}

// writeAll writes files all or none: every file's content goes to its
// temporary file before any is renamed over the file it replaces, so that
// a failure (a full disk) leaves the earlier files as they were. Each file
// is written (formats.Output.WriteFile) from inside the write of the one
// before it, whose rename waits for that write to return; an error
// unwinds the chain, each WriteFile removing its temporary file. Only a
// rename failing after a later file's rename succeeded (rare: renaming
// within a directory) still leaves some files replaced; standard output
// and devices are written in place as they come. The error names the
// file that failed by its flag.
func writeAll(o formats.Output, files []outFile) error {
	var failed error
	var chain func(i int) error
	chain = func(i int) error {
		if i == len(files) {
			return nil
		}
		f := files[i]
		err := o.WriteFile(f.path, func(w io.Writer) error {
			if err := f.write(w); err != nil {
				return err
			}
			// This file's own write errors (a full disk) come out here,
			// before the next file is begun.
			if b, ok := w.(interface{ Flush() error }); ok {
				if err := b.Flush(); err != nil {
					return err
				}
			}
			return chain(i + 1)
		})
		if err != nil && failed == nil {
			failed = fmt.Errorf("%s %s: %w", f.flag, f.path, err)
		}
		return err
	}
	chain(0)
	return failed
}
