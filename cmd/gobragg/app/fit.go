package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/cmd/gobragg/progress"
	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/graph/fit"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
	"github.com/urfave/cli/v2"
)

// FitUsage describes the fit arguments.
const FitUsage = `--observed FILE nanoBragg flags of the starting model...`

// fitFlags are fit's options.
func fitFlags() []cli.Flag {
	return append(append([]cli.Flag{
		&cli.StringFlag{Name: "refine", Value: "cell,orientation", Usage: "parameters to refine: a comma `LIST` of names " +
			"(those of gradcheck, with orient_x orient_y orient_z) and groups (cell orientation misset beam detector rot N scale; detector = distance,xbeam,ybeam)"},
	}, lossFlags("poisson", "the loss: `poisson|gauss|sse` (gauss: ½Σ(ln 2πV + r²/V), V = model + σ²)", "auto")...),
		&cli.StringFlag{Name: "from-dials", Usage: "start from a DIALS experiment list `FILE.expt` (dials.index's indexed.expt, " +
			"dials.refine's refined.expt): its geometry, crystals and images; writes refined.expt"},
		&cli.StringFlag{Name: "per-image", Usage: "refined parameters each image has its own of: a comma `LIST` of names and groups " +
			"(orient, scale, …); the others are shared by all the images"},
		&cli.StringFlag{Name: "spots", Value: "auto", Usage: "`auto|all`: fit boxes around the spots found in --observed, or every pixel"},
		&cli.IntFlag{Name: "box", Value: 10, Usage: "edge of the spot boxes, 3 to 101 `PIXELS`"},
		&cli.Float64Flag{Name: "overload", Usage: "observed `PHOTONS` at or above which a box is dropped", DefaultText: "65535 less -adc for SMV, none for float32"},
		&cli.GenericFlag{Name: "bound", Value: &commaList{}, Usage: "ranges `name=lo:hi,...` in place of the default bounds (repeatable)"},
		&cli.GenericFlag{Name: "restrain", Value: &commaList{}, Usage: "restraints `name=centre,sigma,...`: ½((x − centre)/σ)² added to the negative log-likelihood (repeatable)"},
		&cli.IntFlag{Name: "starts", Usage: fmt.Sprintf("number of starts, `N` (at most %d)", maxStarts), DefaultText: "0: up to 5, until a second converged start confirms the best"},
		&cli.Int64Flag{Name: "seed", Usage: "`SEED` of the starts drawn around the first"},
		&cli.StringFlag{Name: "coarse", Value: "auto", Usage: "coarse stages (N halved each): auto, off, or a number `K` from 0 to 4"},
		&cli.StringFlag{Name: "method", Value: "bfgs", Usage: "optimiser (gonum optimize): `bfgs|lbfgs|gd`"},
		&cli.IntFlag{Name: "max-iter", Value: 500, Usage: "most iterations of each start, `N`"},
		&cli.IntFlag{Name: "max-evals", Value: 1000, Usage: "most loss-and-gradient evaluations of each start's optimiser, `N` (the convergence test's come on top)"},
		&cli.StringFlag{Name: "out", Value: "fit_out", Usage: "`DIR`ectory for fit.json, refined_args.txt, fit_images.png and loss.png", EnvVars: []string{"GOBRAGG_FIT_OUT"}},
	)
}

// maxStarts bounds --starts. Each start is a whole fit, hundreds of
// evaluations, and a given number of starts, unlike the automatic ones,
// runs to the last: 100 (twenty times AutoStarts) is already 10⁴–10⁵
// evaluations, hours on a 2048² image, where a mistyped 10⁹ would run
// until killed.
const maxStarts = 100

// commaList is the value of a repeatable option whose values are comma
// lists: repeating it is the same as joining its values with commas.
type commaList struct{ items []string }

// Set implements flag.Value.
func (l *commaList) Set(v string) error { l.items = append(l.items, v); return nil }

// String implements flag.Value.
func (l *commaList) String() string { return strings.Join(l.items, ",") }

// FitCommand is `gobragg fit`; its action stops the fit (which then
// writes its best point) when the cli context is done.
func FitCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "fit",
		Usage:     "refine cell, orientation (and geometry) parameters against an observed image",
		ArgsUsage: FitUsage,
		Description: "The starting model is a simulate command line (nanoBragg flags, see gobragg simulate --help).\n" +
			"Exit status 0 when converged, 1 when not (results are written either way), 130/143 when interrupted.",
		Flags:        fitFlags(),
		OnUsageError: usageError,
		BashComplete: completeFlags,
		Action: func(c *cli.Context) error {
			return runFit(c.Context, c, c.Args().Slice(), stdout, stderr)
		},
	}
}

// FitReport is fit.json.
type FitReport struct {
	// Status is "converged", "not converged", "interrupted" or "failed";
	// Error says why for every status but converged.
	Status      string   `json:"status"`
	Error       string   `json:"error,omitempty"`
	Loss        *float64 `json:"loss"` // null when not finite
	LossKind    string   `json:"loss_kind"`
	Method      string   `json:"method"`
	Evaluations int      `json:"evaluations"`
	Iterations  int      `json:"iterations"`
	// Decrement is the loss decrease (likelihood units) the last Newton
	// step predicted; null without one.
	Decrement  *float64      `json:"decrement"`
	Spots      FitSpots      `json:"spots"`
	Background FitBackground `json:"background"`
	Params     []FitParam    `json:"params"`
	Stages     []FitStage    `json:"stages"`
	Command    []string      `json:"command"` // gobragg simulate argv of the (first image's) refined model
	// Images are the observed images, with their own refined parameters
	// (--per-image) and command lines; Params above are the shared ones
	// (all of them for a single image).
	Images  []FitImage `json:"images"`
	History []FitStep  `json:"history"`
}

// FitImage is one observed image of a fit.
type FitImage struct {
	File    string     `json:"file"`
	Phi     *float64   `json:"phi"` // φ start and oscillation from its header (a series of SMV images), else null
	Osc     *float64   `json:"osc"`
	Spots   FitSpots   `json:"spots"`
	Params  []FitParam `json:"params"`
	Command []string   `json:"command"`
}

// FitSpots describes the spots of the observed image.
type FitSpots struct {
	Mode        string `json:"mode"` // auto or all
	Found       int    `json:"found"`
	Boxes       int    `json:"boxes"`
	BoxSize     int    `json:"box_size"`
	Pixels      int    `json:"pixels"`      // fitted
	Judged      int    `json:"judged"`      // boxes with a significant spot
	Unexplained int    `json:"unexplained"` // of those, left unexplained by the refined model
}

// FitBackground describes the background added to the model.
type FitBackground struct {
	Kind string  `json:"kind"` // none, auto or the file
	Mean float64 `json:"mean"` // photons per fitted pixel
}

// FitParam is one refined parameter.
type FitParam struct {
	Name   string   `json:"name"`
	Unit   string   `json:"unit"`
	Start  float64  `json:"start"`
	Value  float64  `json:"value"`
	StdErr *float64 `json:"stderr"` // null when the Hessian gives none
	Lo     *float64 `json:"lo"`     // the bound (null when the fit could not start)
	Hi     *float64 `json:"hi"`
}

// FitStage is one stage of the fit.
type FitStage struct {
	Start       int     `json:"start"`
	Name        string  `json:"name"`
	Evaluations int     `json:"evaluations"`
	Iterations  int     `json:"iterations"`
	Loss        float64 `json:"loss"`
	Status      string  `json:"status"`
}

// FitStep is one iteration of the loss curve.
type FitStep struct {
	Start       int     `json:"start"`
	Stage       string  `json:"stage"`
	Iteration   int     `json:"iteration"`
	Evaluations int     `json:"evaluations"`
	Loss        float64 `json:"loss"`
	GradNorm    float64 `json:"grad_norm"`
}

// ErrFitInterrupted is returned (wrapped) when a fit stops on its context.
var ErrFitInterrupted = errors.New("fit interrupted")

// Fit is FitContext without a context.
func Fit(argv []string, out, log io.Writer) error {
	return FitContext(context.Background(), argv, out, log)
}

// FitContext refines the parameters named by --refine of the model argv
// describes against --observed, printing a line per iteration to out, and
// writes fit.json, the refined command line (refined_args.txt),
// fit_images.png (observed | model | residual) and loss.png to --out.
// Results are written however the fit ends; a fit that is not converged
// (fit.Result's verdict) returns an error, and one stopped by ctx an
// error wrapping ErrFitInterrupted, after writing the best point so far.
func FitContext(ctx context.Context, argv []string, out, log io.Writer) error {
	return runCommand(ctx, FitCommand(out, log), argv, out, log)
}

func runFit(ctx context.Context, c *cli.Context, rest []string, out, log io.Writer) error {
	lo := lossOptionsFrom(c)
	if lo.Observed == "" && c.String("from-dials") == "" {
		return usagef("fit needs --observed FILE (SMV .img, miniCBF or float32 image) or --from-dials FILE.expt")
	}
	if lo.Loss == "sum" {
		return usagef("--loss sum has no minimum to fit: use poisson, gauss or sse")
	}
	method, err := fit.ParseMethod(strings.ToLower(c.String("method")))
	if err != nil {
		return usagef("--method: %v", err)
	}
	settings := fit.Settings{Method: method, Context: ctx, MaxIter: c.Int("max-iter"), MaxEvals: c.Int("max-evals"),
		Starts: c.Int("starts"), Seed: c.Int64("seed")}
	for _, n := range []struct {
		name string
		v    int
		min  int
	}{{"max-iter", settings.MaxIter, 1}, {"max-evals", settings.MaxEvals, 1}, {"starts", settings.Starts, 0}} {
		if n.v < n.min {
			return usagef("--%s %d: want a whole number ≥ %d", n.name, n.v, n.min)
		}
	}
	if settings.Starts > maxStarts {
		return usagef("--starts %d: want at most %d starts", settings.Starts, maxStarts)
	}
	box := c.Int("box")
	if box < 3 || box > 101 {
		return usagef("--box %d: want a whole number of pixels from 3 to 101", box)
	}
	switch s := c.String("coarse"); s {
	case "auto":
	case "off":
		settings.Coarse = -1
	default:
		if settings.Coarse, err = strconv.Atoi(s); err != nil || settings.Coarse < 0 || settings.Coarse > 4 {
			return usagef("--coarse %q: want auto, off or a number of stages from 0 to 4", s)
		}
		if settings.Coarse == 0 {
			settings.Coarse = -1
		}
	}
	spotMode := c.String("spots")
	if spotMode != "auto" && spotMode != "all" {
		return usagef("--spots %q: want auto or all", spotMode)
	}
	bgMode := orDefault(lo.Background, "auto")
	dir := c.String("out")
	if dir == "" {
		return usagef("--out '': want a directory (from --out or GOBRAGG_FIT_OUT)")
	}
	var files []string
	if lo.Observed != "" {
		if files, err = expandObserved(lo.Observed); err != nil {
			return err
		}
	}
	dialsList := c.String("from-dials")
	// The nanoBragg flags, checked before any image is read: simulate's
	// outputs and every file the fit will write. (fitInputs and
	// dialsInputs parse them again, per image, and check the memory of
	// the whole fit once the first image's model is known.)
	a, err := models.ParseArgs(rest)
	if err != nil {
		return err
	}
	if err := refuseSimulateOutputs(a, "fit", "it writes its results to --out", "it writes fit.json to --out"); err != nil {
		return err
	}
	outs, gone := fitOutputs(dir, dialsList != "")
	if err := checkFitDir(dir, outs, a); err != nil {
		return err
	}
	overload := 0.0
	if c.IsSet("overload") {
		if overload = c.Float64("overload"); !(overload > 0) {
			return usagef("--overload %g: want a positive number of photons", overload)
		}
	}
	pix := fit.Pixels{Background: bgMode == "auto", AllPixels: spotMode == "all", BoxSize: box, Overload: overload}
	refine := orDefault(c.String("refine"), "cell,orientation")
	var inputs []*fitInput
	var shared, per []string
	var args *models.Args
	var fd *fromDIALS
	if dialsList != "" {
		inputs, shared, per, args, fd, err = dialsInputs(dialsList, &lo, files, rest, refine, c.String("per-image"), pix, c.IsSet("overload"), log)
	} else {
		inputs, shared, per, args, err = fitInputs(&lo, files, rest, refine, c.String("per-image"), pix, c.IsSet("overload"), log)
	}
	if err != nil {
		return err
	}
	m := inputs[0].obj.Model
	if err := refuseInputs(append(outs, output{"--out", gone}), fitInputFiles(&lo, dialsList, inputs)); err != nil {
		return err
	}
	out, log = quiet(out), quiet(log)
	names := append(append([]string{}, shared...), per...)
	if settings.Bounds, err = parseBounds(c.Generic("bound").(*commaList).String(), names, m); err != nil {
		return err
	}
	if settings.Restraints, err = parseRestraints(c.Generic("restrain").(*commaList).String(), names); err != nil {
		return err
	}
	warnNotDifferentiable(log, m, names)
	problem := &fit.Problem{Shared: shared, PerImage: per}
	report := FitReport{LossKind: inputs[0].obj.Loss.Kind.String(), Method: method.String(),
		Spots: FitSpots{Mode: spotMode, BoxSize: box}, Background: FitBackground{Kind: bgMode}}
	for _, in := range inputs {
		problem.Images = append(problem.Images, fit.Image{Objective: in.obj, Boxes: in.boxes})
		report.Spots.Found += len(in.found.Spots)
		report.Spots.Boxes += len(in.boxes)
		report.Spots.Pixels += in.pixels
		report.Background.Mean += in.bgMean * float64(in.pixels)
	}
	if report.Spots.Pixels > 0 {
		report.Background.Mean /= float64(report.Spots.Pixels)
	}
	settings.Comm = FitComm
	if writes() {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	what := inputs[0].file
	if len(inputs) > 1 {
		what = fmt.Sprintf("%d images (%s … %s)", len(inputs), inputs[0].file, inputs[len(inputs)-1].file)
		if len(per) > 0 {
			what += "; per image: " + strings.Join(per, " ")
		}
	}
	fmt.Fprintf(out, "fitting %s (%s loss, %s) to %s\n", strings.Join(names, " "), report.LossKind, method, what)
	fmt.Fprintf(out, "spots: %d found; fitting %s: %d pixels; background %s (%.3g photons/pixel)\n", report.Spots.Found,
		map[string]string{"auto": fmt.Sprintf("%d boxes of %d²", report.Spots.Boxes, box), "all": "the whole image"}[spotMode],
		report.Spots.Pixels, bgMode, report.Background.Mean)
	// A bar on stderr (a terminal) for long fits: the evaluations of the
	// current start against --max-evals; the iteration lines print above it.
	bar := progress.Start(log, "fit", int64(settings.MaxEvals), progress.ModeOf(args.Progress))
	iterOut := bar.Writer(out)
	startAt, current := 0, -1
	settings.Progress = func(it fit.Iteration) {
		var b strings.Builder
		for i, n := range shared {
			fmt.Fprintf(&b, " %s=%.8g", n, it.X[i])
		}
		if len(inputs) == 1 {
			for i, n := range per {
				fmt.Fprintf(&b, " %s=%.8g", n, it.X[len(shared)+i])
			}
		}
		stage := fmt.Sprintf("start %d, %s", it.Start+1, it.Stage)
		fmt.Fprintf(iterOut, "iter %3d  evals %4d  %-31s loss %.10g  |grad| %.3g %s\n", it.Iter, it.Evals, stage, it.Loss, it.GradNorm, b.String())
		if it.Start != current {
			current, startAt = it.Start, it.Evals-1
		}
		bar.SetLabel("fit: " + stage + ", evaluations")
		bar.Set(int64(it.Evals - startAt))
	}
	res := fit.RunProblem(problem, settings)
	bar.Finish()
	report.Status = string(res.Status)
	report.Loss = finiteOrNil(res.Loss)
	report.Decrement = finiteOrNil(res.Decrement)
	report.Evaluations, report.Iterations = res.Evaluations, res.Iterations
	report.Spots.Judged, report.Spots.Unexplained = res.Spots.Boxes, res.Spots.Unexplained
	if res.Err != nil {
		report.Error = res.Err.Error()
	}
	for _, h := range res.History {
		report.History = append(report.History, FitStep{Start: h.Start, Stage: h.Stage, Iteration: h.Iter, Evaluations: h.Evals,
			Loss: finite(h.Loss), GradNorm: finite(h.GradNorm)})
	}
	for _, st := range res.Stages {
		report.Stages = append(report.Stages, FitStage{Start: st.Start, Name: st.Name, Evaluations: st.Evaluations,
			Iterations: st.Iters, Loss: finite(st.Loss), Status: st.Status})
	}
	fmt.Fprintf(out, "\n%s after %d evaluations, %d iterations: loss %.10g", res.Status, res.Evaluations, res.Iterations, res.Loss)
	if !math.IsNaN(res.Decrement) {
		fmt.Fprintf(out, "; Newton step predicts %.2g more", res.Decrement)
	}
	if res.Spots.Boxes > 0 {
		fmt.Fprintf(out, "; %d of %d spots explained", res.Spots.Boxes-res.Spots.Unexplained, res.Spots.Boxes)
	}
	fmt.Fprintln(out)
	if res.Status != fit.Converged {
		fmt.Fprintf(out, "NOT CONVERGED: %v\n", res.Err)
	}
	// The parameters: the shared ones (every one for a single image),
	// then each image's own.
	param := func(i int, name string) FitParam {
		p, _ := models.LookupParam(name)
		b := fit.Bound{Lo: math.NaN(), Hi: math.NaN()} // none when the fit could not start
		if i < len(res.Bounds) {
			b = res.Bounds[i]
		}
		fp := FitParam{Name: name, Unit: p.Unit, Start: res.Start[i], Value: res.X[i], Lo: finiteOrNil(b.Lo), Hi: finiteOrNil(b.Hi)}
		if v := res.StdErr[i]; !math.IsNaN(v) {
			fp.StdErr = &v
		}
		return fp
	}
	row := func(label string, fp FitParam) {
		se := "-"
		if fp.StdErr != nil {
			se = fmt.Sprintf("%.3g", *fp.StdErr)
		}
		lo, hi := math.NaN(), math.NaN()
		if fp.Lo != nil {
			lo, hi = *fp.Lo, *fp.Hi
		}
		fmt.Fprintf(out, "%-14s %-6s %16.10g %16.10g %12s %24s\n", label, fp.Unit, fp.Start, fp.Value, se, fmt.Sprintf("%.6g:%.6g", lo, hi))
	}
	fmt.Fprintf(out, "%-14s %-6s %16s %16s %12s %24s\n", "parameter", "unit", "start", "refined", "std. error", "bound")
	for i, n := range shared {
		fp := param(i, n)
		report.Params = append(report.Params, fp)
		row(n, fp)
	}
	finals := res.Models
	if len(finals) != len(inputs) {
		finals = make([]*models.Model, len(inputs))
		for k, in := range inputs {
			finals[k] = in.obj.Model
		}
	}
	var lines []string
	var rounded []string
	for k, in := range inputs {
		im := FitImage{File: in.file, Phi: finiteOrNil(in.phi), Osc: finiteOrNil(in.osc),
			Spots: FitSpots{Mode: spotMode, Found: len(in.found.Spots), Boxes: len(in.boxes), BoxSize: box, Pixels: in.pixels}}
		if len(inputs) > 1 && len(per) > 0 {
			fmt.Fprintf(out, "image %d: %s\n", k+1, in.file)
		}
		for j, n := range per {
			i := len(shared) + k*len(per) + j
			fp := param(i, n)
			im.Params = append(im.Params, fp)
			if len(inputs) == 1 {
				report.Params = append(report.Params, fp)
			}
			row("  "+n, fp)
		}
		if fd == nil {
			// (A model read from a DIALS list has a CUSTOM detector and
			// no command line: refined.expt describes it.)
			cmd, r := finals[k].Argv(in.argv, names)
			rounded = r
			im.Command = append([]string{"gobragg", "simulate"}, cmd...)
			lines = append(lines, shellJoin(im.Command))
		}
		report.Images = append(report.Images, im)
	}
	report.Command = report.Images[0].Command
	switch {
	case fd != nil:
		fmt.Fprintf(out, "\nrefined models: %s (a DIALS experiment list)\n", filepath.Join(dir, "refined.expt"))
	case len(inputs) == 1:
		fmt.Fprintf(out, "\nrefined model:\n  %s\n", lines[0])
	default:
		fmt.Fprintf(out, "\nrefined models: %d command lines, one per image, in %s\n", len(lines), filepath.Join(dir, "refined_args.txt"))
	}
	if len(rounded) > 0 {
		fmt.Fprintf(out, "  (%s rounded to whole cells: the command line takes whole numbers)\n", strings.Join(rounded, ", "))
	}
	if !writes() {
		return fitOutcome(res, dir)
	}
	if werr := writeFitFiles(dir, &report, lines, finals[0], inputs[0].obj.Loss, res); werr != nil {
		return werr
	}
	wrote := []string{filepath.Join(dir, "fit.json")}
	if len(lines) > 0 {
		wrote = append(wrote, filepath.Join(dir, "refined_args.txt"))
	}
	wrote = append(wrote, filepath.Join(dir, "fit_images.png"), filepath.Join(dir, "loss.png"))
	if fd != nil {
		p := filepath.Join(dir, "refined.expt")
		if err := fd.writeRefinedExpt(p, finals, names); err != nil {
			return fmt.Errorf("refined.expt: %w", err)
		}
		wrote = append(wrote, p)
	}
	fmt.Fprintf(out, "wrote %s\n", strings.Join(wrote, ", "))
	return fitOutcome(res, dir)
}

// fitOutcome is what a fit returns for its result: nil when converged.
func fitOutcome(res *fit.Result, dir string) error {
	switch res.Status {
	case fit.Converged:
		return nil
	case fit.Interrupted:
		return fmt.Errorf("%w: the best point so far is in %s", ErrFitInterrupted, dir)
	}
	return fmt.Errorf("fit %s: %w (results in %s)", res.Status, res.Err, dir)
}

// refuseSimulateOutputs refuses simulate's output flags among the
// nanoBragg flags of cmd (fit, gradcheck), which writes none of those
// files: taken silently, -floatfile x.bin would leave x.bin unwritten, and
// a fit would copy the flag into refined_args.txt, whose command line
// would then write over whatever x.bin had become (the observed image,
// if it came from -noisefile). files and json say what cmd does instead.
func refuseSimulateOutputs(a *models.Args, cmd, files, json string) error {
	for _, o := range []output{{"-floatfile", a.FloatFile}, {"-intfile", a.IntFile}, {"-noisefile", a.NoiseFile},
		{"-pgmfile", a.PGMFile}, {"-expt", a.ExptFile}} {
		if o.path != "" {
			return usagef("%s %s: an output of simulate, not of %s (%s): leave it out", o.flag, o.path, cmd, files)
		}
	}
	if a.JSON {
		return usagef("-json: simulate's statistics, not %s's (%s): leave it out", cmd, json)
	}
	return nil
}

// fitPixelBytes is a fit's memory per pixel of each of its images,
// measured as the peak resident memory of fits of 1, 2 and 4 images of
// 2048² pixels (--max-evals 1): 459, 776 and 1568 MB, 392 MB more an
// image, 94 bytes a pixel. That is twice a lone gradient program's
// (models.GradientPixelBytes): a fit also keeps each image's observed
// image, background and weights (those of its spot boxes and of its inner
// boxes), and builds a stage's objectives before the last stage's go.
const fitPixelBytes = 96

// warnNotDifferentiable warns of the parameters whose image jumps (or
// kinks) in m: one line per reason, naming its parameters (an -hkl table
// gives every moving one the same reason: it was a line each).
func warnNotDifferentiable(log io.Writer, m *models.Model, names []string) {
	var whys []string
	who := map[string][]string{}
	for _, n := range names {
		if why := m.NotDifferentiable(n); why != "" {
			if who[why] == nil {
				whys = append(whys, why)
			}
			who[why] = append(who[why], n)
		}
	}
	for _, why := range whys {
		its := "its gradient ignores"
		if len(who[why]) > 1 {
			its = "their gradients ignore"
		}
		fmt.Fprintf(log, "WARNING: %s: %s; %s the jumps\n", strings.Join(who[why], ", "), why, its)
	}
}

// checkFitMemory refuses a fit whose images together need more memory
// than -max_memory (or the default budget) allows. models.Args.Model
// checks one image at a time; a fit holds all its images at once (on
// every MPI rank, which each read them all). m is an image's model; the
// images share its structure factors.
func checkFitMemory(m *models.Model, a *models.Args, images int) error {
	budget := a.MaxMemoryMB * (1 << 20)
	if !(budget > 0) {
		budget = models.DefaultMaxMemory
	}
	need := m.Cost(fitPixelBytes*float64(images), 0).Memory
	if need <= budget {
		return nil
	}
	what := "one image"
	if images != 1 {
		what = fmt.Sprintf("%d images", images)
	}
	return fmt.Errorf("a fit of %s of %d×%d pixels needs about %.0f MB of memory (%d bytes a pixel of each), "+
		"more than the %.0f MB allowed; give -max_memory %.0f (MB) to run it anyway",
		what, m.Detector.FPixels, m.Detector.SPixels, need/(1<<20), fitPixelBytes, budget/(1<<20), math.Ceil(need/(1<<20)))
}

// fitOutputs are the files a fit writes in dir, and the one it removes
// ("" for none): after a fit from a DIALS list, which writes refined.expt,
// refined_args.txt (an earlier fit's would describe another fit).
func fitOutputs(dir string, fromDIALS bool) (outs []output, gone string) {
	in := func(name string) output { return output{"--out", filepath.Join(dir, name)} }
	outs = []output{in("fit.json"), in("fit_images.png"), in("loss.png")}
	if fromDIALS {
		return append(outs, in("refined.expt")), filepath.Join(dir, "refined_args.txt")
	}
	return append(outs, in("refined_args.txt")), ""
}

// checkFitDir refuses, before the fit, an --out that cannot take the
// fit's files: every one must be writable and none one of the model's
// input files (checkOutputs, as simulate checks its outputs). A directory
// that does not exist yet must be one os.MkdirAll can make: its first
// missing component, in an existing directory this process may write.
func checkFitDir(dir string, outs []output, a *models.Args) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		top := dir
		for {
			up := filepath.Dir(top)
			if _, err := os.Stat(up); up == top || !errors.Is(err, fs.ErrNotExist) {
				break
			}
			top = up
		}
		if err := formats.CheckWritable(top); err != nil {
			return fmt.Errorf("--out %s: %w", dir, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("--out: %w", err)
	case !st.IsDir():
		return fmt.Errorf("--out %s: not a directory", dir)
	}
	return checkOutputs(a, outs)
}

// fitInputFiles are the files a fit reads besides the model's own
// (models.Args.InputFiles): its observed images, --background, --mask and
// the DIALS list.
func fitInputFiles(lo *lossOptions, dialsList string, inputs []*fitInput) []models.InputFile {
	var in []models.InputFile
	flag := "--observed"
	if lo.Observed == "" {
		flag = "--from-dials image"
	}
	for _, fi := range inputs {
		in = append(in, models.InputFile{Flag: flag, Path: fi.file})
	}
	switch lo.Background {
	case "", "none", "auto":
	default:
		in = append(in, models.InputFile{Flag: "--background", Path: lo.Background})
	}
	for _, f := range []models.InputFile{{Flag: "--mask", Path: lo.Mask}, {Flag: "--from-dials", Path: dialsList}} {
		if f.Path != "" {
			in = append(in, f)
		}
	}
	return in
}

// refuseInputs refuses an output that is one of the input files ins
// (fit.json written over --observed would destroy the image), as
// checkOutputs does for the model's input files (overwritesInput).
func refuseInputs(outs []output, ins []models.InputFile) error {
	inputs := statInputs(ins)
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		st, err := os.Stat(o.path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if err := overwritesInput(o, st, inputs); err != nil {
			return err
		}
	}
	return nil
}

// isSMV reports whether path starts like an SMV file.
func isSMV(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [12]byte
	n, _ := io.ReadFull(f, b[:])
	return strings.HasPrefix(string(b[:n]), "{\nHEADER_BYT")
}

// parseBounds reads --bound name=lo:hi[,name=lo:hi…] for the refined
// names of model m, refusing a bound the fit could not work in
// (fit.CheckBound).
func parseBounds(spec string, names []string, m *models.Model) (map[string]fit.Bound, error) {
	out := map[string]fit.Bound{}
	if spec == "" {
		return out, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(kv, "=")
		lo, hi, ok2 := strings.Cut(v, ":")
		if !ok || !ok2 {
			return nil, usagef("--bound %q: want name=lo:hi", kv)
		}
		k = strings.TrimSpace(k)
		if !contains(names, k) {
			return nil, usagef("--bound: %s is not refined (--refine %s)", k, strings.Join(names, ","))
		}
		l, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		h, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if err1 != nil || err2 != nil {
			return nil, usagef("--bound %q: want two finite numbers lo < hi", kv)
		}
		b := fit.Bound{Lo: l, Hi: h}
		if err := fit.CheckBound(m, k, b); err != nil {
			return nil, usagef("--bound %q: %v", kv, err)
		}
		out[k] = b
	}
	return out, nil
}

// parseRestraints reads --restrain name=centre,sigma[,name=centre,sigma…].
func parseRestraints(spec string, names []string) (map[string]fit.Restraint, error) {
	out := map[string]fit.Restraint{}
	if spec == "" {
		return out, nil
	}
	parts := strings.Split(spec, ",")
	for i := 0; i < len(parts); i += 2 {
		k, c, ok := strings.Cut(parts[i], "=")
		if !ok || i+1 >= len(parts) {
			return nil, usagef("--restrain %q: want name=centre,sigma", spec)
		}
		k = strings.TrimSpace(k)
		if !contains(names, k) {
			return nil, usagef("--restrain: %s is not refined (--refine %s)", k, strings.Join(names, ","))
		}
		cv, err1 := strconv.ParseFloat(strings.TrimSpace(c), 64)
		sv, err2 := strconv.ParseFloat(strings.TrimSpace(parts[i+1]), 64)
		if err1 != nil || err2 != nil || !(sv > 0) || math.IsNaN(cv) || math.IsInf(cv, 0) || math.IsInf(sv, 0) {
			return nil, usagef("--restrain %s=%s,%s: want a finite centre and σ > 0", k, c, parts[i+1])
		}
		out[k] = fit.Restraint{Centre: cv, Sigma: sv}
	}
	return out, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// finite maps ±Inf and NaN to a large number JSON can carry.
func finite(v float64) float64 {
	switch {
	case math.IsNaN(v):
		return 0
	case math.IsInf(v, 1):
		return math.MaxFloat64
	case math.IsInf(v, -1):
		return -math.MaxFloat64
	}
	return v
}

// shellJoin quotes arguments for a POSIX shell where needed.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// writeFitFiles writes fit.json, refined_args.txt and the two pictures.
func writeFitFiles(dir string, report *FitReport, lines []string, m *models.Model, loss graph.Loss, res *fit.Result) error {
	b, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	var errs []error
	errs = append(errs, formats.WriteFileAtomic(filepath.Join(dir, "fit.json"), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}))
	if args := filepath.Join(dir, "refined_args.txt"); len(lines) > 0 {
		errs = append(errs, formats.WriteFileAtomic(args, func(w io.Writer) error {
			_, err := fmt.Fprintln(w, strings.Join(lines, "\n"))
			return err
		}))
	} else if err := os.Remove(args); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A model from a DIALS list has no command line (refined.expt
		// holds the result): an earlier fit's file would describe
		// another fit.
		errs = append(errs, err)
	}
	if s, err := graph.New(m); err != nil {
		errs = append(errs, err)
	} else if img, err := s.Image(); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, formats.WriteFileAtomic(filepath.Join(dir, "fit_images.png"), func(w io.Writer) error {
			// Fastest compression: the default level took ~4 % of a
			// cell-and-orientation fit of a 256² image (16 of 470 ms) for a
			// file 11 % smaller (165 against 186 kB).
			e := png.Encoder{CompressionLevel: png.BestSpeed}
			return e.Encode(w, panels(m.Detector.FPixels, m.Detector.SPixels, loss, img))
		}))
	}
	errs = append(errs, lossCurve(filepath.Join(dir, "loss.png"), report))
	return errors.Join(errs...)
}

// panels draws observed | model | residual side by side: the two images
// on one square-root grey scale (white = the larger's 99.9th percentile of
// the observed), the model with its background, the residual (observed −
// model) in blue (negative) to red (positive) at ±3 times its rms over the
// fitted pixels; pixels the loss leaves out are shaded light green in the
// residual.
func panels(fp, sp int, loss graph.Loss, bragg []float64) image.Image {
	const gap = 4
	obs := loss.Observed
	model := make([]float64, len(bragg))
	for i, v := range bragg {
		model[i] = v
		if loss.Background != nil {
			model[i] += loss.Background[i]
		}
	}
	im := image.NewRGBA(image.Rect(0, 0, 3*fp+2*gap, sp))
	for i := range im.Pix {
		im.Pix[i] = 255
	}
	top := percentile(obs, 0.999)
	if !(top > 0) {
		top = 1
	}
	var rss float64
	var nres int
	for i := range obs {
		if loss.Weights == nil || loss.Weights[i] != 0 {
			r := obs[i] - model[i]
			rss += r * r
			nres++
		}
	}
	rms := math.Sqrt(rss / math.Max(1, float64(nres)))
	if !(rms > 0) || math.IsInf(rms, 0) {
		rms = 1
	}
	grey := func(v float64) color.RGBA {
		g := uint8(255 * math.Sqrt(math.Min(1, math.Max(0, v/top))))
		return color.RGBA{255 - g, 255 - g, 255 - g, 255}
	}
	for s := 0; s < sp; s++ {
		for f := 0; f < fp; f++ {
			i := s*fp + f
			im.SetRGBA(f, s, grey(obs[i]))
			im.SetRGBA(fp+gap+f, s, grey(model[i]))
			if loss.Weights != nil && loss.Weights[i] == 0 {
				im.SetRGBA(2*(fp+gap)+f, s, color.RGBA{225, 240, 225, 255})
				continue
			}
			r := math.Max(-1, math.Min(1, (obs[i]-model[i])/(3*rms)))
			c := color.RGBA{255, 255, 255, 255}
			if r > 0 {
				c.G, c.B = uint8(255*(1-r)), uint8(255*(1-r))
			} else if r < 0 {
				c.R, c.G = uint8(255*(1+r)), uint8(255*(1+r))
			}
			im.SetRGBA(2*(fp+gap)+f, s, c)
		}
	}
	return im
}

func percentile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	// A histogram-free estimate: the value below which a fraction q lies,
	// from a sorted copy of a strided sample (at most 65536 values).
	step := max(1, len(v)/65536)
	var s []float64
	for i := 0; i < len(v); i += step {
		s = append(s, v[i])
	}
	sort.Float64s(s)
	return s[int(q*float64(len(s)-1))]
}
