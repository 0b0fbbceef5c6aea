package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
)

// tiny is a model that renders in moments.
var tiny = []string{"-cell", "100", "-default_F", "100", "-N", "5", "-lambda", "1", "-detpixels", "8"}

// dirNames lists the current directory's entries.
func dirNames(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// wantUsage checks that err is a usage error containing every one of want.
func wantUsage(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, models.ErrUsage) {
		t.Errorf("%s: error %v, want a usage error", what, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q lacks %q", what, err, w)
		}
	}
}

// TestDuplicateOutputs: two outputs that are one file (however spelled,
// through links, or both standard output) are refused before anything is
// rendered or written, naming both flags; the structure-factor cache a
// run with -hkl writes counts as an output. Two outputs to /dev/null are
// fine.
func TestDuplicateOutputs(t *testing.T) {
	inDir(t, []string{"P1.hkl"}, func() {
		os.WriteFile("old.bin", []byte("OLD"), 0o644)
		os.Link("old.bin", "hard.bin")
		os.Symlink("old.bin", "soft.bin")
		os.Mkdir("d", 0o755)
		os.Symlink("d", "dl")
		before := dirNames(t)
		for _, c := range []struct {
			args []string
			want []string
		}{
			{[]string{"-floatfile", "o.bin", "-intfile", "o.img", "-expt", "o.img"}, []string{"-intfile o.img", "-expt o.img"}},
			{[]string{"-floatfile", "o.bin", "-intfile", "./o.bin"}, []string{"-floatfile o.bin", "-intfile ./o.bin"}},
			{[]string{"-floatfile", "d/o.bin", "-pgmfile", "dl/o.bin"}, []string{"-floatfile d/o.bin", "-pgmfile dl/o.bin"}},
			{[]string{"-floatfile", "old.bin", "-noisefile", "hard.bin"}, []string{"-floatfile old.bin", "-noisefile hard.bin"}},
			{[]string{"-floatfile", "soft.bin", "-intfile", "old.bin"}, []string{"-floatfile soft.bin", "-intfile old.bin"}},
			{[]string{"-hkl", "P1.hkl", "-floatfile", "x.bin", "-intfile", "x.img", "-dump", "x.img"}, []string{"-dump x.img", "-intfile x.img"}},
			{[]string{"-hkl", "P1.hkl", "-floatfile", "Fdump.bin"}, []string{"-dump Fdump.bin", "-floatfile Fdump.bin"}},
			{[]string{"-floatfile", "-", "-intfile", "-"}, []string{"-floatfile -", "-intfile -", "standard output"}},
			{[]string{"-floatfile", "x.bin", "-noisefile", "-", "-pgmfile", "/dev/stdout"}, []string{"-noisefile -", "-pgmfile /dev/stdout"}},
			{[]string{"-floatfile", "x.bin", "-intfile", "-", "-expt", "-"}, []string{"-intfile -", "-expt -"}},
		} {
			var stdout, stderr bytes.Buffer
			err := SimulateStreams(append(slices.Clone(tiny), c.args...), &stdout, &stderr)
			wantUsage(t, fmt.Sprint(c.args), err, c.want...)
			if stdout.Len() != 0 {
				t.Errorf("%q: %d bytes on stdout", c.args, stdout.Len())
			}
			if got := dirNames(t); !slices.Equal(got, before) {
				t.Errorf("%q: directory holds %v, want %v", c.args, got, before)
			}
			if b, _ := os.ReadFile("old.bin"); string(b) != "OLD" {
				t.Fatalf("%q: old.bin replaced", c.args)
			}
		}
		if err := Simulate(append(slices.Clone(tiny), "-floatfile", "/dev/null", "-intfile", "/dev/null"), io.Discard); err != nil {
			t.Errorf("two outputs to /dev/null: %v", err)
		}
	})
}

// TestSeriesDuplicateOutputs: a series compares every image's names, not
// only the first's: the experiment list named as the second of three
// images is refused as well as two templates giving one name.
func TestSeriesDuplicateOutputs(t *testing.T) {
	inTemp(t)
	model := append([]string{"-osc", "1"}, tiny...)
	for _, c := range []struct {
		argv []string
		want []string
	}{
		{[]string{"--frames", "2", "-noisefile", "a_#.img", "--expt", "a_1.img"}, []string{"-noisefile a_1.img", "--expt a_1.img"}},
		{[]string{"--frames", "3", "-noisefile", "a_#.img", "--expt", "./a_2.img"}, []string{"-noisefile a_2.img", "--expt ./a_2.img"}},
		{[]string{"--frames", "2", "-noisefile", "a_#.img", "-intfile", "a_#.img"}, []string{"-intfile a_1.img", "-noisefile a_1.img"}},
		{[]string{"--frames", "2", "-noisefile", "a_#.img", "-floatfile", "a_#.img"}, []string{"-floatfile a_1.img", "-noisefile a_1.img"}},
		// Two templates that meet at different images: the noise image 1
		// and the integer image 2 are both a12.img.
		{[]string{"--frames", "2", "-noisefile", "a#2.img", "-intfile", "a1#.img"}, []string{"-noisefile a12.img", "-intfile a12.img"}},
	} {
		var out bytes.Buffer
		err := Series(append(c.argv, model...), &out, &out)
		wantUsage(t, fmt.Sprint(c.argv), err, c.want...)
		if got := dirNames(t); len(got) != 0 {
			t.Errorf("%q: directory holds %v", c.argv, got)
		}
	}
}

// TestSeriesChecksEveryImage: a destination that cannot be written at the
// third of four images fails the series before the first is rendered.
func TestSeriesChecksEveryImage(t *testing.T) {
	inTemp(t)
	os.Mkdir("a_3.img", 0o755)
	var out bytes.Buffer
	err := Series(append([]string{"--frames", "4", "-osc", "1", "-noisefile", "a_#.img"}, tiny...), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "a_3.img") {
		t.Errorf("error %v, want one naming a_3.img", err)
	}
	if got := dirNames(t); !slices.Equal(got, []string{"a_3.img"}) {
		t.Errorf("directory holds %v", got)
	}
	if strings.Contains(out.String(), "image 1") {
		t.Errorf("rendered before refusing:\n%s", out.String())
	}
}

// TestNoNoise: -nonoise after -noisefile writes no noise image, and
// -noisefile after -nonoise does, as in the reference (whichever comes
// last), in simulate and series.
func TestNoNoise(t *testing.T) {
	inTemp(t)
	if err := Simulate(append(slices.Clone(tiny), "-floatfile", "f.bin", "-noisefile", "n.img", "-nonoise"), io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t); !slices.Equal(got, []string{"f.bin"}) {
		t.Errorf("-noisefile n.img -nonoise: directory holds %v", got)
	}
	if err := Simulate(append(slices.Clone(tiny), "-floatfile", "f.bin", "-nonoise", "-noisefile", "n.img"), io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t); !slices.Equal(got, []string{"f.bin", "n.img"}) {
		t.Errorf("-nonoise -noisefile n.img: directory holds %v", got)
	}
	os.Remove("f.bin")
	os.Remove("n.img")
	var out bytes.Buffer
	if err := Series(append([]string{"--frames", "2", "--expt", "none", "-osc", "1", "-floatfile", "f_#.bin", "-noisefile", "a_#.img", "-nonoise"},
		tiny...), &out, &out); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t); !slices.Equal(got, []string{"f_1.bin", "f_2.bin"}) {
		t.Errorf("series -nonoise: directory holds %v", got)
	}
}

// TestSeriesPhiLimit: a series whose last image's φ simulate would refuse
// is refused up front; models.MaxAngleDeg is simulate's own limit.
func TestSeriesPhiLimit(t *testing.T) {
	inTemp(t)
	var out bytes.Buffer
	err := Series(append([]string{"--frames", "3", "-osc", "999999", "-noisefile", "a_#.img"}, tiny...), &out, &out)
	wantUsage(t, "-osc 999999", err, "image 3", "1.999998e+06")
	err = Series(append([]string{"--frames", "3", "--first", "0", "-phi", "-1000001", "-osc", "1", "-noisefile", "a_#.img"}, tiny...), &out, &out)
	wantUsage(t, "-phi -1000001", err, "image 0", "-1.000001e+06")
	if got := dirNames(t); len(got) != 0 {
		t.Errorf("directory holds %v", got)
	}
	for _, c := range []struct {
		phi float64
		ok  bool
	}{{models.MaxAngleDeg, true}, {-models.MaxAngleDeg, true}, {math.Nextafter(models.MaxAngleDeg, math.Inf(1)), false}} {
		err := Simulate(append(slices.Clone(tiny), "-floatfile", "/dev/null", "-phi", strconv.FormatFloat(c.phi, 'g', -1, 64)), io.Discard)
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "-phi")) {
			t.Errorf("simulate -phi %g: error %v, want ok=%v (models.MaxAngleDeg is not simulate's limit?)", c.phi, err, c.ok)
		}
	}
}

// TestSeriesCounts: image counts, numbers and jobs that make no series
// are usage errors, not defaults or overflows.
func TestSeriesCounts(t *testing.T) {
	inTemp(t)
	model := append([]string{"-osc", "1", "-noisefile", "a_#.img"}, tiny...)
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"--frames", "2", "--jobs", "0"}, "--jobs 0"},
		{[]string{"--frames", "2", "--jobs", "-1"}, "--jobs -1"},
		{[]string{"--frames", "2", "--first", strconv.Itoa(math.MaxInt)}, "--first " + strconv.Itoa(math.MaxInt)},
		{[]string{"--frames", "2", "--first", strconv.Itoa(math.MaxInt - 1)}, "image " + strconv.Itoa(math.MaxInt)},
		{[]string{"--frames", strconv.Itoa(maxFrames + 1)}, "at most"},
		{[]string{"--frames", "2", "--expt", ""}, "--expt"},
	} {
		var out bytes.Buffer
		wantUsage(t, fmt.Sprint(c.argv), Series(append(c.argv, model...), &out, &out), c.want)
	}
	t.Setenv("GOBRAGG_SERIES_JOBS", "-5")
	var out bytes.Buffer
	wantUsage(t, "GOBRAGG_SERIES_JOBS=-5", Series(append([]string{"--frames", "2"}, model...), &out, &out), "-5", "GOBRAGG_SERIES_JOBS")
	if got := dirNames(t); len(got) != 0 {
		t.Errorf("directory holds %v", got)
	}
}

// TestEmptyFileName: an empty file name is refused, not read as "not
// given" (which wrote floatimage.bin for -floatfile "").
func TestEmptyFileName(t *testing.T) {
	inTemp(t)
	for _, flag := range []string{"-floatfile", "-intfile", "-noisefile", "-hkl", "-dump"} {
		err := Simulate(append(slices.Clone(tiny), flag, ""), io.Discard)
		wantUsage(t, flag, err, flag, "empty file name")
	}
	var out bytes.Buffer
	wantUsage(t, "series -intfile", Series(append([]string{"--frames", "1", "-osc", "1", "-noisefile", "a.img", "-intfile", ""}, tiny...), &out, &out), "-intfile")
	if got := dirNames(t); len(got) != 0 {
		t.Errorf("directory holds %v", got)
	}
	// A flag's value that looks like another flag is the value (as
	// ParseArgs reads it), not the flag.
	if err := Simulate(append(slices.Clone(tiny), "-floatfile", "f.bin", "-pgmfile", "-nonoise", "-noisefile", "n.img"), io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t); !slices.Equal(got, []string{"-nonoise", "f.bin", "n.img"}) {
		t.Errorf("directory holds %v", got)
	}
}

// TestAllOrNothing: a run whose second file fails (a full disk:
// /dev/full) replaces none of its files, and leaves no temporary file.
func TestAllOrNothing(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	inTemp(t)
	os.WriteFile("o.bin", []byte("OLD"), 0o644)
	for _, argv := range [][]string{
		{"-floatfile", "o.bin", "-intfile", "/dev/full"},
		{"-floatfile", "o.bin", "-noisefile", "n.img", "-pgmfile", "/dev/full"},
	} {
		err := Simulate(append(slices.Clone(tiny), argv...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "/dev/full") {
			t.Errorf("%q: error %v", argv, err)
		}
		if b, _ := os.ReadFile("o.bin"); string(b) != "OLD" {
			t.Errorf("%q: o.bin replaced", argv)
		}
		if got := dirNames(t); !slices.Equal(got, []string{"o.bin"}) {
			t.Errorf("%q: directory holds %v", argv, got)
		}
	}
	// One image of a series likewise.
	var out bytes.Buffer
	err := Series(append([]string{"--frames", "1", "--expt", "none", "-osc", "1", "-floatfile", "o.bin", "-intfile", "/dev/full"}, tiny...), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "-intfile /dev/full") {
		t.Errorf("series: error %v", err)
	}
	if b, _ := os.ReadFile("o.bin"); string(b) != "OLD" {
		t.Error("series: o.bin replaced")
	}
}

// TestWriteAll: writeAll writes every file, in order, or, when one
// fails, none, naming the one that failed.
func TestWriteAll(t *testing.T) {
	inTemp(t)
	os.WriteFile("a", []byte("OLD"), 0o644)
	put := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	bad := func(io.Writer) error { return errors.New("broken") }
	err := writeAll(formats.Output{Log: io.Discard}, []outFile{{"-one", "a", put("new a")}, {"-two", "b", put("b")}, {"-three", "c", bad}})
	if err == nil || !strings.HasPrefix(err.Error(), "-three c:") || !strings.Contains(err.Error(), "broken") {
		t.Errorf("error %v", err)
	}
	if got := dirNames(t); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after a failure the directory holds %v", got)
	}
	if b, _ := os.ReadFile("a"); string(b) != "OLD" {
		t.Errorf("a replaced: %q", b)
	}
	if err := writeAll(formats.Output{Log: io.Discard}, []outFile{{"-one", "a", put("new a")}, {"-two", "b", put("b")}}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "new a", "b": "b"} {
		if b, _ := os.ReadFile(name); string(b) != want {
			t.Errorf("%s holds %q, want %q", name, b, want)
		}
	}
}

// TestBenchThreadsLimit: more threads than CPUs are refused before any
// process runs.
func TestBenchThreadsLimit(t *testing.T) {
	var out bytes.Buffer
	n := runtime.NumCPU() + 1
	wantUsage(t, "--threads", Bench([]string{"--threads", strconv.Itoa(n), "--cases", "cubic1024", "--runs", "1"}, &out),
		"--threads "+strconv.Itoa(n))
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
}

// TestBenchChildFailure: a child that dies with a long stderr (a Go
// crash's stack dump) is reported in one line: its first.
func TestBenchChildFailure(t *testing.T) {
	script := `echo "fatal error: runtime: out of memory" >&2; i=0; while [ $i -lt 500 ]; do echo "goroutine $i" >&2; i=$((i+1)); done; exit 2`
	_, _, err := timeProcess(t.TempDir(), nil, "/bin/sh", "-c", script)
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "fatal error: runtime: out of memory") ||
		!strings.Contains(msg, "500 more lines") {
		t.Errorf("error %q", msg)
	}
	if got := firstLine(strings.Repeat("x", 300)); len([]rune(got)) != 201 {
		t.Errorf("a long line cut to %d characters", len([]rune(got)))
	}
}
