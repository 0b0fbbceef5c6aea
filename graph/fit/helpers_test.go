package fit

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/graph/fit/spots"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
	"github.com/gobragg/gobragg/physics"
)

// model builds the model of a nanoBragg command line (in a scratch
// directory: reading -hkl writes Fdump.bin).
func model(t testing.TB, argv ...string) *models.Model {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	a, err := models.ParseArgs(argv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Model(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func image(t testing.TB, m *models.Model) []float64 {
	t.Helper()
	s, err := graph.New(m)
	if err != nil {
		t.Fatal(err)
	}
	img, err := s.Image()
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// refArgs is the crystal, beam and detector of the reference-made images
// in testdata/fitdata (see its README): the truth of those fits.
func refArgs(fluence string) []string {
	return strings.Fields("-cell 64 77 83 81 87 99 -misset 12 -7 31 -default_F 100 -N 6 -lambda 1.2 " +
		"-distance 90 -pixel 0.1 -detpixels 256 -oversample 1 -fluence " + fluence)
}

// fitdata reads a gzipped file of testdata/fitdata.
func fitdata(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("../../testdata/fitdata", name+".gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// referenceImage is a reference-made SMV image of testdata/fitdata in
// photons (less the ADC offset of 40).
func referenceImage(t testing.TB, name string) []float64 {
	t.Helper()
	im, err := formats.ReadSMV(bytes.NewReader(fitdata(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(im.Data))
	for i, v := range im.Data {
		out[i] = float64(v) - 40
	}
	return out
}

// referenceBackground is the background of background_001.img alone
// (float32 photons per pixel).
func referenceBackground(t testing.TB) []float64 {
	b := fitdata(t, "background_true.bin")
	out := make([]float64, len(b)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return out
}

// noisy is a Poisson image of m's image plus bg (nil: none), drawn with
// the reference's generator and seed.
func noisy(t testing.TB, m *models.Model, bg []float64, seed int64) []float64 {
	img := image(t, m)
	f32 := make([]float32, len(img))
	for i, v := range img {
		if bg != nil {
			v += bg[i]
		}
		f32[i] = float32(v)
	}
	data, _, _ := physics.NoiseImage(f32, m.Detector.FPixels, m.Detector.ROI, 0, seed)
	out := make([]float64, len(data))
	for i, v := range data {
		out[i] = float64(v)
	}
	return out
}

// prepared is the loss the fit command sets up by default: spots boxes
// of 10² and the estimated background.
func prepared(t testing.TB, m *models.Model, kind graph.LossKind, obs []float64) (graph.Loss, []spots.Box) {
	t.Helper()
	l := graph.Loss{Kind: kind, Observed: obs}
	_, boxes, err := Prepare(&l, m.Detector.FPixels, m.Detector.SPixels, Pixels{Background: true})
	if err != nil {
		t.Fatal(err)
	}
	return l, boxes
}

// with returns m with the named parameters changed by the offsets: a
// fraction of the value for lengths and the fluence, an addition for
// the rest.
func with(t testing.TB, m *models.Model, names []string, offsets []float64) *models.Model {
	t.Helper()
	for i, n := range names {
		v, _ := m.Get(n)
		switch n {
		case "a", "b", "c", "fluence":
			v *= 1 + offsets[i]
		default:
			v += offsets[i]
		}
		var err error
		if m, err = m.With(n, v); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

var cellOrient = []string{"a", "b", "c", "alpha", "beta", "gamma", "orient_x", "orient_y", "orient_z"}
