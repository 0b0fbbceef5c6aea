package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/graph/fit"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// FitUsage describes the fit options.
const FitUsage = `--observed FILE [--refine cell|LIST] [--loss sse|poisson] [--method lbfgs|bfgs|gd] [--max-iter 100]
   [--mask FILE] [--roi fmin,fmax,smin,smax] [--out DIR] nanoBragg flags of the starting model...`

// FitReport is fit.json.
type FitReport struct {
	Status      string     `json:"status"`
	Error       string     `json:"error,omitempty"`
	Loss        *float64   `json:"loss"` // null when not finite
	LossKind    string     `json:"loss_kind"`
	Method      string     `json:"method"`
	Evaluations int        `json:"evaluations"`
	Iterations  int        `json:"iterations"`
	Params      []FitParam `json:"params"`
	Command     []string   `json:"command"` // gobragg simulate argv of the refined model
	History     []FitStep  `json:"history"`
}

// FitParam is one refined parameter.
type FitParam struct {
	Name   string   `json:"name"`
	Unit   string   `json:"unit"`
	Start  float64  `json:"start"`
	Value  float64  `json:"value"`
	StdErr *float64 `json:"stderr"` // null when the Hessian gives none
}

// FitStep is one iteration of the loss curve.
type FitStep struct {
	Iteration   int     `json:"iteration"`
	Evaluations int     `json:"evaluations"`
	Loss        float64 `json:"loss"`
	GradNorm    float64 `json:"grad_norm"`
}

// Fit refines the parameters named by --refine of the model argv
// describes against --observed, printing a line per iteration to out, and
// writes fit.json, the refined command line (refined_args.txt),
// fit_images.png (observed | model | residual) and loss.png to --out.
// Partial results are written when the fit fails, and an error returned.
func Fit(argv []string, out, log io.Writer) error {
	o, rest, err := splitOptions(argv, []string{"observed", "refine", "loss", "method", "max-iter", "mask", "roi", "out"}, nil)
	if err != nil {
		return err
	}
	if o.values["observed"] == "" {
		return usagef("fit needs --observed FILE (SMV .img or float32 image)")
	}
	if o.values["loss"] == "" {
		o.values["loss"] = "sse"
	}
	if o.values["loss"] == "sum" {
		return usagef("--loss sum has no minimum to fit: use sse or poisson")
	}
	method, err := fit.ParseMethod(strings.ToLower(orDefault(o.values["method"], "lbfgs")))
	if err != nil {
		return usagef("--method: %v", err)
	}
	maxIter := 100
	if s := o.values["max-iter"]; s != "" {
		if maxIter, err = strconv.Atoi(s); err != nil || maxIter < 1 {
			return usagef("--max-iter %q: want a positive whole number", s)
		}
	}
	dir := orDefault(o.values["out"], "fit_out")
	obj, discrete, err := objective(o, rest, orDefault(o.values["refine"], "cell"), log)
	if err != nil {
		return err
	}
	m, names, loss := obj.Model, obj.Names, obj.Loss
	if len(discrete) > 0 {
		return usagef("--refine %s: %s", discrete[0], models.DiscreteParams[discrete[0]])
	}
	for _, n := range names {
		if why := m.NotDifferentiable(n); why != "" {
			fmt.Fprintf(log, "WARNING: %s: %s; its gradient ignores the jumps\n", n, why)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprintf(out, "fitting %s (%s loss, %s) to %s\n", strings.Join(names, " "), loss.Kind, method, o.values["observed"])
	res := fit.Run(obj, fit.Settings{Method: method, MaxIter: maxIter, Progress: func(it fit.Iteration) {
		var b strings.Builder
		for i, n := range names {
			fmt.Fprintf(&b, " %s=%.8g", n, it.X[i])
		}
		fmt.Fprintf(out, "iter %3d  evals %3d  loss %.10g  |grad| %.3g %s\n", it.Iter, it.Evals, it.Loss, it.GradNorm, b.String())
	}})
	report := FitReport{Status: res.Status, Loss: finiteOrNil(res.Loss), LossKind: loss.Kind.String(), Method: method.String(),
		Evaluations: res.Evaluations, Iterations: res.Iterations}
	if res.Err != nil {
		report.Error = res.Err.Error()
	}
	for _, h := range res.History {
		report.History = append(report.History, FitStep{Iteration: h.Iter, Evaluations: h.Evals, Loss: finite(h.Loss), GradNorm: finite(h.GradNorm)})
	}
	final, ferr := obj.At(res.X)
	if ferr != nil {
		final = m
	}
	cmd, rounded := final.Argv(rest, names)
	report.Command = append([]string{"gobragg", "simulate"}, cmd...)
	fmt.Fprintf(out, "\n%s after %d evaluations, %d iterations: loss %.10g\n", res.Status, res.Evaluations, res.Iterations, res.Loss)
	fmt.Fprintf(out, "%-14s %-6s %16s %16s %12s\n", "parameter", "unit", "start", "refined", "std. error")
	for i, n := range names {
		p, _ := models.LookupParam(n)
		fp := FitParam{Name: n, Unit: p.Unit, Start: res.Start[i], Value: res.X[i]}
		se := "-"
		if v := res.StdErr[i]; !math.IsNaN(v) {
			fp.StdErr = &v
			se = fmt.Sprintf("%.3g", v)
		}
		report.Params = append(report.Params, fp)
		fmt.Fprintf(out, "%-14s %-6s %16.10g %16.10g %12s\n", n, p.Unit, fp.Start, fp.Value, se)
	}
	fmt.Fprintf(out, "\nrefined model:\n  %s\n", shellJoin(report.Command))
	if len(rounded) > 0 {
		fmt.Fprintf(out, "  (%s rounded to whole cells: the command line takes whole numbers)\n", strings.Join(rounded, ", "))
	}
	werr := writeFitFiles(dir, &report, final, loss, res)
	if werr != nil {
		return werr
	}
	fmt.Fprintf(out, "wrote %s\n", strings.Join([]string{filepath.Join(dir, "fit.json"), filepath.Join(dir, "refined_args.txt"),
		filepath.Join(dir, "fit_images.png"), filepath.Join(dir, "loss.png")}, ", "))
	if res.Err != nil {
		return fmt.Errorf("fit %s: %w (partial results in %s)", res.Status, res.Err, dir)
	}
	return nil
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
func writeFitFiles(dir string, report *FitReport, m *models.Model, loss graph.Loss, res *fit.Result) error {
	b, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	var errs []error
	errs = append(errs, formats.WriteFileAtomic(filepath.Join(dir, "fit.json"), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}))
	errs = append(errs, formats.WriteFileAtomic(filepath.Join(dir, "refined_args.txt"), func(w io.Writer) error {
		_, err := fmt.Fprintln(w, shellJoin(report.Command))
		return err
	}))
	if s, err := graph.New(m); err != nil {
		errs = append(errs, err)
	} else if img, err := s.Image(); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, formats.WriteFileAtomic(filepath.Join(dir, "fit_images.png"), func(w io.Writer) error {
			return png.Encode(w, panels(m.Detector.FPixels, m.Detector.SPixels, loss, img))
		}))
	}
	errs = append(errs, lossCurve(filepath.Join(dir, "loss.png"), report))
	return errors.Join(errs...)
}

// panels draws observed | model | residual side by side: the two images
// on one square-root grey scale (white = the larger's 99.9th percentile of
// the observed), the residual (observed − model) in blue (negative) to red
// (positive) at ±3 times its rms; pixels the loss leaves out are drawn
// dark green.
func panels(fp, sp int, loss graph.Loss, model []float64) image.Image {
	const gap = 4
	obs := loss.Observed
	im := image.NewRGBA(image.Rect(0, 0, 3*fp+2*gap, sp))
	for i := range im.Pix {
		im.Pix[i] = 255
	}
	top := percentile(obs, 0.999)
	if top <= 0 {
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
	if rms == 0 {
		rms = 1
	}
	grey := func(v float64) color.RGBA {
		g := uint8(255 * math.Sqrt(math.Min(1, math.Max(0, v/top))))
		return color.RGBA{255 - g, 255 - g, 255 - g, 255}
	}
	for s := 0; s < sp; s++ {
		for f := 0; f < fp; f++ {
			i := s*fp + f
			if loss.Weights != nil && loss.Weights[i] == 0 {
				for k := 0; k < 3; k++ {
					im.SetRGBA(k*(fp+gap)+f, s, color.RGBA{0, 80, 0, 255})
				}
				continue
			}
			im.SetRGBA(f, s, grey(obs[i]))
			im.SetRGBA(fp+gap+f, s, grey(model[i]))
			r := math.Max(-1, math.Min(1, (obs[i]-model[i])/(3*rms)))
			c := color.RGBA{255, 255, 255, 255}
			if r > 0 {
				c.G, c.B = uint8(255*(1-r)), uint8(255*(1-r))
			} else {
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

// lossCurve plots the loss against the evaluation count (gonum/plot).
func lossCurve(path string, report *FitReport) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s loss (%s), %s", report.LossKind, report.Method, report.Status)
	p.X.Label.Text = "evaluations"
	p.Y.Label.Text = "loss"
	var pts plotter.XYs
	for _, h := range report.History {
		if math.Abs(h.Loss) < math.MaxFloat64 {
			pts = append(pts, plotter.XY{X: float64(h.Evaluations), Y: h.Loss})
		}
	}
	if len(pts) == 0 {
		pts = plotter.XYs{{X: 0, Y: 0}}
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	p.Add(line, points, plotter.NewGrid())
	return formats.WriteFileAtomic(path, func(w io.Writer) error {
		wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, "png")
		if err != nil {
			return err
		}
		_, err = wt.WriteTo(w)
		return err
	})
}
