package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gobragg/gobragg/cmd/gobragg/progress"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
	"github.com/gobragg/gobragg/physics"
	"github.com/urfave/cli/v2"
)

// SeriesUsage describes the series command line.
const SeriesUsage = `--frames N [--first N] [--expt FILE|auto|none] [--format smv|cbf] [--jobs N]
   nanoBragg flags: -phi (first image's start), -osc (rotation per image), -phisteps (steps per image),
   -seed (noise seed of the first image; image k gets seed+k), and output names with # for the image
   number (-noisefile image_###.cbf -intfile int_###.img -floatfile float_###.bin -pgmfile …)`

// SeriesFlags are the series command's own options (double-dash; the
// rest of its command line is nanoBragg's).
func SeriesFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "frames", Usage: "number of images in the series (required)"},
		&cli.IntFlag{Name: "first", Value: 1, Usage: "number of the first image, in file names and the DIALS scan"},
		&cli.StringFlag{Name: "expt", Value: "auto", Usage: "DIALS experiment list to write: a file name, auto (beside the images, named after them) or none"},
		&cli.StringFlag{Name: "format", Usage: "integer image format, smv or cbf (default: cbf for .cbf names, else smv)"},
		&cli.IntFlag{Name: "jobs", Value: 2, EnvVars: []string{"GOBRAGG_SERIES_JOBS"},
			Usage: "images in flight at once: one renders while the others draw noise and write files"},
	}
}

// SeriesCommand is `gobragg series`.
func SeriesCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:         "series",
		Usage:        "render a rotation series (numbered SMV or miniCBF images and a DIALS experiment list) in one process",
		ArgsUsage:    "nanoBragg flags...",
		Description:  "gobragg series " + SeriesUsage,
		Flags:        SeriesFlags(),
		OnUsageError: usageError,
		BashComplete: completeFlags,
		Action: func(c *cli.Context) error {
			return runSeries(c, c.Args().Slice(), stdout, stderr)
		},
	}
}

// template is an output name with one run of '#' for the image number.
type template struct {
	flag, name     string
	prefix, suffix string
	width          int
}

func parseTemplate(flag, name string, frames int) (template, error) {
	t := template{flag: flag, name: name}
	i := strings.IndexByte(name, '#')
	if i < 0 {
		if frames > 1 {
			return t, usagef("%s %s: a series needs # in the name for the image number (e.g. image_###.cbf)", flag, name)
		}
		t.prefix = name
		return t, nil
	}
	j := i
	for j < len(name) && name[j] == '#' {
		j++
	}
	if strings.IndexByte(name[j:], '#') >= 0 {
		return t, usagef("%s %s: one run of # only", flag, name)
	}
	t.prefix, t.suffix, t.width = name[:i], name[j:], j-i
	return t, nil
}

// path is the name of image number n.
func (t template) path(n int) string {
	if t.width == 0 {
		return t.prefix
	}
	return fmt.Sprintf("%s%0*d%s", t.prefix, t.width, n, t.suffix)
}

// fits reports whether numbers up to last fit the template's width.
func (t template) fits(last int) bool {
	return t.width == 0 || len(strconv.Itoa(last)) <= t.width
}

// seriesOutputs are a series' templates.
type seriesOutputs struct {
	float, intf, noise, pgm *template
}

func (o *seriesOutputs) all() []*template {
	var out []*template
	for _, t := range []*template{o.float, o.intf, o.noise, o.pgm} {
		if t != nil {
			out = append(out, t)
		}
	}
	return out
}

// Series runs `gobragg series`: a rotation series from one nanoBragg
// command line, compiled once, rendered in one process. Image k (k = 0,
// 1, …; numbered first+k) is exactly what `gobragg simulate` writes for
// the same command line with -phi φ0+k·osc and -seed seed+k.
func Series(argv []string, stdout, stderr io.Writer) error {
	return runCommand(context.Background(), SeriesCommand(stdout, stderr), argv, stdout, stderr)
}

func runSeries(c *cli.Context, rest []string, stdout, stderr io.Writer) error {
	frames, first, jobs := c.Int("frames"), c.Int("first"), c.Int("jobs")
	if frames < 1 {
		return usagef("--frames %d: give the number of images (≥ 1)", frames)
	}
	if frames > maxFrames {
		return usagef("--frames %d: at most %d images in one series", frames, maxFrames)
	}
	if first < 0 {
		return usagef("--first %d: image numbers start at 0 or more", first)
	}
	if first > math.MaxInt-(frames-1) {
		return usagef("--first %d --frames %d: the last image's number is beyond %d", first, frames, math.MaxInt)
	}
	if jobs < 1 {
		return usagef("--jobs %d (or GOBRAGG_SERIES_JOBS): want 1 or more images in flight", jobs)
	}
	args, err := models.ParseArgs(rest)
	if err != nil {
		return err
	}
	kind := kindOf(args.CBF)
	switch f := c.String("format"); f {
	case "":
	case "cbf":
		kind = asCBF
	case "smv":
		if args.CBF {
			return usagef("--format smv: -cbf asks for miniCBF")
		}
		kind = asSMV
	default:
		return usagef("--format %q: smv or cbf", f)
	}
	if args.ExptFile != "" {
		return usagef("-expt is simulate's; a series takes --expt")
	}
	// simulate's printed forms of one image: a series prints a line per
	// image and writes files (they were accepted and ignored).
	if args.JSON || args.Printout {
		return usagef("-json, -printout and -printout_pixel are simulate's: a series writes its images as files")
	}
	if math.IsNaN(args.OscDeg) || !(args.OscDeg > 0) {
		return usagef("a series needs -osc: the rotation per image (degrees, > 0)")
	}
	phi0 := args.PhiDeg
	if math.IsNaN(phi0) {
		phi0 = 0
	}
	// Every image is what simulate renders with its -phi: the first and
	// the last (φ grows with k) within simulate's limit.
	for _, k := range []int{0, frames - 1} {
		if phi := phi0 + float64(k)*args.OscDeg; !(math.Abs(phi) <= models.MaxAngleDeg) {
			return usagef("-phi %s -osc %s --frames %d: image %d's φ %s deg is beyond simulate's limit of %g degrees",
				strconv.FormatFloat(phi0, 'g', -1, 64), strconv.FormatFloat(args.OscDeg, 'g', -1, 64), frames,
				first+k, strconv.FormatFloat(phi, 'g', -1, 64), float64(models.MaxAngleDeg))
		}
	}
	var outs seriesOutputs
	last := first + frames - 1
	for _, o := range []struct {
		flag, name string
		dst        **template
	}{{"-floatfile", args.FloatFile, &outs.float}, {"-intfile", args.IntFile, &outs.intf},
		{"-noisefile", args.NoiseFile, &outs.noise}, {"-pgmfile", args.PGMFile, &outs.pgm}} {
		if o.name == "" || (o.flag == "-pgmfile" && args.NoPGM) {
			continue
		}
		if formats.IsStdout(o.name) {
			return usagef("%s %s: a series writes files, not standard output", o.flag, o.name)
		}
		t, err := parseTemplate(o.flag, o.name, frames)
		if err != nil {
			return err
		}
		if !t.fits(last) {
			return usagef("%s %s: image %d needs more digits than the %d #", o.flag, o.name, last, t.width)
		}
		*o.dst = &t
	}
	if len(outs.all()) == 0 {
		return usagef("no output: give -noisefile, -intfile, -floatfile or -pgmfile with # for the image number")
	}
	images := outs.noise
	if images == nil {
		images = outs.intf
	}
	expt := c.String("expt")
	switch expt {
	case "":
		return usagef("--expt \"\": give a file name, auto or none")
	case "none":
		expt = ""
	case "auto":
		expt = autoExpt(images)
	}
	// Check every image's destinations, and that no two are one file,
	// before rendering.
	var all []output
	for n := first; n <= last; n++ {
		for _, t := range outs.all() {
			all = append(all, output{t.flag, t.path(n)})
		}
	}
	if expt != "" {
		all = append(all, output{"--expt", expt})
	}
	if err := checkOutputs(args, all); err != nil {
		return err
	}

	seed := args.Seed
	if !args.HasSeed {
		seed = time.Now().Unix() // the reference's default
	}
	// Every image in flight holds its float image and integer images.
	args.PixelBytes = models.SimulatePixelBytes * float64(jobs)
	start := time.Now()
	m, err := args.Model(stdout)
	if err != nil {
		return err
	}
	// The reference's structure-factor cache, as simulate writes it.
	args.WriteDump(m, stdout)
	d := m.Detector
	fmt.Fprintf(stdout, "series of %d images %d…%d: %s convention, %dx%d pixels, %d-fold oversampling, %d φ steps per image\n",
		frames, first, last, d.Convention, d.FPixels, d.SPixels, d.Oversample, m.Crystal.PhiSteps)
	fmt.Fprintf(stdout, "image k starts at φ = %s + k·%s deg; noise seed %d + k\n", strconv.FormatFloat(phi0, 'g', -1, 64),
		strconv.FormatFloat(args.OscDeg, 'g', -1, 64), seed)

	s := &seriesRun{args: args, model: m, outs: outs, kind: kind, w: formats.Output{Stdout: stdout, Log: stdout}}
	results := make([]chan frameResult, frames)
	for k := range results {
		results[k] = make(chan frameResult, 1)
	}
	work := make(chan int, frames)
	for k := 0; k < frames; k++ {
		work <- k
	}
	close(work)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var once sync.Once
	for j := 0; j < min(jobs, frames); j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				select {
				case <-stop:
					results[k] <- frameResult{err: errStopped}
					continue
				default:
				}
				r := s.frame(k, first+k, phi0+float64(k)*args.OscDeg, seed+int64(k))
				if r.err != nil {
					once.Do(func() { close(stop) })
				}
				results[k] <- r
			}
		}()
	}
	// A bar on stderr (a terminal) for long series, the images' lines
	// printing above it.
	bar := progress.Start(stderr, "series", int64(frames), progress.ModeOf(args.Progress))
	lines := bar.Writer(stdout)
	var firstErr error
	for k := range results {
		r := <-results[k]
		if r.err != nil {
			if firstErr == nil && r.err != errStopped {
				firstErr = r.err
			}
			continue
		}
		lines.Write(r.log)
		bar.Add(1)
	}
	wg.Wait()
	bar.Finish()
	if firstErr != nil {
		return firstErr
	}
	if expt != "" {
		tmpl := ""
		if images != nil {
			tmpl = images.name
		}
		m0, err := m.With("phi", phi0)
		if err != nil {
			return err
		}
		if err := writeExpt(s.w, expt, m0, tmpl, first, frames); err != nil {
			return fmt.Errorf("--expt %s: %w", expt, err)
		}
		fmt.Fprintf(stdout, "writing %s: DIALS experiment list for %s, images %d…%d\n", expt, tmpl, first, last)
	}
	el := time.Since(start)
	fmt.Fprintf(stdout, "%d images in %.3g s (%.3g s per image)\n", frames, el.Seconds(), el.Seconds()/float64(frames))
	return nil
}

var errStopped = fmt.Errorf("stopped")

// maxFrames bounds a series: more images than a rotation series takes
// (360° in steps of 0.0036°), few enough to check every image's names
// before rendering (about a second) and to hold a result slot per image.
const maxFrames = 100000

// autoExpt names the experiment list after the image template, beside the
// images: out/image_###.cbf → out/image.expt; series.expt without images
// or a name prefix.
func autoExpt(images *template) string {
	if images == nil {
		return "series.expt"
	}
	dir, base := filepath.Split(images.prefix)
	base = strings.TrimRight(base, "_-. ")
	if base == "" {
		base = "series"
	}
	return filepath.Join(dir, base+".expt")
}

// seriesRun is what every image of a series shares.
type seriesRun struct {
	args  *models.Args
	model *models.Model
	outs  seriesOutputs
	kind  countsKind // of the integer images
	w     formats.Output
}

type frameResult struct {
	log []byte
	err error
}

// frame renders and writes image number n (index k) at φ phiDeg with
// noise seed seed, as simulate would.
func (s *seriesRun) frame(k, n int, phiDeg float64, seed int64) frameResult {
	var log bytes.Buffer
	// The φ of a command line's -phi phiDeg (Model.With converts as
	// Args.Model does).
	m, err := s.model.With("phi", phiDeg)
	if err != nil {
		return frameResult{err: fmt.Errorf("image %d: %w", n, err)}
	}
	r, err := renderModel(m, s.args.IntScale, &log, nil, time.Now())
	if err != nil {
		return frameResult{err: fmt.Errorf("image %d: %w", n, err)}
	}
	st := r.Stats
	fmt.Fprintf(&log, "image %d: φ %s deg, max_I = %s, mean= %s rms= %s", n, strconv.FormatFloat(phiDeg, 'g', -1, 64),
		formats.G(st.MaxI), formats.G(st.Mean), formats.G(st.RMS))
	// The image's files all or none (writeAll).
	var files []outFile
	o := s.outs
	if t := o.float; t != nil {
		files = append(files, outFile{"-floatfile", t.path(n), func(w io.Writer) error { return formats.WriteFloatImage(w, r.Image) }})
	}
	if t := o.intf; t != nil {
		p := t.path(n)
		files = append(files, outFile{"-intfile", p, func(w io.Writer) error {
			return countsWriter(p, m, intCounts(r.Image, m, st.IntScale, s.args.ADC), s.kind)(w)
		}})
	}
	if t := o.noise; t != nil {
		p := t.path(n)
		files = append(files, outFile{"-noisefile", p, func(w io.Writer) error {
			data, photons, overloads := physics.NoiseImage(r.Image, m.Detector.FPixels, m.Detector.ROI, s.args.ADC, seed)
			fmt.Fprintf(&log, ", seed %d: %.0f photons (%d overloads)", seed, photons, overloads)
			return countsWriter(p, m, data, s.kind)(w)
		}})
	}
	if t := o.pgm; t != nil {
		files = append(files, outFile{"-pgmfile", t.path(n), func(w io.Writer) error {
			return formats.WritePGM(w, m.Detector.FPixels, m.Detector.SPixels, r.Image, pgmScale(s.args, st))
		}})
	}
	if err := writeAll(formats.Output{Stdout: s.w.Stdout, Log: &log}, files); err != nil {
		return frameResult{err: err}
	}
	var wrote []string
	for _, f := range files {
		wrote = append(wrote, f.path)
	}
	fmt.Fprintf(&log, "; wrote %s\n", strings.Join(wrote, " "))
	return frameResult{log: log.Bytes()}
}

// pgmScale is simulate's PGM scale: -pgmscale, else 250/(5·rmsd).
func pgmScale(args *models.Args, st Stats) float64 {
	scale := args.PGMScale
	if scale <= 0 {
		scale = st.IntScale
		if st.RMSD > 0 {
			scale = 250 / (5 * st.RMSD)
		}
	}
	return scale
}
