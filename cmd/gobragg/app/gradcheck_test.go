package app

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
)

// TestGradcheckTriclinicGolden: `gobragg gradcheck --params all --loss
// sum` on the golden__triclinic_P1 command line passes for every
// parameter but the mosaic spread (zero here, reported not differentiable).
func TestGradcheckTriclinicGolden(t *testing.T) {
	var argv []string
	for _, c := range loadManifest(t) {
		if c.ID == "golden__triclinic_P1" {
			argv = c.Args
		}
	}
	if argv == nil {
		t.Fatal("golden__triclinic_P1 not in the manifest")
	}
	var out bytes.Buffer
	inDir(t, nil, func() {
		if err := Gradcheck(append([]string{"--params", "all", "--loss", "sum"}, argv...), &out, io.Discard); err != nil {
			t.Errorf("%v\n%s", err, out.String())
		}
	})
	rows, na := 0, 0
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[0] != "parameter" && (f[len(f)-1] == "ok" || f[len(f)-1] == "n/a" || f[len(f)-1] == "FAIL") {
			rows++
			if f[len(f)-1] == "n/a" {
				na++
				if f[0] != "mosaic_spread" {
					t.Errorf("%s reported not differentiable", f[0])
				}
			}
		}
	}
	if rows != len(models.UserParams)-1 || na != 1 { // all but close_distance (the detector is placed by -distance)
		t.Errorf("%d rows, %d not differentiable:\n%s", rows, na, out.String())
	}
	t.Log(out.String())
}

// small is a 32² triclinic model for the option tests.
var small = []string{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30", "-default_F", "100",
	"-N", "5", "-lambda", "1", "-distance", "100", "-pixel", "0.4", "-detpixels", "32"}

// TestGradcheckJSONAndLosses: --json writes the named fields; the sse and
// Poisson losses read --observed as float32 or SMV (less the ADC offset)
// and take --mask and --roi.
func TestGradcheckJSONAndLosses(t *testing.T) {
	inDir(t, nil, func() {
		// An observed image: the model with a 0.1 Å longer, as float32
		// and as a noise-free SMV of photons (+ the reference's ADC 40).
		r, _, err := Render(append(append([]string{}, small...), "-cell", "70.1", "80", "90", "75", "85", "95"), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var fb bytes.Buffer
		for _, v := range r.Image {
			binary.Write(&fb, binary.LittleEndian, v)
		}
		os.WriteFile("obs.bin", fb.Bytes(), 0o644)
		if err := Simulate(append(append([]string{}, small...), "-cell", "70.1", "80", "90", "75", "85", "95",
			"-intfile", "obs.img", "-scale", "1"), io.Discard); err != nil {
			t.Fatal(err)
		}
		mask := make([]float32, 32*32)
		for i := range mask {
			mask[i] = float32(i % 2)
		}
		var mb bytes.Buffer
		binary.Write(&mb, binary.LittleEndian, mask)
		os.WriteFile("mask.bin", mb.Bytes(), 0o644)
		for _, opts := range [][]string{
			{"--loss", "sse", "--observed", "obs.bin"},
			{"--loss", "sse", "--observed", "obs.bin", "--mask", "mask.bin"},
			{"--loss", "poisson", "--observed", "obs.img", "--roi", "4,27,2,30"},
		} {
			var out bytes.Buffer
			argv := append(append([]string{"--json", "--params", "a,alpha,misset,distance,beam,lambda"}, opts...), small...)
			if err := Gradcheck(argv, &out, io.Discard); err != nil {
				t.Errorf("%v: %v\n%s", opts, err, out.String())
				continue
			}
			var rows []map[string]any
			if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
				t.Fatalf("%v: not JSON: %v\n%s", opts, err, out.String())
			}
			if len(rows) != 9 {
				t.Errorf("%v: %d rows", opts, len(rows))
			}
			for _, row := range rows {
				for _, k := range []string{"name", "unit", "analytic", "numeric", "abs_err", "rel_err", "ok"} {
					if _, ok := row[k]; !ok {
						t.Errorf("%v: row %v lacks %s", opts, row, k)
					}
				}
				if row["ok"] != true || row["analytic"] == 0.0 {
					t.Errorf("%v: row %v", opts, row)
				}
			}
		}
	})
}

// TestGradcheckBadInput: mistakes are one clear error each; a failing
// check is an error too.
func TestGradcheckBadInput(t *testing.T) {
	inDir(t, nil, func() {
		os.WriteFile("short.bin", make([]byte, 100), 0o644)
		for _, c := range []struct {
			opts  []string
			usage bool
			want  string
		}{
			{[]string{"--params", "a,bogus"}, true, `unknown parameter "bogus"`},
			{[]string{"--loss", "sse"}, true, "--loss sse needs --observed FILE"},
			{[]string{"--loss", "l1"}, true, `unknown loss "l1"`},
			{[]string{"--loss", "sse", "--observed", "short.bin"}, false, "short.bin has 100 bytes"},
			{[]string{"--loss", "sse", "--observed", "missing.bin"}, false, "missing.bin"},
			{[]string{"--step", "a=-1", "--params", "a"}, true, "--step a=-1"},
			{[]string{"--step", "b=1e-5", "--params", "a"}, true, "b is not among"},
			{[]string{"--roi", "1,2,3"}, true, "--roi"},
			// A value led by a negative number is the option's to judge
			// (it was "--roi needs a value").
			{[]string{"--roi", "-5,10,0,10"}, true, `--roi "-5,10,0,10": outside`},
			{[]string{"--params", "-cell"}, true, "--params needs a value"},
			{[]string{"--tol", "0"}, true, "--tol"},
			{[]string{"--frobnicate"}, true, "unknown option --frobnicate"},
			{[]string{"--params"}, true, "--params needs a value"},
			{[]string{"--params", "a", "--params", "detpixels", "--frob"}, true, "unknown option --frob"},
			// A 5 Å step: the difference is far from the derivative.
			{[]string{"--params", "a,b", "--step", "a=5"}, false, "gradient check failed for a"},
		} {
			err := Gradcheck(append(append([]string{}, c.opts...), small...), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, models.ErrUsage) != c.usage {
				t.Errorf("%v: error %v, want one containing %q (usage %v)", c.opts, err, c.want, c.usage)
			}
		}
	})
}

// TestGradcheckDiscrete: whole-number settings are reported as not
// differentiable, with the reason, rather than as zero.
func TestGradcheckDiscrete(t *testing.T) {
	var out bytes.Buffer
	inDir(t, nil, func() {
		if err := Gradcheck(append([]string{"--json", "--params", "a,detpixels,mosaic_domains"}, small...), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
	})
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1]["name"] != "detpixels" || rows[1]["differentiable"] != false || rows[1]["analytic"] != nil ||
		!strings.Contains(rows[1]["note"].(string), "discrete") {
		t.Errorf("rows %v", rows)
	}
}
