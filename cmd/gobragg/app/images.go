package app

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/dials"
	"github.com/gobragg/gobragg/models/formats"
)

// countsKind is the format of the integer images: by each file's name
// (miniCBF for .cbf, else SMV), or the one -cbf or a series' --format
// names whatever the names.
type countsKind int

const (
	byName countsKind = iota
	asSMV
	asCBF
)

// kindOf is simulate's countsKind: miniCBF with -cbf, else by name.
func kindOf(cbf bool) countsKind {
	if cbf {
		return asCBF
	}
	return byName
}

// isCBF reports whether an integer image named path goes out as miniCBF.
func isCBF(path string, k countsKind) bool {
	if k == byName {
		return strings.EqualFold(filepath.Ext(path), ".cbf")
	}
	return k == asCBF
}

// CBFHeader is the miniCBF header of a model's image named name: pixel
// size, wavelength, φ and oscillation, and the beam's position on the
// detector (where the beam meets it, in pixels from the first pixel's
// outer corner) with the perpendicular distance. That is exact for a
// detector perpendicular to the beam; for a rotated one a miniCBF header
// cannot say more, and the DIALS experiment list (-expt) gives the exact
// geometry.
func CBFHeader(m *models.Model, name string) formats.CBFHeader {
	d := m.Detector
	A := models.Float{}
	fr := models.Place[float64](A, d, d.Params())
	close := models.Dot[float64](A, fr.Pix0, fr.O)
	b := models.V3[float64](d.Beam)
	t := close / models.Dot[float64](A, b, fr.O)
	var v models.V3[float64]
	for i := range v {
		v[i] = t*b[i] - fr.Pix0[i]
	}
	deg := 180 / 3.141592653589793
	h := formats.CBFHeader{Name: name, PixelM: d.Pixel, DistanceM: close, WavelengthA: m.Beam.Lambda * 1e10,
		BeamXPx: models.Dot[float64](A, v, fr.F) / d.Pixel, BeamYPx: models.Dot[float64](A, v, fr.S) / d.Pixel,
		StartAngleDeg: m.Crystal.Phi * deg, AngleIncrementDeg: m.Osc * deg, ExposureS: 1,
		TwoThetaDeg: d.In.TwoThetaDeg, CountCutoff: 65535}
	if d.Thick {
		h.ThicknessM = d.ThickStep * float64(d.ThickSteps)
	}
	return h
}

// countsWriter writes an integer image (the -intfile or -noisefile
// pixels) named path as SMV with the reference's header or as miniCBF, as
// k says for path.
func countsWriter(path string, m *models.Model, data []uint16, k countsKind) func(io.Writer) error {
	d := m.Detector
	return func(w io.Writer) error {
		if isCBF(path, k) {
			name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
			return formats.WriteCBF(w, CBFHeader(m, name), d.FPixels, d.SPixels, formats.Int32Image(data))
		}
		return formats.WriteSMV(w, m.SMVHeader(), d.FPixels, d.SPixels, data)
	}
}

// intCounts is the -intfile image: photons times scale plus the ADC
// offset, rounded as the reference does, and 0 outside the ROI (where the
// reference leaves it).
func intCounts(img []float32, m *models.Model, scale, adc float64) []uint16 {
	data := formats.IntImage(img, scale, adc)
	roi, fp := m.Detector.ROI, m.Detector.FPixels
	// Row by row: the columns f < roi[0] and f > roi[1] of the rows inside
	// it, every column of the others (a division and a remainder per
	// pixel took as long as the conversion).
	lo, hi := min(max(roi[0], 0), fp), min(max(roi[1]+1, 0), fp)
	for s := 0; s*fp < len(data); s++ {
		row := data[s*fp : (s+1)*fp]
		if s < roi[2] || s > roi[3] {
			clear(row)
			continue
		}
		clear(row[:lo])
		clear(row[hi:])
	}
	return data
}

// readCBFImage is readImage's miniCBF branch: counts less adc.
func readCBFImage(b []byte, path string, fp, sp int, adc float64) ([]float64, error) {
	im, err := formats.ReadCBF(bytes.NewReader(b))
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

// countsFormat names the format writeCounts uses, for messages.
func countsFormat(path string, k countsKind) string {
	if isCBF(path, k) {
		return "miniCBF 4-byte integers"
	}
	return "2-byte integers"
}

// digits is the last run of digits in a file name (before its
// extension), which DIALS reads as the image number.
var digits = regexp.MustCompile(`([0-9]+)([^0-9/]*)$`)

// singleImage turns one image's path into a template and image number
// the way dials.import does (image_001.cbf → image_###.cbf, 1), or the
// path itself and 1 when the name has no number.
func singleImage(path string) (template string, number int) {
	loc := digits.FindStringSubmatchIndex(path)
	if loc == nil {
		return path, 1
	}
	n, err := strconv.Atoi(path[loc[2]:loc[3]])
	if err != nil {
		return path, 1
	}
	return path[:loc[2]] + strings.Repeat("#", loc[3]-loc[2]) + path[loc[3]:], n
}

// writeExpt writes the DIALS experiment list of model m to path: count
// images from number first named by template (a path with '#' for the
// number, or "" for none), written relative to the list's directory.
func writeExpt(o formats.Output, path string, m *models.Model, template string, first, count int) error {
	write, err := exptWriter(path, m, template, first, count)
	if err != nil {
		return err
	}
	return o.WriteFile(path, write)
}

// exptWriter is writeExpt's content: the list is made (and may be
// refused) before anything is written.
func exptWriter(path string, m *models.Model, template string, first, count int) (func(io.Writer) error, error) {
	if template != "" && !formats.IsStdout(path) {
		if abs, err := filepath.Abs(template); err == nil {
			if dir, err := filepath.Abs(filepath.Dir(path)); err == nil {
				if rel, err := filepath.Rel(dir, abs); err == nil {
					template = rel
				}
			}
		}
	}
	el, err := dials.FromModel(m, dials.Images{Template: template, First: first, Count: count})
	if err != nil {
		return nil, err
	}
	return el.Write, nil
}

// exptImage is the image a single simulate run's experiment list points
// at: the noise image, else the integer image, else none (the float image
// is no format DIALS reads).
func exptImage(args *models.Args) string {
	if args.NoiseFile != "" && !formats.IsStdout(args.NoiseFile) {
		return args.NoiseFile
	}
	if args.IntFile != "" && !formats.IsStdout(args.IntFile) {
		return args.IntFile
	}
	return ""
}

// simulateExpt is the -expt file of one simulated image; its lines go to
// log as it is written.
func simulateExpt(args *models.Args, m *models.Model, log io.Writer) (outFile, error) {
	img := exptImage(args)
	template, n := img, 1
	var warn string
	if img != "" && m.Osc != 0 {
		// A rotation image is a one-image sequence (a still, a single file).
		template, n = singleImage(img)
		if template == img {
			warn = fmt.Sprintf("WARNING: dxtbx reads a rotation image only when its name has a number (e.g. %s_001%s)\n",
				strings.TrimSuffix(img, filepath.Ext(img)), filepath.Ext(img))
		}
	}
	write, err := exptWriter(args.ExptFile, m, template, n, 1)
	if err != nil {
		return outFile{}, fmt.Errorf("-expt %s: %w", args.ExptFile, err)
	}
	return outFile{"-expt", args.ExptFile, func(w io.Writer) error {
		io.WriteString(log, warn)
		if img == "" {
			fmt.Fprintf(log, "writing %s: DIALS experiment list (geometry only: no -noisefile or -intfile image for it)\n", args.ExptFile)
		} else {
			fmt.Fprintf(log, "writing %s: DIALS experiment list for %s\n", args.ExptFile, img)
		}
		return write(w)
	}}, nil
}
