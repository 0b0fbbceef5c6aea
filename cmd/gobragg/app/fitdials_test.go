package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/dials"
	"github.com/gobragg/gobragg/models/formats"
)

// truthCell is seriesModel's -cell: the truth every fit below is judged
// against (an input, not a value of the code's).
var truthCell = map[string]float64{"a": 57, "b": 66, "c": 79, "alpha": 83, "beta": 95, "gamma": 102}

// listCell is the cell of experiment i's crystal in el (at image n of
// its scan), through the same path a fit reads it by.
func listCell(t *testing.T, el *dials.ExperimentList, i, n int, base *models.Model) map[string]float64 {
	t.Helper()
	g, err := el.Geometry(i)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.CellModel(base, n)
	if err != nil {
		t.Fatal(err)
	}
	cr := m.Crystal
	return map[string]float64{"a": cr.CellA, "b": cr.CellB, "c": cr.CellC,
		"alpha": degrees(cr.Alpha), "beta": degrees(cr.Beta), "gamma": degrees(cr.Gamma)}
}

func degrees(r float64) float64 { return r * 180 / math.Pi }

// TestFitFromDIALSList: the DIALS round trip without DIALS. A series
// (noisy miniCBF images, background, triclinic cell, off-centre rotated
// rectangular detector) and its experiment list are made; the list's
// crystal is put 1 % / 1° / 0.5° off with SetCrystal, as an indexer's
// would be; `fit --from-dials` on it must converge to within 4 standard
// errors and 0.05 % / 0.05° of the truth (the series' -cell), and the
// refined.expt it writes must carry the refined cell (fit.json's values)
// and still name the images.
func TestFitFromDIALSList(t *testing.T) {
	if testing.Short() {
		t.Skip("a four-image fit (~20 s)")
	}
	dir := inTemp(t)
	argv := append([]string{"-phi", "0", "-osc", "1", "-seed", "3"}, seriesModel...)
	if err := os.Mkdir("img", 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Series(append(append([]string{"--frames", "4"}, argv...), "-noisefile", "img/image_###.cbf"), &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	el, err := dials.ReadFile("img/image.expt")
	if err != nil {
		t.Fatal(err)
	}
	args, err := models.ParseArgs(seriesModel)
	if err != nil {
		t.Fatal(err)
	}
	base, err := args.Model(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := listCell(t, el, 0, 1, base); math.Abs(got["a"]-57) > 1e-9 || math.Abs(got["gamma"]-102) > 1e-9 {
		t.Fatalf("the series' list does not carry the truth: %v", got)
	}
	// The start: the list's crystal, perturbed.
	g, err := el.Geometry(0)
	if err != nil {
		t.Fatal(err)
	}
	start, err := g.CellModel(base, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"a", 57 * 1.01}, {"b", 66 * 0.99}, {"c", 79 * 1.005}, {"alpha", 83.5}, {"gamma", 101}, {"orient_x", 0.5}, {"orient_z", -0.5}} {
		if start, err = start.With(p.name, p.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := el.SetCrystal(0, start, base); err != nil {
		t.Fatal(err)
	}
	if err := formats.WriteFileAtomic("img/start.expt", func(w io.Writer) error { return el.Write(w) }); err != nil {
		t.Fatal(err)
	}

	out.Reset()
	// An earlier fit's command lines in the output directory: a model
	// from a DIALS list has none, so they go (refined.expt holds it).
	if err := os.MkdirAll("res", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("res", "refined_args.txt"), []byte("gobragg simulate -cell 1 1 1 90 90 90\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fitArgs := append([]string{"--from-dials", "img/start.expt", "--out", "res"}, seriesModel...)
	if err := Fit(fitArgs, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if _, err := os.Stat(filepath.Join("res", "refined_args.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("refined_args.txt after a fit from a DIALS list: %v, want none", err)
	}
	if strings.Contains(out.String(), "refined_args.txt") {
		t.Errorf("the fit names refined_args.txt, which it does not write:\n%s", out.String())
	}
	b2, err := os.ReadFile(filepath.Join("res", "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep FitReport
	if err := json.Unmarshal(b2, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Status != "converged" || len(rep.Images) != 4 {
		t.Fatalf("status %q, %d images\n%s", rep.Status, len(rep.Images), out.String())
	}
	defer func() {
		if t.Failed() {
			t.Log(out.String())
		}
	}()
	got := map[string]float64{}
	for _, p := range rep.Params {
		got[p.Name] = p.Value
		want, ok := truthCell[p.Name]
		if !ok {
			continue
		}
		tol := 0.0005 * want // 0.05 % of a length
		if p.Unit == "deg" {
			tol = 0.05
		}
		if p.StdErr == nil || math.Abs(p.Value-want) > 4**p.StdErr || math.Abs(p.Value-want) > tol {
			se := math.NaN()
			if p.StdErr != nil {
				se = *p.StdErr
			}
			t.Errorf("%s = %.5f ± %.2g, truth %g", p.Name, p.Value, se, want)
		}
	}
	refined, err := dials.ReadFile(filepath.Join("res", "refined.expt"))
	if err != nil {
		t.Fatal(err)
	}
	rc := listCell(t, refined, 0, 1, base)
	for name := range truthCell {
		if math.Abs(rc[name]-got[name]) > 1e-9*math.Abs(got[name]) {
			t.Errorf("refined.expt %s = %.10g, fit.json %.10g", name, rc[name], got[name])
		}
	}
	// The orientation: each refined real-space axis within 0.02° of the
	// truth's (the series' list, read before it was perturbed).
	rg, err := refined.Geometry(0)
	if err != nil {
		t.Fatal(err)
	}
	for k, pair := range [][2][3]float64{{rg.A, g.A}, {rg.B, g.B}, {rg.C, g.C}} {
		cos := dotv(pair[0], pair[1]) / math.Sqrt(dotv(pair[0], pair[0])*dotv(pair[1], pair[1]))
		if ang := degrees(math.Acos(math.Min(1, cos))); ang > 0.02 {
			t.Errorf("refined axis %c is %.4f° off the truth's", "abc"[k], ang)
		}
	}
	if _, err := os.Stat(templatePath(rg.Template, 2)); err != nil || !filepath.IsAbs(rg.Template) {
		t.Errorf("refined.expt's template %q does not name the images (%v); in %s", rg.Template, err, dir)
	}
}
