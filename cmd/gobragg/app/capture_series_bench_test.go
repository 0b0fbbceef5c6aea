package app

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/dials"
	"github.com/gobragg/gobragg/models/formats"
)

// BenchmarkSeriesCapture is the capture study of many-image fits started
// from a DIALS list (`fit --from-dials`, cell and orientation), as a user
// meets them: per start level, fits from seeded random starts — every
// cell length off by a random sign times a magnitude drawn uniformly in
// [½, 1] of the level, every angle and every orientation axis likewise —
// against the fit started at the truth on the same images. A fit is
// captured when each cell parameter is within 3 standard errors (the
// truth fit's) of the truth fit's value and each refined axis within 3
// standard errors (the largest orient_* one) of its direction; its
// verdict is right when it converged (exit 0) exactly when captured.
//
// Scenarios: "gobragg" — ten 4-image series of seriesModel (off-centre,
// two-theta and rotated rectangular detector, water background), noise
// seeds 1–10, one start per level each; and "reference" — images 2–6 of
// the reference's own series (../shared/fitdata/series, skipped without
// it), ten starts per level. The truth fits on the ten gobragg series and
// ten more seeds also give the standard errors' honesty: the RMS over the
// 20 seeds of (refined − truth)/σ per parameter (truth: the series'
// -cell, orientation 0).
func BenchmarkSeriesCapture(b *testing.B) {
	// Printed as it goes: the testing package cuts a benchmark's log to
	// ten lines.
	say := func(format string, a ...any) { fmt.Printf(format+"\n", a...) }
	levels := []struct {
		name, tag         string
		length, angle, or float64 // fraction, degrees, degrees
	}{{"±1%/±1°/±0.5°", "l1", 0.01, 1, 0.5}, {"±2%/±2°/±1°", "l2", 0.02, 2, 1}}
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		// The gobragg series, one per noise seed.
		var rms [9]float64
		nrms := 0
		rows := map[string]*captureRow{}
		for seed := 1; seed <= 20; seed++ {
			sdir := filepath.Join(dir, fmt.Sprintf("g%02d", seed))
			if err := os.MkdirAll(sdir, 0o755); err != nil {
				b.Fatal(err)
			}
			argv := append([]string{"--frames", "4", "-phi", "0", "-osc", "1", "-seed", strconv.Itoa(seed)}, seriesModel...)
			argv = append(argv, "-noisefile", filepath.Join(sdir, "image_###.cbf"))
			if err := Series(argv, io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
			list := filepath.Join(sdir, "image.expt")
			truthFit := seriesFit(b, list, nil, seriesModel, filepath.Join(sdir, "truth"))
			for k, n := range cellOrientNames {
				want := truthCell[n] // (0 for the orientation axes)
				rms[k] += math.Pow((truthFit.value[n]-want)/truthFit.stderr[n], 2)
			}
			nrms++
			if seed > 10 {
				continue
			}
			rng := rand.New(rand.NewSource(int64(1000 + seed)))
			for _, l := range levels {
				start := perturbedList(b, list, seriesModel, rng, l.length, l.angle, l.or, filepath.Join(sdir, "start_"+l.tag+".expt"))
				f := seriesFit(b, start, nil, seriesModel, filepath.Join(sdir, "fit_"+l.tag))
				row(rows, "gobragg, "+l.name).add(f, truthFit)
			}
		}
		for k, n := range cellOrientNames {
			say("standard errors, gobragg series over %d seeds: RMS((refined − truth)/σ) of %s = %.2f", nrms, n, math.Sqrt(rms[k]/float64(nrms)))
		}
		// The reference's images 2–6.
		src := referenceSeriesDir
		if _, err := os.Stat(filepath.Join(src, "frame_006.img")); err == nil {
			rdir := filepath.Join(dir, "ref")
			var observed []string
			for n := 2; n <= 6; n++ {
				observed = append(observed, filepath.Join(src, fmt.Sprintf("frame_%03d.img", n)))
			}
			// The truth's list for images 2–6: a series of the same flags
			// (its images are not used: the reference's are observed).
			argv := append([]string{"--frames", "5", "--first", "2", "--expt", filepath.Join(rdir, "truth.expt"), "-phi", "1"},
				referenceSeries...)
			if err := os.MkdirAll(rdir, 0o755); err != nil {
				b.Fatal(err)
			}
			argv = append(argv, "-intfile", filepath.Join(rdir, "int_###.img"))
			if err := Series(argv, io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
			base := []string{"-N", "8", "-default_F", "100", "-oversample", "1", "-phisteps", "5", "-fluence", "1e29"}
			list := filepath.Join(rdir, "truth.expt")
			truthFit := seriesFit(b, list, observed, base, filepath.Join(rdir, "truth"))
			for _, n := range cellOrientNames {
				want := truthCell[n] // (0 for the orientation axes)
				say("reference images 2–6, fit from the truth: %s = %.5f ± %.2g (truth %g, %.2fσ)", n, truthFit.value[n],
					truthFit.stderr[n], want, (truthFit.value[n]-want)/truthFit.stderr[n])
			}
			rng := rand.New(rand.NewSource(2000))
			for _, l := range levels {
				for s := 0; s < 10; s++ {
					start := perturbedList(b, list, base, rng, l.length, l.angle, l.or, filepath.Join(rdir, fmt.Sprintf("start_%s_%d.expt", l.tag, s)))
					f := seriesFit(b, start, observed, base, filepath.Join(rdir, fmt.Sprintf("fit_%s_%d", l.tag, s)))
					row(rows, "reference, "+l.name).add(f, truthFit)
				}
			}
		}
		say("| scenario, start level | captured | converged | verdicts right | evaluations (median, max) |")
		for _, name := range []string{"gobragg, " + levels[0].name, "gobragg, " + levels[1].name,
			"reference, " + levels[0].name, "reference, " + levels[1].name} {
			if r := rows[name]; r != nil {
				say("| %s | %d/%d | %d/%d | %d/%d | %.0f, %.0f |", name, r.captured, r.n, r.converged, r.n, r.right, r.n,
					median(r.evals), slices.Max(r.evals))
			}
		}
	}
}

var cellOrientNames = []string{"a", "b", "c", "alpha", "beta", "gamma", "orient_x", "orient_y", "orient_z"}

// seriesResult is one fit of BenchmarkSeriesCapture.
type seriesResult struct {
	converged     bool
	evals         int
	value, stderr map[string]float64
	axes          [3][3]float64 // refined.expt's real-space vectors
}

// seriesFit runs fit --from-dials list (observed replacing its images
// when given) with the flags base, out as --out.
func seriesFit(b *testing.B, list string, observed []string, base []string, out string) seriesResult {
	argv := []string{"--from-dials", list, "--out", out}
	for _, o := range observed {
		argv = append(argv, "--observed", o)
	}
	err := Fit(append(argv, base...), io.Discard, io.Discard)
	raw, rerr := os.ReadFile(filepath.Join(out, "fit.json"))
	if rerr != nil {
		b.Fatalf("%v (fit: %v)", rerr, err)
	}
	var rep FitReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		b.Fatal(err)
	}
	r := seriesResult{converged: err == nil && rep.Status == "converged", evals: rep.Evaluations,
		value: map[string]float64{}, stderr: map[string]float64{}}
	for _, p := range rep.Params {
		r.value[p.Name] = p.Value
		r.stderr[p.Name] = math.NaN()
		if p.StdErr != nil {
			r.stderr[p.Name] = *p.StdErr
		}
	}
	if el, err := dials.ReadFile(filepath.Join(out, "refined.expt")); err == nil {
		if g, err := el.Geometry(0); err == nil {
			r.axes = [3][3]float64{g.A, g.B, g.C}
		}
	}
	return r
}

// perturbedList writes list with its crystal moved as a start of the
// capture study: lengths by ±[½, 1]·length (fraction), angles by
// ±[½, 1]·angle degrees, orientation by ±[½, 1]·or degrees about each
// lab axis.
func perturbedList(b *testing.B, list string, base []string, rng *rand.Rand, length, angle, or float64, out string) string {
	el, err := dials.ReadFile(list)
	if err != nil {
		b.Fatal(err)
	}
	args, err := models.ParseArgs(append(append([]string{}, base...), "-cell", "100", "100", "100", "90", "90", "90"))
	if err != nil {
		b.Fatal(err)
	}
	bm, err := args.Model(nil)
	if err != nil {
		b.Fatal(err)
	}
	g, err := el.Geometry(0)
	if err != nil {
		b.Fatal(err)
	}
	m, err := g.CellModel(bm, g.First)
	if err != nil {
		b.Fatal(err)
	}
	off := func(scale float64) float64 { return float64(2*rng.Intn(2)-1) * scale * (0.5 + 0.5*rng.Float64()) }
	for _, n := range cellOrientNames {
		v, err := m.Get(n)
		if err != nil {
			b.Fatal(err)
		}
		switch n {
		case "a", "b", "c":
			v *= 1 + off(length)
		case "alpha", "beta", "gamma":
			v += off(angle)
		default:
			v += off(or)
		}
		if m, err = m.With(n, v); err != nil {
			b.Fatal(err)
		}
	}
	if err := el.SetCrystal(0, m, bm); err != nil {
		b.Fatal(err)
	}
	if err := formats.WriteFileAtomic(out, func(w io.Writer) error { return el.Write(w) }); err != nil {
		b.Fatal(err)
	}
	return out
}

// captureRow counts one row of the capture table.
type captureRow struct {
	n, captured, converged, right int
	evals                         []float64
}

func row(rows map[string]*captureRow, name string) *captureRow {
	if rows[name] == nil {
		rows[name] = &captureRow{}
	}
	return rows[name]
}

func (r *captureRow) add(f, truth seriesResult) {
	captured := true
	for _, n := range cellOrientNames[:6] {
		if !(math.Abs(f.value[n]-truth.value[n]) <= 3*truth.stderr[n]) {
			captured = false
		}
	}
	sigOr := math.Max(truth.stderr["orient_x"], math.Max(truth.stderr["orient_y"], truth.stderr["orient_z"]))
	for k := range f.axes {
		x, y := f.axes[k], truth.axes[k]
		cos := dotv(x, y) / math.Sqrt(dotv(x, x)*dotv(y, y))
		if !(degrees(math.Acos(math.Min(1, cos))) <= 3*sigOr) {
			captured = false
		}
	}
	r.n++
	if captured {
		r.captured++
	}
	if f.converged {
		r.converged++
	}
	if captured == f.converged {
		r.right++
	}
	r.evals = append(r.evals, float64(f.evals))
}
