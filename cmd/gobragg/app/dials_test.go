package app

import (
	"bytes"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/dials"
)

// needDIALS skips a test without DIALS (Debian's dials package: its
// dials.* commands and cctbx.python, whose python has dxtbx) or with -short.
func needDIALS(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("DIALS runs take a while: skipped with -short")
	}
	for _, c := range []string{"dials.import", "dials.find_spots", "dials.index", "cctbx.python"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not on PATH (install Debian's dials)", c)
		}
	}
}

func runIn(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// dialsSeries is the brief's series: an off-centre beam on a rectangular
// detector swung by 15° of two-theta and turned 3° about the beam, the
// triclinic crystal of ../shared/fitdata's series (1° images of 5 φ
// steps, water background).
var dialsSeries = []string{"-cell", "57", "66", "79", "83", "95", "102", "-misset", "25", "-12", "40", "-default_F", "100",
	"-N", "8", "-lambda", "1.0", "-distance", "120", "-pixel", "0.1", "-detpixels_f", "1024", "-detpixels_s", "768",
	"-Xbeam", "40", "-Ybeam", "60", "-twotheta", "15", "-detector_rotx", "3", "-oversample", "1",
	"-osc", "1", "-phisteps", "5", "-fluence", "1e29", "-water", "0.012", "-seed", "201"}

// indexedSeries writes a gobragg series of frames dialsSeries images
// (miniCBF, with its experiment list series.expt) in a temporary
// directory and has DIALS find its spots and index it: the directory, the
// truth's geometry, the indexed one and dials.index's output.
func indexedSeries(t *testing.T, frames int) (dir string, truth, indexed *dials.Geometry, idx string) {
	t.Helper()
	dir = t.TempDir()
	var out bytes.Buffer
	argv := append([]string{"--frames", strconv.Itoa(frames), "--expt", filepath.Join(dir, "series.expt")}, dialsSeries...)
	argv = append(argv, "-noisefile", filepath.Join(dir, "image_###.cbf"))
	if err := Series(argv, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	runIn(t, dir, "dials.import", "template=image_###.cbf", "output.experiments=imported.expt")
	fs := runIn(t, dir, "dials.find_spots", "series.expt", "nproc=2")
	idx = runIn(t, dir, "dials.index", "series.expt", "strong.refl")
	t.Logf("dials.find_spots: %s", lastLine(fs, "Saved"))
	truthList, err := dials.ReadFile(filepath.Join(dir, "series.expt"))
	if err != nil {
		t.Fatal(err)
	}
	if truth, err = truthList.Geometry(0); err != nil {
		t.Fatal(err)
	}
	indexedList, err := dials.ReadFile(filepath.Join(dir, "indexed.expt"))
	if err != nil {
		t.Fatal(err)
	}
	if indexed, err = indexedList.Geometry(0); err != nil {
		t.Fatal(err)
	}
	return dir, truth, indexed, idx
}

// inBasisOf is the truth's lattice in the basis closest to vectors v:
// DIALS may choose another basis of the same lattice, so v is expressed
// in the true vectors, rounded to whole numbers and rebuilt from them.
func inBasisOf(truth *dials.Geometry, v [3][3]float64) [3][3]float64 {
	tv := [3][3]float64{truth.A, truth.B, truth.C}
	inv := inverse3(tv)
	var same [3][3]float64
	for j := 0; j < 3; j++ {
		for k := 0; k < 3; k++ {
			c := math.Round(inv[0][k]*v[j][0] + inv[1][k]*v[j][1] + inv[2][k]*v[j][2])
			for i := 0; i < 3; i++ {
				same[j][i] += c * tv[k][i]
			}
		}
	}
	return same
}

// TestDIALSIndexesSeries: DIALS finds the spots of a 10-image miniCBF
// series through its experiment list and indexes the true cell (that of
// the crystal's real-space vectors: the reference's -cell construction
// leaves 83 95 102 as 82.9876 95.0089 102.002) to 0.1 % in lengths and
// angles. dials.import of the images alone reads the beam position and
// distance of the CBF headers.
func TestDIALSIndexesSeries(t *testing.T) {
	needDIALS(t)
	_, truth, indexed, idx := indexedSeries(t, 10)
	iv := [3][3]float64{indexed.A, indexed.B, indexed.C}
	want, got := cellOf(inBasisOf(truth, iv)), cellOf(iv)
	t.Logf("true cell    %.4f", want)
	t.Logf("indexed cell %.4f", got)
	for i := range want {
		if rel := math.Abs(got[i]-want[i]) / want[i]; rel > 1e-3 {
			t.Errorf("cell parameter %d: indexed %.4f, true %.4f (%.3f %%)", i, got[i], want[i], 100*rel)
		}
	}
	// The indexed list reads into a model of the same experiment: its
	// image of image 1 overlaps the truth's (DIALS refined the detector
	// and beam as it indexed, and its φ is the start of each image).
	a, err := models.ParseArgs(dialsSeries)
	if err != nil {
		t.Fatal(err)
	}
	base, err := a.Model(nil)
	if err != nil {
		t.Fatal(err)
	}
	fromDIALS, err := indexed.Model(base, 1)
	if err != nil {
		t.Fatalf("indexed.expt as a model: %v", err)
	}
	r1, err := renderModel(base, 0, io.Discard, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r2, err := renderModel(fromDIALS, 0, io.Discard, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	corr := correlation(r1.Image, r2.Image)
	t.Logf("image 1 from indexed.expt against the truth: correlation %.4f", corr)
	if corr < 0.5 {
		t.Errorf("the model read from indexed.expt renders an image of correlation %.3f with the truth's", corr)
	}
	pct := regexp.MustCompile(`\|\s*0\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*([0-9.]+)%`).FindAllStringSubmatch(idx, -1)
	if len(pct) == 0 {
		t.Fatalf("no indexing table in dials.index's output:\n%s", idx)
	}
	last := pct[len(pct)-1]
	t.Logf("dials.index: %s indexed, %s unindexed (%s%%)", last[1], last[2], last[3])
	if p, _ := strconv.ParseFloat(last[3], 64); p < 80 {
		t.Errorf("only %s%% indexed", last[3])
	}
}

// TestDxtbxReadsSingleImageGeometry: dxtbx reads the experiment list of
// one image with an off-centre beam on a rectangular detector as the
// beam at pixel (600.5, 400.5) (-Xbeam 40 -Ybeam 60 mm are MOSFLM's slow
// and fast beam centre, measured to the first pixel's centre) and the
// distance 120 mm: the SMV header's geometry, which dxtbx reads as
// (401, 425).
func TestDxtbxReadsSingleImageGeometry(t *testing.T) {
	needDIALS(t)
	dir := t.TempDir()
	argv := []string{"-cell", "57", "66", "79", "83", "95", "102", "-default_F", "100", "-N", "3", "-lambda", "1",
		"-distance", "120", "-pixel", "0.1", "-detpixels_f", "1024", "-detpixels_s", "768", "-Xbeam", "40", "-Ybeam", "60",
		"-oversample", "1", "-osc", "1", "-seed", "1",
		"-noisefile", filepath.Join(dir, "one_001.cbf"), "-expt", filepath.Join(dir, "one.expt"), "-floatfile", os.DevNull}
	if err := Simulate(argv, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	script := `
from dxtbx.model.experiment_list import ExperimentListFactory
for name in ("one.expt",):
    e = ExperimentListFactory.from_json_file(name)[0]
    p = e.detector[0]
    x, y = p.get_beam_centre_px(e.beam.get_s0())
    print("%.12f %.12f %.12f %d" % (x, y, p.get_distance(), len(e.imageset)))
`
	fields := strings.Fields(runIn(t, dir, "cctbx.python", "-c", script))
	if len(fields) != 4 {
		t.Fatalf("dxtbx printed %q", fields)
	}
	want := []float64{600.5, 400.5, 120, 1}
	for i, w := range want {
		if v, _ := strconv.ParseFloat(fields[i], 64); math.Abs(v-w) > 1e-9 {
			t.Errorf("dxtbx reads %s, want %g (beam x px, beam y px, distance mm, images)", fields[i], w)
		}
	}
	t.Logf("dxtbx: beam at (%s, %s) px, distance %s mm", fields[0], fields[1], fields[2])
}

func correlation(a, b []float32) float64 {
	var sa, sb, saa, sbb, sab float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		sa, sb, saa, sbb, sab = sa+x, sb+y, saa+x*x, sbb+y*y, sab+x*y
	}
	n := float64(len(a))
	return (sab - sa*sb/n) / math.Sqrt((saa-sa*sa/n)*(sbb-sb*sb/n))
}

func lastLine(s, prefix string) string {
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.HasPrefix(l, prefix) {
			s = l
		}
	}
	return s
}

// cellOf returns a, b, c (Å) and α, β, γ (degrees) of three vectors (m).
func cellOf(v [3][3]float64) [6]float64 {
	l := func(x [3]float64) float64 { return math.Sqrt(dotv(x, x)) }
	ang := func(x, y [3]float64) float64 { return math.Acos(dotv(x, y)/(l(x)*l(y))) * 180 / math.Pi }
	return [6]float64{l(v[0]) * 1e10, l(v[1]) * 1e10, l(v[2]) * 1e10, ang(v[1], v[2]), ang(v[2], v[0]), ang(v[0], v[1])}
}

// inverse3 inverts the matrix whose rows are v: the result's columns are
// the reciprocal vectors (w[i][k] is component i of the k-th).
func inverse3(v [3][3]float64) [3][3]float64 {
	cross := func(x, y [3]float64) [3]float64 {
		return [3]float64{x[1]*y[2] - x[2]*y[1], x[2]*y[0] - x[0]*y[2], x[0]*y[1] - x[1]*y[0]}
	}
	r := [3][3]float64{cross(v[1], v[2]), cross(v[2], v[0]), cross(v[0], v[1])}
	vol := dotv(v[0], r[0])
	var w [3][3]float64
	for k := 0; k < 3; k++ {
		for i := 0; i < 3; i++ {
			w[i][k] = r[k][i] / vol
		}
	}
	return w
}

// TestDIALSThenFit is the DIALS → gobragg → DIALS round trip: a 10-image
// series indexed by DIALS is refined by `fit --from-dials indexed.expt`
// (cell, orientation, distance and beam centre; one start, DIALS's, to
// keep the test short); the refined.expt it
// writes must hold a crystal within 0.05 % of the truth's real-space cell
// (lengths; angles within 0.05°) and a detector within 0.02 mm of the
// truth's distance, and dials.integrate must integrate with it.
func TestDIALSThenFit(t *testing.T) {
	needDIALS(t)
	dir, truth, indexed, _ := indexedSeries(t, 10)
	var out bytes.Buffer
	argv := append([]string{"--from-dials", filepath.Join(dir, "indexed.expt"), "--refine", "cell,orientation,detector",
		"--starts", "1", "--out", filepath.Join(dir, "fit")}, dialsSeries...)
	if err := Fit(argv, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	refined, err := dials.ReadFile(filepath.Join(dir, "fit", "refined.expt"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := refined.Geometry(0)
	if err != nil {
		t.Fatal(err)
	}
	iv := [3][3]float64{indexed.A, indexed.B, indexed.C}
	rv := [3][3]float64{g.A, g.B, g.C}
	want, start, got := cellOf(inBasisOf(truth, rv)), cellOf(iv), cellOf(rv)
	t.Logf("true cell    %.4f", want)
	t.Logf("indexed cell %.4f", start)
	t.Logf("refined cell %.4f", got)
	for i := range want {
		tol := 5e-4 * want[i]
		if i >= 3 {
			tol = 0.05
		}
		if d := math.Abs(got[i] - want[i]); d > tol {
			t.Errorf("cell parameter %d: refined %.4f, true %.4f", i, got[i], want[i])
		}
	}
	// The refined detector is in refined.expt too: its distance (from the
	// sample to the panel's plane, which DIALS' indexing moved), and DIALS
	// integrates with it.
	dist := func(g *dials.Geometry) float64 { return 1e3 * math.Abs(dotv(g.Pix0, g.Normal)) }
	t.Logf("distance: truth %.4f mm, indexed %.4f mm, refined %.4f mm", dist(truth), dist(indexed), dist(g))
	if d := dist(g); math.Abs(d-dist(truth)) > 0.02 {
		t.Errorf("refined.expt's detector distance %.4f mm, truth %.4f", d, dist(truth))
	}
	integ := runIn(t, dir, "dials.integrate", filepath.Join("fit", "refined.expt"), "indexed.refl", "nproc=2")
	if !regexp.MustCompile(`Saving [1-9][0-9]* reflections to integrated.refl`).MatchString(integ) {
		t.Errorf("dials.integrate of refined.expt saved no reflections:\n%s", integ)
	}
	if t.Failed() {
		t.Log(out.String())
	}
}
