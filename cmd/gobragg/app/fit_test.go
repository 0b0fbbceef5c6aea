package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
)

// fitModel is the fit case: triclinic cell with misset, 256²
// pixels, λ = 2 Å, N = 5, fluence giving up to ~12000 photons a pixel.
var fitModel = []string{"-misset", "10", "20", "30", "-default_F", "100", "-N", "5", "-lambda", "2", "-distance", "100",
	"-pixel", "0.1", "-detpixels", "256", "-fluence", "1e31"}

func withCell(cell ...string) []string {
	return append(append([]string{}, fitModel...), append([]string{"-cell"}, cell...)...)
}

// TestFitCommand: a Poisson noise image of the true model (SMV, the
// reference's noise generator, seed 12345) fitted with the default options
// (cell and orientation, Poisson loss, spot boxes, automatic background)
// from a start 1 % off on every length and 1° off on every angle: the fit
// converges, the refined cell is within 0.1 % and 0.05° of the truth, and
// every output is written, including a command line that rebuilds the
// refined model.
func TestFitCommand(t *testing.T) {
	inDir(t, nil, func() {
		if err := Simulate(append(withCell("70", "80", "90", "75", "85", "95"), "-noisefile", "obs.img", "-seed", "12345"), io.Discard); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		argv := append([]string{"--observed", "obs.img", "--out", "res"}, withCell("70.7", "79.2", "90.9", "74", "86", "94")...)
		if err := Fit(argv, &out, io.Discard); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "iter   1") || !strings.Contains(out.String(), "refined model:") {
			t.Errorf("output:\n%s", out.String())
		}
		b, err := os.ReadFile("res/fit.json")
		if err != nil {
			t.Fatal(err)
		}
		var rep FitReport
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		truth := []float64{70, 80, 90, 75, 85, 95, 0, 0, 0}
		if rep.Status != "converged" || len(rep.Params) != 9 || rep.Error != "" || rep.Spots.Boxes < 100 ||
			rep.Spots.Unexplained != 0 || rep.LossKind != "poisson" || rep.Background.Kind != "auto" || rep.Decrement == nil {
			t.Fatalf("report %+v", rep)
		}
		for i, p := range rep.Params {
			tol := 0.05
			if i < 3 {
				tol = 1e-3 * truth[i]
			}
			if math.Abs(p.Value-truth[i]) > tol || p.StdErr == nil || p.Unit == "" {
				t.Errorf("%s = %g ± %v %s, true %g", p.Name, p.Value, p.StdErr, p.Unit, truth[i])
			}
		}
		for _, f := range []string{"res/fit_images.png", "res/loss.png", "res/refined_args.txt"} {
			if st, err := os.Stat(f); err != nil || st.Size() < 100 {
				t.Errorf("%s: %v", f, err)
			}
		}
		// The printed command line rebuilds the refined cell.
		a, err := models.ParseArgs(rep.Command[2:])
		if err != nil {
			t.Fatal(err)
		}
		m, err := a.Model(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		sa, err := models.ParseArgs(argv[4:])
		if err != nil {
			t.Fatal(err)
		}
		fitted, err := sa.Model(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range rep.Params {
			if fitted, err = fitted.With(p.Name, p.Value); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(p.Name, "orient_") {
				continue // folded into -misset: compared below
			}
			if v, _ := m.Get(p.Name); math.Abs(v-p.Value) > 1e-9*math.Abs(p.Value) {
				t.Errorf("command line gives %s = %g, fit %g", p.Name, v, p.Value)
			}
		}
		if got, want := m.Crystal.TotalMisset(), fitted.Crystal.TotalMisset(); math.Abs(got[0]-want[0])+math.Abs(got[1]-want[1])+math.Abs(got[2]-want[2]) > 1e-9 {
			t.Errorf("command line's misset %v, fitted orientation %v (rad)", got, want)
		}
	})
}

// TestFitFailures: clear errors, non-zero exit, partial results where a
// fit ran.
func TestFitFailures(t *testing.T) {
	inDir(t, nil, func() {
		if err := Simulate(append(withCell("70", "80", "90", "75", "85", "95"), "-floatfile", "obs.bin"), io.Discard); err != nil {
			t.Fatal(err)
		}
		small := append(withCell("70", "80", "90", "75", "85", "95"), "-detpixels", "128")
		for _, c := range []struct {
			argv    []string
			usage   bool
			want    string
			partial string
		}{
			{append([]string{"--refine", "a"}, fitModel...), true, "fit needs --observed", ""},
			{append([]string{"--observed", "obs.bin", "--loss", "sum"}, withCell("70")...), true, "no minimum", ""},
			{append([]string{"--observed", "obs.bin", "--method", "newton"}, withCell("70")...), true, "unknown method", ""},
			{append([]string{"--observed", "obs.bin"}, small...), false, "not an SMV file, nor 128x128", ""},
			// Fluence 0 and no background: the Poisson model is dark where
			// photons were seen; with one, it predicts no Bragg photons.
			{append([]string{"--observed", "obs.bin", "--loss", "poisson", "--background", "none", "--out", "dark"},
				append(withCell("70", "80", "90", "75", "85", "95"), "-fluence", "0")...), false, "not finite", "dark/fit.json"},
			{append([]string{"--observed", "obs.bin", "--out", "dark2"},
				append(withCell("70", "80", "90", "75", "85", "95"), "-fluence", "0")...), false, "no photons", "dark2/fit.json"},
			{append([]string{"--observed", "obs.bin", "--max-iter", "1", "--out", "short"},
				withCell("70.7", "79.2", "90.9", "74", "86", "94")...), false, "did not converge", "short/fit.json"},
			{append([]string{"--observed", "obs.bin", "--max-evals", "3", "--out", "short2"},
				withCell("70.7", "79.2", "90.9", "74", "86", "94")...), false, "limit after 3 evaluations", "short2/fit.json"},
			{append([]string{"--observed", "obs.bin", "--bound", "distance=99:101"}, withCell("70.7", "79.2", "90.9", "74", "86", "94")...), true, "not refined", ""},
			{append([]string{"--observed", "obs.bin", "--bound", "a=72:71"}, withCell("70.7", "79.2", "90.9", "74", "86", "94")...), true, "lo < hi", ""},
			{append([]string{"--observed", "obs.bin", "--bound", "a=71:72", "--out", "outside"}, withCell("70.7", "79.2", "90.9", "74", "86", "94")...),
				false, "outside its bound", "outside/fit.json"},
			{append([]string{"--observed", "obs.bin", "--restrain", "a=70"}, withCell("70.7", "79.2", "90.9", "74", "86", "94")...), true, "centre,sigma", ""},
			{append([]string{"--observed", "obs.bin", "--restrain", "a=70,-1"}, withCell("70.7", "79.2", "90.9", "74", "86", "94")...), true, "σ > 0", ""},
			{append([]string{"--observed", "obs.bin", "--spots", "some"}, withCell("70.7", "79.2", "90.9", "74", "86", "94")...), true, "auto or all", ""},
			{append([]string{"--observed", "obs.bin", "--loss", "gauss", "--read-noise", "-1"}, withCell("70.7", "79.2", "90.9", "74", "86", "94")...),
				true, "read-noise", ""},
			{append([]string{"--observed", "obs.bin", "--coarse", "9"}, withCell("70.7", "79.2", "90.9", "74", "86", "94")...), true, "--coarse", ""},
		} {
			err := Fit(c.argv, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, models.ErrUsage) != c.usage {
				t.Errorf("%q: error %v, want %q (usage %v)", c.argv[:4], err, c.want, c.usage)
			}
			if c.partial != "" {
				b, err := os.ReadFile(c.partial)
				var rep FitReport
				if err != nil || json.Unmarshal(b, &rep) != nil || rep.Error == "" || len(rep.Params) == 0 {
					t.Errorf("%s: partial results %s (%v)", c.want, b, err)
				}
			}
		}
	})
}
