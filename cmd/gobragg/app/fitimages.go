package app

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/graph/fit"
	"github.com/gobragg/gobragg/graph/fit/spots"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
)

// FitComm, when set (gobragg built with -tags mpi sets it to the MPI
// world), spreads a fit's images over processes; only rank 0 prints and
// writes.
var FitComm fit.Comm

// fitInput is one observed image of a fit and the model it is fitted
// with.
type fitInput struct {
	file   string
	argv   []string // the image's nanoBragg flags
	phi    float64  // φ start and oscillation (degrees) from its header, NaN if none
	osc    float64
	obj    *graph.Objective
	found  *spots.Result
	boxes  []spots.Box
	pixels int     // fitted
	bgMean float64 // over the fitted pixels
}

// expandObserved lists the observed images of a comma list: each item is
// a file, a glob (* ? [) or a template whose run of # stands for the frame
// number (the files that exist, in frame order).
func expandObserved(spec string) ([]string, error) {
	var out []string
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		switch {
		case strings.Contains(item, "#"):
			run := regexp.MustCompile(`#+`)
			loc := run.FindStringIndex(item)
			n := loc[1] - loc[0]
			glob := item[:loc[0]] + strings.Repeat("[0-9]", n) + item[loc[1]:]
			files, err := filepath.Glob(glob)
			if err != nil {
				return nil, usagef("--observed %q: %v", item, err)
			}
			num := func(f string) int {
				v, _ := strconv.Atoi(f[len(f)-len(item)+loc[0] : len(f)-len(item)+loc[1]])
				return v
			}
			sort.Slice(files, func(i, j int) bool { return num(files[i]) < num(files[j]) })
			if len(files) == 0 {
				return nil, fmt.Errorf("--observed %q: no file matches", item)
			}
			out = append(out, files...)
		case strings.ContainsAny(item, "*?["):
			files, err := filepath.Glob(item)
			if err != nil {
				return nil, usagef("--observed %q: %v", item, err)
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("--observed %q: no file matches", item)
			}
			sort.Strings(files)
			out = append(out, files...)
		default:
			out = append(out, item)
		}
	}
	if len(out) == 0 {
		return nil, usagef("fit needs --observed FILE (SMV .img or float32 image)")
	}
	return out, nil
}

// smvPhi reads the φ start and oscillation (degrees) from an SMV file's
// header (PHI, or OSC_START, and OSC_RANGE); ok is false for other files
// or without them.
func smvPhi(path string) (phi, osc float64, ok bool) {
	f, err := formats.OpenInput(path, formats.MaxImageBytes)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	im, err := formats.ReadSMV(f)
	if err != nil {
		return 0, 0, false
	}
	phi, _ = im.Value("PHI")
	if math.IsNaN(phi) {
		phi, _ = im.Value("OSC_START")
	}
	osc, _ = im.Value("OSC_RANGE")
	return phi, osc, !math.IsNaN(phi) && !math.IsNaN(osc)
}

// perImageNames reads --per-image: names and groups (as --refine's, with
// orient for orientation) that must be among the refined names.
func perImageNames(m *models.Model, spec string, refined []string) ([]string, error) {
	if spec == "" {
		return nil, nil
	}
	spec = strings.ReplaceAll(spec, "orient,", "orientation,")
	if strings.HasSuffix(spec, "orient") {
		spec += "ation"
	}
	names, _, err := paramLists(m, spec)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if !contains(refined, n) {
			return nil, usagef("--per-image %s: not refined (--refine %s)", n, strings.Join(refined, ","))
		}
	}
	return names, nil
}

// fitInputs builds the fit's images: for each observed file, the model
// of the nanoBragg flags rest (for a series of several SMV images, with
// -phi and -osc from each image's header), its loss, spots and
// background, over the shared parameters followed by the per-image ones.
func fitInputs(lo *lossOptions, files []string, rest []string, refine, perSpec string, pix fit.Pixels, overloadSet bool,
	log io.Writer) (inputs []*fitInput, shared, per []string, args *models.Args, err error) {
	for k, file := range files {
		in := &fitInput{file: file, argv: rest, phi: math.NaN(), osc: math.NaN()}
		if len(files) > 1 {
			if phi, osc, ok := smvPhi(file); ok {
				in.phi, in.osc = phi, osc
				in.argv = models.ReplaceFlag(in.argv, "-phi", []string{strconv.FormatFloat(phi, 'g', -1, 64)})
				in.argv = models.ReplaceFlag(in.argv, "-osc", []string{strconv.FormatFloat(osc, 'g', -1, 64)})
			}
		}
		l := *lo
		l.Observed = file
		a, err := models.ParseArgs(in.argv)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		m, err := a.Model(log)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if k == 0 {
			args = a
			names, discrete, err := paramLists(m, refine)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			if len(discrete) > 0 {
				return nil, nil, nil, nil, usagef("--refine %s: %s", discrete[0], models.DiscreteParams[discrete[0]])
			}
			if per, err = perImageNames(m, perSpec, names); err != nil {
				return nil, nil, nil, nil, err
			}
			for _, n := range names {
				if !contains(per, n) {
					shared = append(shared, n)
				}
			}
		}
		loss, err := lossFrom(&l, m, a.ADC)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if in.obj, err = graph.NewObjective(m, append(append([]string{}, shared...), per...), loss); err != nil {
			return nil, nil, nil, nil, err
		}
		p := pix
		if !overloadSet && isSMV(file) {
			p.Overload = 65535 - a.ADC
		}
		in.found, in.boxes, err = fit.Prepare(&in.obj.Loss, m.Detector.FPixels, m.Detector.SPixels, p)
		if err != nil {
			if in.found != nil {
				return nil, nil, nil, nil, fmt.Errorf("--spots auto: %v on %s; try --spots all", err, file)
			}
			return nil, nil, nil, nil, fmt.Errorf("--observed %s: %w", file, err)
		}
		var bg float64
		for i := range in.obj.Loss.Observed {
			if w := in.obj.Loss.Weights; w == nil || w[i] != 0 {
				in.pixels++
				if in.obj.Loss.Background != nil {
					bg += in.obj.Loss.Background[i]
				}
			}
		}
		if in.pixels > 0 {
			in.bgMean = bg / float64(in.pixels)
		}
		inputs = append(inputs, in)
	}
	return inputs, shared, per, args, nil
}

// quiet returns where a rank other than 0 writes: nowhere.
func quiet(w io.Writer) io.Writer {
	if FitComm != nil && FitComm.Rank() != 0 {
		return io.Discard
	}
	return w
}

// writes reports whether this process writes the fit's files.
func writes() bool { return FitComm == nil || FitComm.Rank() == 0 }
