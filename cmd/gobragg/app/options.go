package app

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
	"github.com/urfave/cli/v2"
)

// lossOptions are the options of gradcheck and fit that make the loss.
type lossOptions struct {
	Loss       string  // --loss
	Observed   string  // --observed FILE
	Background string  // --background none|FILE (fit's auto is handled by fit)
	Mask       string  // --mask FILE
	ROI        string  // --roi fmin,fmax,smin,smax
	ReadNoise  float64 // --read-noise, photons
}

// lossFlags are the cli flags of lossOptions; loss is --loss's default.
func lossFlags(loss, lossUsage, background string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "loss", Value: loss, Usage: lossUsage},
		&cli.GenericFlag{Name: "observed", Value: &commaList{}, Usage: "observed image `FILE`: SMV (the ADC offset -adc subtracted) " +
			"or raw float32 of the model's size; fit takes several (repeatable, comma lists, globs, templates with # for the frame number)"},
		&cli.StringFlag{Name: "background", Value: background, Usage: "background photons added to the model: " + map[string]string{
			"auto": "auto (estimated from --observed), none, or an image `FILE` (float32, or SMV less -adc)",
			"none": "none, or an image `FILE` (float32, or SMV less -adc)"}[background]},
		&cli.Float64Flag{Name: "read-noise", Usage: "read-out noise σ of the gauss loss, in `PHOTONS`"},
		&cli.StringFlag{Name: "mask", Usage: "image `FILE` whose non-zero pixels are used by the loss"},
		&cli.StringFlag{Name: "roi", Usage: "use only pixels `fmin,fmax,smin,smax` (inclusive)"},
	}
}

// lossOptionsFrom reads lossFlags from a parsed command line.
func lossOptionsFrom(c *cli.Context) lossOptions {
	return lossOptions{Loss: c.String("loss"), Observed: c.Generic("observed").(*commaList).String(), Background: c.String("background"),
		Mask: c.String("mask"), ROI: c.String("roi"), ReadNoise: c.Float64("read-noise")}
}

// paramList reads --params: "all", or a comma list of parameter names or
// groups (misset, orientation, beam, rot, N, cell, scale) of m. Whole-number settings
// (models.DiscreteParams) are returned apart, to be reported.
func paramList(m *models.Model, spec string) ([]string, error) {
	names, _, err := paramLists(m, spec)
	return names, err
}

func paramLists(m *models.Model, spec string) (names, discrete []string, err error) {
	if spec == "" || spec == "all" {
		return m.ParamNames(), nil, nil
	}
	groups := map[string][]string{
		"cell": {"a", "b", "c", "alpha", "beta", "gamma"}, "misset": {"misset_x", "misset_y", "misset_z"},
		"orientation": {"orient_x", "orient_y", "orient_z"},
		"beam":        {"xbeam", "ybeam"}, "detector": {"distance", "xbeam", "ybeam"}, "rot": {"rotx", "roty", "rotz"}, "N": {"Na", "Nb", "Nc"}, "scale": {"fluence"},
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		names := groups[n]
		if names == nil {
			names = []string{n}
		}
		for _, name := range names {
			if _, ok := models.DiscreteParams[name]; ok {
				if !seen[name] {
					seen[name] = true
					discrete = append(discrete, name)
				}
				continue
			}
			if _, err := m.Get(name); err != nil {
				return nil, nil, usagef("--params: %v", err)
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out, discrete, nil
}

// readImage reads an image of the model's size: an SMV or miniCBF file
// (ADU; the ADC offset adc is subtracted, giving photons for the
// reference's noise images) or raw little-endian float32 (a -floatfile).
func readImage(path string, m *models.Model, adc float64) ([]float64, error) {
	b, err := formats.ReadInput(path, formats.MaxImageBytes)
	if err != nil {
		return nil, err
	}
	fp, sp := m.Detector.FPixels, m.Detector.SPixels
	if bytes.HasPrefix(b, []byte("{\nHEADER_BYT")) {
		im, err := formats.ReadSMV(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if im.Width != fp || im.Height != sp {
			return nil, fmt.Errorf("%s is %dx%d pixels, the model %dx%d", path, im.Width, im.Height, fp, sp)
		}
		out := make([]float64, len(im.Data))
		for i, v := range im.Data {
			out[i] = float64(v) - adc
		}
		return out, nil
	}
	if formats.IsCBF(b) {
		return readCBFImage(b, path, fp, sp, adc)
	}
	if len(b) != 4*fp*sp {
		return nil, fmt.Errorf("%s has %d bytes: not an SMV file, nor %dx%d float32 pixels (%d bytes)", path, len(b), fp, sp, 4*fp*sp)
	}
	out := make([]float64, fp*sp)
	for i := range out {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: pixel %d %d is %g", path, i%fp, i/fp, v)
		}
		out[i] = v
	}
	return out, nil
}

// lossFrom builds the loss of --loss, --observed, --mask, --roi,
// --read-noise and --background (none or FILE; auto is fit's, which
// handles it before calling).
func lossFrom(o *lossOptions, m *models.Model, adc float64) (graph.Loss, error) {
	name := o.Loss
	if name == "" {
		name = "sum"
	}
	kind, err := graph.ParseLoss(name)
	if err != nil {
		return graph.Loss{}, usagef("--loss: %v", err)
	}
	l := graph.Loss{Kind: kind}
	if l.ReadNoise = o.ReadNoise; !(l.ReadNoise >= 0) || math.IsInf(l.ReadNoise, 0) {
		return l, usagef("--read-noise %g: want a number of photons ≥ 0", o.ReadNoise)
	}
	switch path := o.Background; path {
	case "", "none", "auto":
	default:
		if l.Background, err = readImage(path, m, adc); err != nil {
			return l, fmt.Errorf("--background: %w", err)
		}
		for i, v := range l.Background {
			if v < 0 {
				return l, fmt.Errorf("--background: pixel %d %d is %g photons: a background cannot be negative", i%m.Detector.FPixels, i/m.Detector.FPixels, v)
			}
		}
	}
	if path := o.Observed; path != "" {
		if l.Observed, err = readImage(path, m, adc); err != nil {
			return l, fmt.Errorf("--observed: %w", err)
		}
	} else if kind.NeedsObserved() {
		return l, usagef("--loss %s needs --observed FILE", kind)
	}
	n := m.Detector.FPixels * m.Detector.SPixels
	if path := o.Mask; path != "" {
		mask, err := readImage(path, m, 0)
		if err != nil {
			return l, fmt.Errorf("--mask: %w", err)
		}
		l.Weights = make([]float64, n)
		for i, v := range mask {
			if v != 0 {
				l.Weights[i] = 1
			}
		}
	}
	if spec := o.ROI; spec != "" {
		var r [4]int
		parts := strings.Split(spec, ",")
		if len(parts) != 4 {
			return l, usagef("--roi %q: want fmin,fmax,smin,smax (pixels, inclusive)", spec)
		}
		for i, p := range parts {
			if r[i], err = strconv.Atoi(strings.TrimSpace(p)); err != nil {
				return l, usagef("--roi %q: %q is not a whole number", spec, p)
			}
		}
		fp, sp := m.Detector.FPixels, m.Detector.SPixels
		if r[0] < 0 || r[1] >= fp || r[0] > r[1] || r[2] < 0 || r[3] >= sp || r[2] > r[3] {
			return l, usagef("--roi %q: outside the %dx%d detector or empty", spec, fp, sp)
		}
		if l.Weights == nil {
			l.Weights = make([]float64, n)
			for i := range l.Weights {
				l.Weights[i] = 1
			}
		}
		for i := range l.Weights {
			if f, s := i%fp, i/fp; f < r[0] || f > r[1] || s < r[2] || s > r[3] {
				l.Weights[i] = 0
			}
		}
	}
	return l, nil
}

// steps reads --step name=value[,name=value…] over the defaults.
func steps(spec string, names []string, x []float64) (map[string]float64, error) {
	out := map[string]float64{}
	for i, n := range names {
		p, _ := models.LookupParam(n)
		out[n] = p.StepAt(x[i])
	}
	if spec == "" {
		return out, nil
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usagef("--step %q: want name=value", kv)
		}
		k = strings.TrimSpace(k)
		if _, known := out[k]; !known {
			return nil, usagef("--step: %s is not among the checked parameters", k)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return nil, usagef("--step %s=%s: want a positive number", k, v)
		}
		out[k] = f
	}
	return out, nil
}

// objective builds what gradcheck and fit work on: the model of the
// nanoBragg flags rest, the loss of the options o over the parameters
// spec names (--params, --refine), and the whole-number settings spec
// named, which have no gradient.
func objective(o *lossOptions, rest []string, spec string, log io.Writer) (obj *graph.Objective, discrete []string, err error) {
	obj, discrete, _, err = objectiveArgs(o, rest, spec, log)
	return obj, discrete, err
}

// objectiveArgs is objective, also returning the parsed nanoBragg flags.
func objectiveArgs(o *lossOptions, rest []string, spec string, log io.Writer) (obj *graph.Objective, discrete []string, args *models.Args, err error) {
	args, err = models.ParseArgs(rest)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := args.Model(log)
	if err != nil {
		return nil, nil, nil, err
	}
	names, discrete, err := paramLists(m, spec)
	if err != nil {
		return nil, nil, nil, err
	}
	loss, err := lossFrom(o, m, args.ADC)
	if err != nil {
		return nil, nil, nil, err
	}
	obj, err = graph.NewObjective(m, names, loss)
	return obj, discrete, args, err
}
