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
)

// options are a subcommand's own double-dash options, taken out of a
// command line whose other arguments are nanoBragg's (single-dash) flags.
type options struct {
	values map[string]string
	flags  map[string]bool
}

// repeatable are options that may be given more than once: their values
// are joined with commas, as if given as one list.
var repeatable = map[string]bool{"bound": true, "restrain": true}

// splitOptions separates the double-dash options named in withValue (which
// take one value, as "--name value" or "--name=value") and in boolean from
// the nanoBragg arguments. A repeated option's last value wins, but for
// the repeatable ones.
func splitOptions(argv []string, withValue, boolean []string) (*options, []string, error) {
	o := &options{values: map[string]string{}, flags: map[string]bool{}}
	takes := map[string]bool{}
	for _, n := range withValue {
		takes[n] = true
	}
	isBool := map[string]bool{}
	for _, n := range boolean {
		isBool[n] = true
	}
	var rest []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "--") {
			rest = append(rest, a)
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		switch {
		case isBool[name] && !hasVal:
			o.flags[name] = true
		case takes[name]:
			if !hasVal {
				if i+1 >= len(argv) || (strings.HasPrefix(argv[i+1], "-") && !isNumber(argv[i+1])) {
					return nil, nil, usagef("--%s needs a value", name)
				}
				i++
				val = argv[i]
			}
			if prev, ok := o.values[name]; ok && repeatable[name] {
				val = prev + "," + val
			}
			o.values[name] = val
		default:
			return nil, nil, usagef("unknown option %s (options: --%s)", a, strings.Join(append(append([]string{}, withValue...), boolean...), ", --"))
		}
	}
	return o, rest, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", models.ErrUsage, fmt.Sprintf(format, a...))
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
		"beam":        {"xbeam", "ybeam"}, "rot": {"rotx", "roty", "rotz"}, "N": {"Na", "Nb", "Nc"}, "scale": {"fluence"},
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
func lossFrom(o *options, m *models.Model, adc float64) (graph.Loss, error) {
	name := o.values["loss"]
	if name == "" {
		name = "sum"
	}
	kind, err := graph.ParseLoss(name)
	if err != nil {
		return graph.Loss{}, usagef("--loss: %v", err)
	}
	l := graph.Loss{Kind: kind}
	if v := o.values["read-noise"]; v != "" {
		if l.ReadNoise, err = strconv.ParseFloat(v, 64); err != nil || !(l.ReadNoise >= 0) || math.IsInf(l.ReadNoise, 0) {
			return l, usagef("--read-noise %q: want a number of photons ≥ 0", v)
		}
	}
	switch path := o.values["background"]; path {
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
	if path := o.values["observed"]; path != "" {
		if l.Observed, err = readImage(path, m, adc); err != nil {
			return l, fmt.Errorf("--observed: %w", err)
		}
	} else if kind.NeedsObserved() {
		return l, usagef("--loss %s needs --observed FILE", kind)
	}
	n := m.Detector.FPixels * m.Detector.SPixels
	if path := o.values["mask"]; path != "" {
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
	if spec := o.values["roi"]; spec != "" {
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
func objective(o *options, rest []string, spec string, log io.Writer) (obj *graph.Objective, discrete []string, err error) {
	obj, discrete, _, err = objectiveArgs(o, rest, spec, log)
	return obj, discrete, err
}

// objectiveArgs is objective, also returning the parsed nanoBragg flags.
func objectiveArgs(o *options, rest []string, spec string, log io.Writer) (obj *graph.Objective, discrete []string, args *models.Args, err error) {
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
