package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
)

// hardModel is a 64² fit: the observed image is -cell 64 77 83 81 87 99
// with the same misset (hardObserved), the start a little off.
var hardModel = []string{"-default_F", "100", "-N", "6", "-lambda", "1.2", "-distance", "90", "-pixel", "0.1", "-detpixels", "64",
	"-oversample", "1", "-fluence", "1e29", "-cell", "65", "76", "84", "82", "86", "100", "-misset", "12", "-7", "31"}

// hardObserved writes the observed images of hardModel in the current
// directory: obs.img (SMV with noise and water) and obs.bin (float32).
func hardObserved(t *testing.T) {
	t.Helper()
	argv := []string{"-cell", "64", "77", "83", "81", "87", "99", "-misset", "12", "-7", "31", "-default_F", "100", "-N", "6",
		"-lambda", "1.2", "-distance", "90", "-pixel", "0.1", "-detpixels", "64", "-oversample", "1", "-fluence", "1e29",
		"-water", "0.017", "-noisefile", "obs.img", "-floatfile", "obs.bin", "-seed", "11"}
	if err := Simulate(argv, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// hardFit runs fit on opts and hardModel (and extra nanoBragg flags),
// returning its error and what it printed on stdout.
func hardFit(opts []string, extra ...string) (error, string) {
	var out bytes.Buffer
	err := Fit(append(append(append([]string{}, opts...), hardModel...), extra...), &out, io.Discard)
	return err, out.String()
}

// TestFitRefusedUpFront: input the fit cannot use is refused with one
// line before anything is fitted or written: no line on stdout, no --out
// directory, and the files given left as they were. Usage errors are
// ErrUsage (exit 2).
func TestFitRefusedUpFront(t *testing.T) {
	inDir(t, nil, func() {
		hardObserved(t)
		obs, _ := os.ReadFile("obs.img")
		// An --out whose files are inputs: the observed image, the mask,
		// the background, an -hkl file.
		os.MkdirAll("in", 0o755)
		for _, f := range []string{"fit.json", "fit_images.png", "loss.png"} {
			os.WriteFile(filepath.Join("in", f), obs, 0o644)
		}
		os.WriteFile("in/refined_args.txt", []byte("0 0 1 100\n0 1 0 100\n1 0 0 100\n"), 0o644)
		// An --out that cannot take the files: fit.json a directory, a
		// regular file, a path through one.
		os.MkdirAll("taken/fit.json", 0o755)
		os.WriteFile("plain", nil, 0o644)
		for _, c := range []struct {
			opts  []string
			extra []string
			usage bool
			want  string
		}{
			{[]string{"--observed", "in/fit.json", "--out", "in"}, nil, true, "in/fit.json: is also the --observed input file"},
			{[]string{"--observed", "obs.img", "--mask", "in/fit_images.png", "--out", "in"}, nil, true, "is also the --mask input file"},
			{[]string{"--observed", "obs.img", "--background", "in/loss.png", "--out", "in"}, nil, true, "is also the --background input file"},
			{[]string{"--observed", "obs.img", "--out", "in"}, []string{"-hkl", "in/refined_args.txt"}, true, "is also the -hkl input file"},
			{[]string{"--observed", "obs.img", "--out", "taken"}, nil, false, "taken/fit.json is a directory"},
			{[]string{"--observed", "obs.img", "--out", "plain"}, nil, false, "--out plain: not a directory"},
			{[]string{"--observed", "obs.img", "--out", "plain/sub"}, nil, false, "not a directory"},
			{[]string{"--observed", "obs.img", "--out", ""}, nil, true, "--out ''"},
			{[]string{"--observed", "obs.img", "--out", "o", "--starts", "1000000000"}, nil, true, "at most 100 starts"},
			{[]string{"--observed", "obs.img", "--out", "o", "--restrain", "a=nan,1"}, nil, true, "want a finite centre"},
			{[]string{"--observed", "obs.img", "--out", "o", "--refine", "cell,fluence", "--bound", "fluence=-1e30:1e30"}, nil, true,
				"a scale's bound must be positive"},
			{[]string{"--observed", "obs.img", "--out", "o", "--bound", "a=1e-9:1e9"}, nil, true, "lengths must lie between"},
			{[]string{"--observed", "obs.img", "--out", "o"}, []string{"-floatfile", "x.bin"}, true, "-floatfile x.bin: an output of simulate"},
			{[]string{"--observed", "obs.img", "--out", "o"}, []string{"-noisefile", "x.img"}, true, "-noisefile x.img: an output of simulate"},
			{[]string{"--observed", "obs.img", "--out", "o"}, []string{"-json"}, true, "-json: simulate's statistics"},
			// Three images, each within the budget, together above it.
			{[]string{"--observed", "obs.img,obs.img,obs.img", "--out", "o"}, []string{"-max_memory", "1"}, false,
				"a fit of 3 images of 64×64 pixels needs about"},
		} {
			err, out := hardFit(c.opts, c.extra...)
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, models.ErrUsage) != c.usage {
				t.Errorf("%q %q: %v, want %q (usage %v)", c.opts, c.extra, err, c.want, c.usage)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: error of several lines: %q", c.opts, err)
			}
			if out != "" {
				t.Errorf("%q %q: printed %q before refusing", c.opts, c.extra, out)
			}
		}
		for _, f := range []string{"in/fit.json", "in/fit_images.png", "in/loss.png"} {
			if b, _ := os.ReadFile(f); !bytes.Equal(b, obs) {
				t.Errorf("%s changed", f)
			}
		}
		for _, f := range []string{"o", "fit_out", "x.bin", "x.img", "taken/loss.png"} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s written", f)
			}
		}
		// GOBRAGG_FIT_OUT set but empty is an empty --out too.
		t.Setenv("GOBRAGG_FIT_OUT", "")
		if err, _ := hardFit([]string{"--observed", "obs.img"}); err == nil || !errors.Is(err, models.ErrUsage) {
			t.Errorf("GOBRAGG_FIT_OUT='': %v", err)
		}
	})
}

// TestFitUnwritableOut: an --out this user may not write is one line,
// before the fit. (Root writes any directory: as root the test runs in a
// child process as the user nobody.)
func TestFitUnwritableOut(t *testing.T) {
	if runAsNobody(t) {
		return
	}
	inDir(t, nil, func() {
		hardObserved(t)
		os.Mkdir("ro", 0o555)
		for _, dir := range []string{"ro", "ro/sub"} {
			err, out := hardFit([]string{"--observed", "obs.img", "--out", dir})
			if err == nil || !strings.Contains(err.Error(), "cannot create files in ro") || out != "" {
				t.Errorf("--out %s: %v (printed %q)", dir, err, out)
			}
		}
	})
}

// TestFitLimitMessage: a fit stopped by --max-evals says how many
// evaluations its optimiser made and how many the convergence test added,
// and fit.json's evaluations are their sum.
func TestFitLimitMessage(t *testing.T) {
	inDir(t, nil, func() {
		hardObserved(t)
		err, _ := hardFit([]string{"--observed", "obs.img", "--out", "o", "--starts", "1", "--max-evals", "1"})
		b, rerr := os.ReadFile("o/fit.json")
		var rep FitReport
		if rerr != nil || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("fit.json: %v (fit: %v)", rerr, err)
		}
		want := fmt.Sprintf("the optimiser stopped at its limit after 1 evaluations and %d iterations (limits 1 and 500); "+
			"the convergence test then took %d more evaluations", rep.Iterations, rep.Evaluations-1)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(rep.Error, want) {
			t.Errorf("error %v, fit.json's %q; want them to contain %q", err, rep.Error, want)
		}
	})
}
