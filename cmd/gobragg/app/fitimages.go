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
	"github.com/gobragg/gobragg/models/dials"
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
// or without them. A value given but not a finite angle within
// models.MaxAngleDeg (-phi's and -osc's bound) is an error naming the
// file.
func smvPhi(path string) (phi, osc float64, ok bool, err error) {
	f, err := formats.OpenInput(path, formats.MaxImageBytes)
	if err != nil {
		return 0, 0, false, nil
	}
	defer f.Close()
	im, err := formats.ReadSMV(f)
	if err != nil {
		return 0, 0, false, nil
	}
	get := func(key string) (float64, error) {
		v, given := im.Value(key)
		if given && !(math.Abs(v) <= models.MaxAngleDeg) {
			return 0, fmt.Errorf("--observed %s: header %s = %g: want a finite angle of at most %g degrees", path, key, v, float64(models.MaxAngleDeg))
		}
		return v, nil
	}
	if phi, err = get("PHI"); err == nil && math.IsNaN(phi) {
		phi, err = get("OSC_START")
	}
	if err == nil {
		osc, err = get("OSC_RANGE")
	}
	if err != nil {
		return 0, 0, false, err
	}
	return phi, osc, !math.IsNaN(phi) && !math.IsNaN(osc), nil
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
	var grid *formats.HKLGrid // the first image's structure factors
	for k, file := range files {
		in := &fitInput{file: file, argv: rest, phi: math.NaN(), osc: math.NaN()}
		if len(files) > 1 {
			phi, osc, ok, err := smvPhi(file)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			if ok {
				in.phi, in.osc = phi, osc
				in.argv = models.ReplaceFlag(in.argv, "-phi", []string{strconv.FormatFloat(phi, 'g', -1, 64)})
				in.argv = models.ReplaceFlag(in.argv, "-osc", []string{strconv.FormatFloat(osc, 'g', -1, 64)})
			}
		}
		l := *lo
		a, err := models.ParseArgs(in.argv)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if k > 0 {
			// The images differ only in φ: they share the first one's
			// structure factors (read once, and filled once per default F
			// in the kernels).
			a.HKLGrid = grid
		}
		m, err := a.Model(log)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if k == 0 {
			grid = m.Crystal.HKL
			// Before any image is read.
			if err := checkFitMemory(m, a, len(files)); err != nil {
				return nil, nil, nil, nil, err
			}
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
		pin, err := prepareInput(&l, file, in.argv, m, a, shared, per, pix, overloadSet)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		pin.phi, pin.osc = in.phi, in.osc
		inputs = append(inputs, pin)
	}
	return inputs, shared, per, args, nil
}

// prepareInput reads an observed image for model m (its flags argv, a
// their parsed form) and sets up its objective over shared and per, its
// spots, boxes and background.
func prepareInput(lo *lossOptions, file string, argv []string, m *models.Model, a *models.Args, shared, per []string, pix fit.Pixels,
	overloadSet bool) (*fitInput, error) {
	in := &fitInput{file: file, argv: argv}
	l := *lo
	l.Observed = file
	loss, err := lossFrom(&l, m, a.ADC)
	if err != nil {
		return nil, err
	}
	if in.obj, err = graph.NewObjective(m, append(append([]string{}, shared...), per...), loss); err != nil {
		return nil, err
	}
	p := pix
	if !overloadSet && isSMV(file) {
		p.Overload = 65535 - a.ADC
	}
	in.found, in.boxes, err = fit.Prepare(&in.obj.Loss, m.Detector.FPixels, m.Detector.SPixels, p)
	if err != nil {
		if in.found != nil {
			return nil, fmt.Errorf("--spots auto: %v on %s; try --spots all", err, file)
		}
		return nil, fmt.Errorf("--observed %s: %w", file, err)
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
	return in, nil
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

// fromDIALS is what a fit started from a DIALS experiment list keeps to
// write refined.expt: the list, its directory, the base model the images'
// models were made from, and which experiment each image belongs to.
type fromDIALS struct {
	list       *dials.ExperimentList
	dir        string
	base       *models.Model
	experiment []int // per image
}

// dialsInputs builds the fit's images from a DIALS experiment list: per
// experiment, its images (a scan's, from the image set's template, or a
// still's), each image's model the list's geometry for it
// (dials.Geometry.CellModel: a -cell crystal with a misset, so that the
// cell can be refined) on the base model of the nanoBragg flags rest
// (what a list does not describe: structure factors, N, fluence, φ steps,
// oversampling …). The
// shared parameters start at the first image's values. Per image by
// default: nothing for one experiment (a rotation series is one crystal),
// the orientation for several (stills, each a crystal of its own).
// observed, when not empty, replaces the images' files (one per image).
func dialsInputs(path string, lo *lossOptions, observed []string, rest []string, refine, perSpec string, pix fit.Pixels,
	overloadSet bool, log io.Writer) (inputs []*fitInput, shared, per []string, args *models.Args, fd *fromDIALS, err error) {
	el, err := dials.ReadFile(path)
	if err != nil {
		return nil, nil, nil, nil, nil, fmt.Errorf("--from-dials: %w", err)
	}
	if len(el.Experiments) == 0 {
		return nil, nil, nil, nil, nil, fmt.Errorf("--from-dials: %s: the list has no experiments", path)
	}
	fd = &fromDIALS{list: el, dir: filepath.Dir(path)}
	// A crystal for the base model: the list's replaces it.
	argv := rest
	if args0, err := models.ParseArgs(rest); err == nil && args0.MatFile == "" && !hasFlag(rest, "-cell") {
		argv = append(append([]string{}, rest...), "-cell", "100", "100", "100", "90", "90", "90")
	}
	if args, err = models.ParseArgs(argv); err != nil {
		return nil, nil, nil, nil, nil, err
	}
	if fd.base, err = args.Model(log); err != nil {
		return nil, nil, nil, nil, nil, err
	}
	type image struct {
		exp, n int
		file   string
	}
	var images []image
	used := map[int]int{} // image set → its stills taken so far
	geoms := make([]*dials.Geometry, len(el.Experiments))
	for i, e := range el.Experiments {
		g, err := el.Geometry(i)
		if err != nil {
			return nil, nil, nil, nil, nil, fmt.Errorf("--from-dials: %w", err)
		}
		if !g.HasCrystal {
			return nil, nil, nil, nil, nil, fmt.Errorf("--from-dials: experiment %d has no crystal: index the images first", i)
		}
		geoms[i] = g
		if len(images) > dials.MaxScanImages {
			return nil, nil, nil, nil, nil, fmt.Errorf("--from-dials: %s names more than %d images", path, dials.MaxScanImages)
		}
		switch {
		case g.HasScan && g.Template != "":
			for n := g.First; n <= g.Last; n++ {
				images = append(images, image{i, n, relTo(fd.dir, templatePath(g.Template, n))})
			}
		case len(g.Images) > 0:
			k := 0
			if e.ImageSet != nil {
				k = used[*e.ImageSet]
				used[*e.ImageSet]++
			}
			if k >= len(g.Images) {
				k = len(g.Images) - 1
			}
			images = append(images, image{i, 0, relTo(fd.dir, g.Images[k])})
		default:
			return nil, nil, nil, nil, nil, fmt.Errorf("--from-dials: experiment %d names no image", i)
		}
	}
	if len(observed) > 0 {
		if len(observed) != len(images) {
			return nil, nil, nil, nil, nil, usagef("--observed: %d images for the list's %d", len(observed), len(images))
		}
		for k := range images {
			images[k].file = observed[k]
		}
	}
	// The whole fit's memory, before any image is read: the images'
	// geometry is the list's, their structure factors the base model's,
	// shared.
	m0, err := geoms[images[0].exp].CellModel(fd.base, images[0].n)
	if err != nil {
		return nil, nil, nil, nil, nil, fmt.Errorf("--from-dials: image 1: %w", err)
	}
	if err := checkFitMemory(m0, args, len(images)); err != nil {
		return nil, nil, nil, nil, nil, err
	}
	if perSpec == "" && len(el.Experiments) > 1 {
		perSpec = "orientation"
	}
	var cell *models.Crystal // the first image's, shared
	for k, im := range images {
		g := geoms[im.exp]
		mm, err := g.CellModel(fd.base, im.n)
		if err != nil {
			return nil, nil, nil, nil, nil, fmt.Errorf("--from-dials: image %d: %w", k+1, err)
		}
		cr := mm.Crystal
		if cell == nil {
			cell = cr
		} else {
			cr.CellA, cr.CellB, cr.CellC, cr.Alpha, cr.Beta, cr.Gamma = cell.CellA, cell.CellB, cell.CellC, cell.Alpha, cell.Beta, cell.Gamma
		}
		if err := mm.Validate(); err != nil {
			return nil, nil, nil, nil, nil, fmt.Errorf("--from-dials: image %d: %w", k+1, err)
		}
		if k == 0 {
			names, discrete, err := paramLists(mm, refine)
			if err != nil {
				return nil, nil, nil, nil, nil, err
			}
			if len(discrete) > 0 {
				return nil, nil, nil, nil, nil, usagef("--refine %s: %s", discrete[0], models.DiscreteParams[discrete[0]])
			}
			if per, err = perImageNames(mm, perSpec, names); err != nil {
				return nil, nil, nil, nil, nil, err
			}
			for _, n := range names {
				if !contains(per, n) {
					shared = append(shared, n)
				}
			}
		}
		in, err := prepareInput(lo, im.file, nil, mm, args, shared, per, pix, overloadSet)
		if err != nil {
			return nil, nil, nil, nil, nil, err
		}
		in.phi, in.osc = math.NaN(), math.NaN()
		if g.HasScan {
			in.phi, in.osc = g.PhiDeg(im.n), g.OscDeg
		}
		inputs = append(inputs, in)
		fd.experiment = append(fd.experiment, im.exp)
	}
	return inputs, shared, per, args, fd, nil
}

// hasFlag reports whether argv holds flag.
func hasFlag(argv []string, flag string) bool {
	for _, a := range argv {
		if a == flag {
			return true
		}
	}
	return false
}

// templatePath is a DIALS template's file name for image n: its run of
// '#' replaced by n with leading zeros.
func templatePath(t string, n int) string {
	i := strings.IndexByte(t, '#')
	if i < 0 {
		return t
	}
	j := i
	for j < len(t) && t[j] == '#' {
		j++
	}
	return fmt.Sprintf("%s%0*d%s", t[:i], j-i, n, t[j:])
}

// writeRefinedExpt writes the list with each experiment's crystal
// refined (the first image of the experiment's model at the fit's end),
// its detector and wavelength too when refined (names), and its image
// paths made absolute, as path.
func (fd *fromDIALS) writeRefinedExpt(path string, finals []*models.Model, names []string) error {
	detector, wavelength := false, contains(names, "lambda")
	for _, n := range names {
		switch n {
		case "distance", "close_distance", "xbeam", "ybeam", "rotx", "roty", "rotz", "twotheta":
			detector = true
		}
	}
	done := map[int]bool{}
	for k, exp := range fd.experiment {
		if done[exp] {
			continue
		}
		done[exp] = true
		if err := fd.list.SetCrystal(exp, finals[k], fd.base); err != nil {
			return err
		}
		if detector {
			if err := fd.list.SetDetector(exp, finals[k], fd.base); err != nil {
				return err
			}
		}
		if wavelength {
			if err := fd.list.SetWavelength(exp, finals[k]); err != nil {
				return err
			}
		}
	}
	for i := range fd.list.ImageSets {
		s := &fd.list.ImageSets[i]
		if s.Template != "" {
			s.Template = relTo(absDir(fd.dir), s.Template)
		}
		for j, f := range s.Images {
			s.Images[j] = relTo(absDir(fd.dir), f)
		}
	}
	return formats.WriteFileAtomic(path, func(w io.Writer) error { return fd.list.Write(w) })
}

// relTo is path p of a list in directory dir: p itself when absolute,
// else joined to dir (DIALS names files relative to the list).
func relTo(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

func absDir(d string) string {
	if a, err := filepath.Abs(d); err == nil {
		return a
	}
	return d
}
