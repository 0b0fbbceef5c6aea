package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
)

// TestSimulateJSON: --json (or -json) prints the statistics as one JSON
// object, alone on stdout, with the numbers Render computes; the other
// lines go to stderr; an output on stdout is refused with it.
func TestSimulateJSON(t *testing.T) {
	argv := []string{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30", "-default_F", "100", "-N", "5",
		"-lambda", "1", "-distance", "100", "-pixel", "0.4", "-detpixels", "32", "-floatfile", "x.bin", "-noisefile", "n.img", "-seed", "3"}
	inDir(t, nil, func() {
		r, _, err := Render(argv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for _, flag := range []string{"--json", "-json"} {
			var out, log bytes.Buffer
			if err := runCommand(context.Background(), SimulateCommand(&out, &log), append([]string{flag}, argv...), &out, &log); err != nil {
				t.Fatal(err)
			}
			var js SimulateJSON
			dec := json.NewDecoder(&out)
			if err := dec.Decode(&js); err != nil || dec.More() {
				t.Fatalf("%s: stdout %q: %v", flag, out.String(), err)
			}
			st := r.Stats
			if js.MaxI != st.MaxI || js.Mean != st.Mean || js.RMS != st.RMS || js.RMSD != st.RMSD || js.SolidAngleSr != st.SolidAngle ||
				js.IntfileScale != st.IntScale || js.MaxIPixel != [2]int{st.MaxF, st.MaxS} || js.MaxIFastM != st.MaxX ||
				js.FPixels != 32 || js.Convention != "mosflm" || js.Photons == nil || js.Overloads == nil || *js.Photons <= 0 ||
				js.Files["noisefile"] != "n.img" || js.Seconds.Total <= 0 || js.Seconds.Render <= 0 {
				t.Errorf("%s: %+v, stats %+v", flag, js, st)
			}
			if !strings.Contains(log.String(), "max_I = ") || !strings.Contains(log.String(), "photons on noise image") {
				t.Errorf("%s: stderr %q", flag, log.String())
			}
		}
		var out bytes.Buffer
		err = runCommand(context.Background(), SimulateCommand(&out, io.Discard), append([]string{"--json"}, append(argv, "-intfile", "-")...), &out, io.Discard)
		if !errors.Is(err, models.ErrUsage) || !strings.Contains(err.Error(), "-intfile -: --json prints on stdout") {
			t.Errorf("--json with -intfile -: %v", err)
		}
	})
}
