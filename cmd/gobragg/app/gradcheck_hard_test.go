package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
)

// TestGradcheckNotFiniteJSON: a check whose loss is not finite (a
// Poisson loss on an image -dmin 50 leaves dark under observed photons)
// prints its rows as JSON too, with null for the numbers, and fails as
// the table does.
func TestGradcheckNotFiniteJSON(t *testing.T) {
	inDir(t, nil, func() {
		hardObserved(t)
		argv := []string{"--params", "fluence", "--loss", "poisson", "--observed", "obs.bin", "-cell", "64", "77", "83", "81", "87", "99",
			"-misset", "12", "-7", "31", "-default_F", "100", "-N", "6", "-lambda", "1.2", "-distance", "90", "-detpixels", "64",
			"-oversample", "1", "-fluence", "1e29", "-dmin", "50"}
		var table, js bytes.Buffer
		terr := Gradcheck(argv, &table, io.Discard)
		jerr := Gradcheck(append([]string{"--json"}, argv...), &js, io.Discard)
		if terr == nil || jerr == nil || terr.Error() != jerr.Error() || !strings.Contains(table.String(), "NaN") {
			t.Fatalf("table: %v\n%s\njson: %v", terr, table.String(), jerr)
		}
		var rows []map[string]any
		if err := json.Unmarshal(js.Bytes(), &rows); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, js.String())
		}
		if len(rows) != 1 || rows[0]["name"] != "fluence" || rows[0]["analytic"] != nil || rows[0]["ok"] != false {
			t.Errorf("rows %v", rows)
		}
	})
}

// TestGradcheckRefused: simulate's outputs among the flags and a step
// too small to resolve are usage errors, and no file is written.
func TestGradcheckRefused(t *testing.T) {
	inDir(t, nil, func() {
		for _, c := range []struct {
			argv []string
			want string
		}{
			{[]string{"--params", "a", "-floatfile", "x.bin"}, "-floatfile x.bin: an output of simulate"},
			{[]string{"--params", "a", "-intfile", "x.img"}, "-intfile x.img: an output of simulate"},
			{[]string{"--params", "a", "-pgmfile", "x.pgm"}, "-pgmfile x.pgm: an output of simulate"},
			{[]string{"--params", "a", "-json"}, "-json: simulate's statistics"},
			// A step lost in the rounding of 65 ± step: the rounding floor
			// passed the row with a numeric gradient of −1e287.
			{[]string{"--params", "a", "--step", "a=1e-300"}, "--step a=1e-300: too small to resolve"},
			{[]string{"--params", "orient_x", "--step", "orient_x=1e-300"}, "--step orient_x=1e-300: too small to resolve"},
		} {
			var out bytes.Buffer
			err := Gradcheck(append(append([]string{}, c.argv...), hardModel...), &out, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, models.ErrUsage) || out.Len() > 0 {
				t.Errorf("%q: %v (printed %q), want usage error %q", c.argv, err, out.String(), c.want)
			}
		}
		for _, f := range []string{"x.bin", "x.img", "x.pgm", "floatimage.bin"} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s written", f)
			}
		}
	})
}
