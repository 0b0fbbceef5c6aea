package app

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
)

func readGz(t *testing.T, path string) []byte {
	f, err := os.Open(path)
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

func headerPairs(h string) map[string]string {
	kv := map[string]string{}
	for _, line := range strings.Split(h, "\n") {
		line = strings.TrimSuffix(strings.TrimSpace(line), ";")
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// TestIntfileMatchesReference: the SMV -intfile of golden__simple_cubic
// and sweep__intfile_autoscale against the reference's own .int.img files:
// every header key with the same value and every pixel equal (the images
// agree to ~1e-14; the issue allows ±1 count, the files are identical).
func TestIntfileMatchesReference(t *testing.T) {
	for _, c := range []struct {
		id, gold string
		inputs   []string
	}{
		{"golden__simple_cubic", "canonical/golden__simple_cubic.int.img.gz", []string{"P1.hkl", "A.mat"}},
		{"sweep__intfile_autoscale", "sweep/sweep__intfile_autoscale.int.img.gz", nil},
	} {
		var args []string
		for _, gc := range loadManifest(t) {
			if gc.ID == c.id {
				args = gc.Args
			}
		}
		if args == nil {
			t.Fatalf("%s not in the manifest", c.id)
		}
		var got []byte
		inDir(t, c.inputs, func() {
			if err := Simulate(append(args, "-intfile", "image.img"), io.Discard); err != nil {
				t.Fatal(err)
			}
			var err error
			if got, err = os.ReadFile("image.img"); err != nil {
				t.Fatal(err)
			}
		})
		want := readGz(t, filepath.Join(goldenDir, c.gold))
		g, err := formats.ReadSMV(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		w, err := formats.ReadSMV(bytes.NewReader(want))
		if err != nil {
			t.Fatal(err)
		}
		gk, wk := headerPairs(g.Header), headerPairs(w.Header)
		if len(gk) != len(wk) {
			t.Errorf("%s: header has %d keys, reference %d", c.id, len(gk), len(wk))
		}
		for k, v := range wk {
			if gk[k] != v {
				t.Errorf("%s: header %s=%q, reference %q", c.id, k, gk[k], v)
			}
		}
		if len(g.Data) != len(w.Data) {
			t.Fatalf("%s: %d pixels, reference %d", c.id, len(g.Data), len(w.Data))
		}
		for i := range w.Data {
			if g.Data[i] != w.Data[i] {
				t.Fatalf("%s: pixel %d = %d, reference %d", c.id, i, g.Data[i], w.Data[i])
			}
		}
	}
}

// TestBadInputWritesNothing: a failing command line gives one usage error
// and leaves no output file behind.
func TestBadInputWritesNothing(t *testing.T) {
	inDir(t, nil, func() {
		err := Simulate([]string{"-cell", "100", "-default_F", "1", "-detpixels", "16", "-floatfile", "out.bin", "-oops"}, io.Discard)
		if err == nil || !errors.Is(err, models.ErrUsage) || !strings.Contains(err.Error(), "-oops") {
			t.Fatalf("error %v, want a usage error naming -oops", err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error spans several lines: %q", err)
		}
		if entries, _ := os.ReadDir("."); len(entries) != 0 {
			t.Errorf("files left behind: %v", entries)
		}
	})
}

// TestFdumpCache: like the reference, -hkl writes Fdump.bin and a later
// run without -hkl reads it back (and says so), giving the same image.
func TestFdumpCache(t *testing.T) {
	argv := []string{"-cell", "100", "100", "100", "90", "90", "90", "-lambda", "6.2", "-N", "5", "-distance", "100",
		"-detpixels", "64"}
	inDir(t, []string{"P1_varied.hkl"}, func() {
		var log1, log2 bytes.Buffer
		r1, _, err := Render(append(argv, "-hkl", "P1_varied.hkl"), &log1)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log1.String(), "writing dump file for next time: Fdump.bin") {
			t.Errorf("no dump-file line in %q", log1.String())
		}
		r2, _, err := Render(argv, &log2)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log2.String(), "reading Fs from Fdump.bin") {
			t.Errorf("no read line in %q", log2.String())
		}
		for i := range r1.Image {
			if r1.Image[i] != r2.Image[i] {
				t.Fatalf("pixel %d: %g from -hkl, %g from Fdump.bin", i, r1.Image[i], r2.Image[i])
			}
		}
	})
}

// TestDemo: no arguments render the embedded demo and write its files.
func TestDemo(t *testing.T) {
	inDir(t, nil, func() {
		var out bytes.Buffer
		if err := Simulate(nil, &out); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"gobragg_demo.bin", demoPNG} {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 {
				t.Errorf("%s not written: %v", f, err)
			}
		}
		if !strings.Contains(out.String(), "gobragg_demo.png") {
			t.Errorf("output does not say where the preview went: %q", out.String())
		}
	})
}

// TestNoiseMatchesReference: with -seed 1 the noise image equals the
// reference's sweep__noisefile_seed1.noise.img pixel for pixel, and the
// photon and overload counts equal the ones it printed (manifest
// stdout_stats noise_photons, noise_overloads).
func TestNoiseMatchesReference(t *testing.T) {
	var args []string
	var photons float64
	for _, gc := range loadManifest(t) {
		if gc.ID == "sweep__noisefile_seed1" {
			args = gc.Args
		}
	}
	b, err := os.ReadFile(filepath.Join(goldenDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		ID    string `json:"id"`
		Stats struct {
			Photons   float64 `json:"noise_photons"`
			Overloads int     `json:"noise_overloads"`
		} `json:"stdout_stats"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, r := range raw {
		if r.ID == "sweep__noisefile_seed1" {
			photons = r.Stats.Photons
		}
	}
	var got []byte
	var out bytes.Buffer
	inDir(t, nil, func() {
		if err := Simulate(append(args, "-noisefile", "noise.img"), &out); err != nil {
			t.Fatal(err)
		}
		if got, err = os.ReadFile("noise.img"); err != nil {
			t.Fatal(err)
		}
	})
	want := readGz(t, filepath.Join(goldenDir, "sweep/sweep__noisefile_seed1.noise.img.gz"))
	if len(got) != len(want) {
		t.Fatalf("noise file has %d bytes, reference %d", len(got), len(want))
	}
	diff := 0
	for i := 512; i < len(want); i += 2 {
		if got[i] != want[i] || got[i+1] != want[i+1] {
			diff++
		}
	}
	if diff != 0 {
		t.Errorf("%d of %d noise pixels differ from the reference's", diff, (len(want)-512)/2)
	}
	line := fmt.Sprintf("%.0f photons on noise image (0 overloads)", photons)
	if !strings.Contains(out.String(), line) {
		t.Errorf("output lacks %q:\n%s", line, out.String())
	}
}

// TestImgHeaderIngestion: -img takes the detector from an SMV header. Fed
// the reference's own intfile of sweep__intfile_autoscale plus only the
// crystal and beam flags, gobragg must reproduce that run's golden float
// image (the header carries size, pixel, distance, wavelength and centre).
func TestImgHeaderIngestion(t *testing.T) {
	img := readGz(t, filepath.Join(goldenDir, "sweep/sweep__intfile_autoscale.int.img.gz"))
	gold := readGolden(t, "sweep/sweep__intfile_autoscale.bin", 256*256)
	inDir(t, nil, func() {
		if err := os.WriteFile("ref_001.img", img, 0o644); err != nil {
			t.Fatal(err)
		}
		r, _, err := Render([]string{"-img", "ref_001.img", "-default_F", "100", "-cell", "100", "100", "100", "90", "90", "90", "-N", "5"}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if relL2, corr := compare(r.Image, gold); relL2 > maxRelL2 || corr < minCorr {
			t.Errorf("relL2 %.3g corr %.9f against the run that wrote the header", relL2, corr)
		}
	})
}

// TestMask: pixels whose -mask value is zero are not rendered (0 in the
// image); the others are untouched. The mask's header also sets the beam
// centre, with BEAM_CENTER_Y counted from the far edge as the reference
// reads masks: 12.75 mm here becomes 25.6 − 12.75 = 12.85 mm, the golden
// run's default, so an unflipped reading would shift every spot.
func TestMask(t *testing.T) {
	gold := readGolden(t, "sweep/sweep__base.bin", 256*256)
	mask := make([]uint16, 256*256)
	for i := range mask {
		if (i/256+i%256)%3 != 0 {
			mask[i] = 1
		}
	}
	var args []string
	for _, gc := range loadManifest(t) {
		if gc.ID == "sweep__base" {
			args = gc.Args
		}
	}
	inDir(t, nil, func() {
		err := formats.WriteFileAtomic("mask.img", func(w io.Writer) error {
			return formats.WriteSMV(w, formats.SMVHeader{PixelMM: 0.1, DistanceMM: 100, WavelengthA: 1,
				BeamCenterXMM: 12.85, BeamCenterYMM: 12.75, CloseDistanceMM: 100, XDSOrgXPx: 128.5, XDSOrgYPx: 128.5}, 256, 256, mask)
		})
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := Render(append([]string{"-mask", "mask.img"}, args...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range r.Image {
			want := gold[i]
			if mask[i] == 0 {
				want = 0
			}
			if math.Abs(float64(v-want)) > 1e-5*math.Abs(float64(want))+1e-12 {
				t.Fatalf("pixel %d (mask %d): %g, want %g", i, mask[i], v, want)
			}
		}
	})
}

// TestHostileInputs: command lines that would need absurd memory or give
// non-physical numbers are refused with an error, never a crash.
func TestHostileInputs(t *testing.T) {
	for _, extra := range [][]string{
		{"-pixel", "1e-12"},
		{"-pixel", "0.001", "-detsize", "4294967.296"},
		{"-phisteps", "1000000000", "-osc", "0"},
		{"-detpixels", "100000"},
		{"-mosaic", "1e300"},
		{"-dispersion", "250"},
		{"-fudge", "-1", "-round_xtal"},
		{"-N", "300"},
		{"-lambda", "0"},
		{"-detpixels_x", "-4"},
	} {
		inDir(t, nil, func() {
			argv := append([]string{"-cell", "100", "-default_F", "1"}, extra...)
			if _, _, err := Render(argv, io.Discard); err == nil {
				t.Errorf("%q: rendered, want a refusal", extra)
			}
		})
	}
}

// TestOutputDestinations: "-" sends the file to stdout and the log lines
// to stderr; an output that is also an input, or that cannot be
// written, is refused before rendering and changes nothing.
func TestOutputDestinations(t *testing.T) {
	base := []string{"-cell", "100", "-default_F", "1", "-detpixels", "8"}
	inDir(t, []string{"P1.hkl"}, func() {
		var stdout, stderr bytes.Buffer
		if err := SimulateStreams(append(base, "-floatfile", "-"), &stdout, &stderr); err != nil {
			t.Fatal(err)
		}
		if stdout.Len() != 4*64 || !strings.Contains(stderr.String(), "max_I") {
			t.Errorf("stdout %d bytes, stderr %q", stdout.Len(), stderr.String())
		}
		hkl, _ := os.ReadFile("P1.hkl")
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"-hkl", "P1.hkl", "-floatfile", "P1.hkl"}, "is also the -hkl input file"},
			{[]string{"-hkl", "P1.hkl", "-intfile", "./P1.hkl"}, "is also the -hkl input file"},
			{[]string{"-intfile", "nodir/x.img"}, "no such file or directory"},
			{[]string{"-pgmfile", "."}, "is a directory"},
		} {
			err := Simulate(append(append([]string{}, base...), c.args...), io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%q: error %v, want %q", c.args, err, c.want)
			}
			if b, _ := os.ReadFile("P1.hkl"); !bytes.Equal(b, hkl) {
				t.Fatalf("%q changed P1.hkl", c.args)
			}
			if entries, _ := os.ReadDir("."); len(entries) != 1 {
				t.Errorf("%q: directory holds %v", c.args, entries)
			}
		}
	})
}

// TestFdumpOnlyAfterValidRun: a run that fails after reading -hkl leaves
// no Fdump.bin behind (a later run would silently read it), and a run
// whose structure factors are refused writes none either.
func TestFdumpOnlyAfterValidRun(t *testing.T) {
	base := []string{"-cell", "100", "-detpixels", "16", "-floatfile", "x.bin"}
	inDir(t, []string{"P1.hkl"}, func() {
		os.WriteFile("nan.hkl", []byte("0 0 0 1\n1 1 1 nan\n"), 0o644)
		for _, extra := range [][]string{
			{"-hkl", "P1.hkl", "-twotheta", "180"},
			{"-hkl", "P1.hkl", "-phisteps", "100000000", "-osc", "1"},
			{"-hkl", "P1.hkl", "-polar", "3"},
			{"-hkl", "nan.hkl"},
		} {
			if err := Simulate(append(append([]string{}, base...), extra...), io.Discard); err == nil {
				t.Errorf("%q: no error", extra)
			}
			if entries, _ := os.ReadDir("."); len(entries) != 2 {
				t.Errorf("%q: directory holds %v", extra, entries)
			}
		}
	})
}

// TestDumpNotOverInput: -dump naming the -hkl file itself does not
// overwrite it with the binary cache (a warning says so).
func TestDumpNotOverInput(t *testing.T) {
	inDir(t, []string{"P1.hkl"}, func() {
		hkl, _ := os.ReadFile("P1.hkl")
		var log bytes.Buffer
		if err := Simulate([]string{"-cell", "100", "-detpixels", "16", "-hkl", "P1.hkl", "-dump", "P1.hkl"}, &log); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile("P1.hkl"); !bytes.Equal(b, hkl) {
			t.Error("P1.hkl was overwritten")
		}
		if !strings.Contains(log.String(), "unable to write dump file P1.hkl: it is also the -hkl input file") {
			t.Errorf("log %q", log.String())
		}
	})
}

// TestImageChecked: inputs each within range whose product overflows the
// float32 image are refused rather than written as Inf.
func TestImageChecked(t *testing.T) {
	inDir(t, nil, func() {
		err := Simulate([]string{"-cell", "100", "-default_F", "1e10", "-detpixels", "64", "-N", "100", "-oversample", "1",
			"-fluence", "1e50", "-lambda", "6"}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "impossible pixel") {
			t.Errorf("error %v", err)
		}
		if entries, _ := os.ReadDir("."); len(entries) != 0 {
			t.Errorf("directory holds %v", entries)
		}
	})
}

// TestRenderBudget: Render counts memory as simulate does (a float32
// image), so the largest standard case, 4096², is within the default
// budget; the memory check runs before anything is rendered.
func TestRenderBudget(t *testing.T) {
	argv := []string{"-cell", "100", "-default_F", "100", "-N", "5", "-lambda", "6.2", "-detpixels", "4096"}
	a, err := models.ParseArgs(argv)
	if err != nil {
		t.Fatal(err)
	}
	a.PixelBytes = models.SimulatePixelBytes
	if _, err := a.Model(io.Discard); err != nil {
		t.Errorf("4096² as simulate counts it: %v", err)
	}
	_, _, err = Render(append(argv, "-max_memory", "100"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "at 10 bytes") {
		t.Errorf("Render with -max_memory 100: %v", err)
	}
}

// TestBenchCasesWithinBudget: every standard performance case passes the
// default -max_work and -max_memory.
func TestBenchCasesWithinBudget(t *testing.T) {
	inputs, err := filepath.Abs("../../../testdata/inputs")
	if err != nil {
		t.Fatal(err)
	}
	for _, bc := range BenchCases {
		inDir(t, nil, func() {
			argv, err := bc.Resolve(inputs)
			if err != nil {
				t.Fatal(err)
			}
			a, err := models.ParseArgs(argv)
			if err != nil {
				t.Fatal(err)
			}
			a.PixelBytes = models.SimulatePixelBytes
			if _, err := a.Model(io.Discard); err != nil {
				t.Errorf("%s: %v", bc.Name, err)
			}
		})
	}
}

// TestInterpolationWarning: simulate warns where the reference switches
// tricubic interpolation off, at the indices the reference names (its own
// warning for these command lines, nanoBragg run here: h,k,l =
// -1.18536,0.149437,6.06713 part-way along the first row, and
// -3.10017,6.72289,-6.72289 at the first pixel), found by the render
// itself (Simulator.InterpolationCutoff); and not where the table covers
// the detector (the reference prints nothing there either).
func TestInterpolationWarning(t *testing.T) {
	base := strings.Fields("-cell 100 100 100 90 90 90 -lambda 6.2 -distance 100 -default_F 100 -hkl P1_varied.hkl -interpolate")
	for _, c := range []struct {
		args, want string
	}{
		{"-N 2 -pixel 0.8 -detpixels 128 -Xbeam 1 -Ybeam 1", "at pixel 52 0 (h,k,l = -1.18536,0.149437,6.06713)"},
		{"-N 2 -pixel 0.8 -detpixels 128", "at pixel 0 0 (h,k,l = -3.10017,6.72289,-6.72289)"},
		{"-N 2 -pixel 0.5 -detpixels 128", ""},
	} {
		inDir(t, []string{"P1_varied.hkl"}, func() {
			var log bytes.Buffer
			if _, _, err := Render(append(slices.Clone(base), strings.Fields(c.args)...), &log); err != nil {
				t.Fatal(err)
			}
			got := log.String()
			if c.want == "" {
				if strings.Contains(got, "out of range") {
					t.Errorf("%s: a warning where the table covers the detector:\n%s", c.args, got)
				}
				return
			}
			if !strings.Contains(got, "WARNING: out of range for three point interpolation "+c.want+": nearest structure factors from there on") {
				t.Errorf("%s: want the warning %q in\n%s", c.args, c.want, got)
			}
		})
	}
}
