package app

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models/formats"
)

// BenchmarkCases times each standard performance case in this process as
// simulate runs it (render into float32, statistics, float image written
// to nowhere), after a first run that compiles its program: the kernel
// and the per-run overheads, without process start and compile. `gobragg
// bench` times the whole processes.
func BenchmarkCases(b *testing.B) {
	inputs, err := filepath.Abs("../../../testdata/inputs")
	if err != nil {
		b.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, bc := range BenchCases {
		b.Run(bc.Name, func(b *testing.B) {
			// A directory per case: reading -hkl writes Fdump.bin, which a
			// later case without -hkl would read.
			if err := os.Chdir(b.TempDir()); err != nil {
				b.Fatal(err)
			}
			args, err := bc.Resolve(inputs)
			if err != nil {
				b.Fatal(err)
			}
			r, _, err := Render(args, io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			pixels := len(r.Image)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, _, err := Render(args, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				if err := formats.WriteFloatImage(io.Discard, r.Image); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(pixels)*float64(b.N)/b.Elapsed().Seconds(), "pixels/s")
		})
	}
}

// TestBenchErrors: bad bench options are refused before anything runs.
func TestBenchErrors(t *testing.T) {
	var out bytes.Buffer
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"--cases", "nosuch"}, "no case"},
		{[]string{"--runs", "0"}, "--runs"},
		{[]string{"--threads", "x"}, "--threads"},
		{[]string{"-N", "5"}, "no nanoBragg flags"},
		{[]string{"--inputs", t.TempDir(), "--cases", "mosaic"}, "P1.hkl"},
		{[]string{"--ref", filepath.Join(t.TempDir(), "nothing")}, "--ref"},
	} {
		if err := Bench(c.argv, &out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.argv, err, c.want)
		}
	}
}

// TestBenchTableFormat: the table has one row per case with its numbers,
// and the reference columns only when the reference ran.
func TestBenchTableFormat(t *testing.T) {
	rows := []benchRow{{name: "cubic1024", pixels: 1 << 20, seconds: 0.6, user: 0.25, sys: 0.125, rssMB: 20, mallocs: 7, allocMB: 4.5,
		refSeconds: 2, refUser: 1.6, refRSSMB: 9, issueRefSecond: 0.2}}
	var with, without bytes.Buffer
	if err := writeBenchTable(&with, rows, 3, 1, true); err != nil {
		t.Fatal(err)
	}
	if err := writeBenchTable(&without, rows, 3, 1, false); err != nil {
		t.Fatal(err)
	}
	// Every value in its column, in the header's order: 1048576 pixels in
	// 0.6 s are 1.75e+06 pixels/s, 0.6 s against 2 s 0.30, 0.25 s of user
	// time against 1.6 s 0.16.
	lines := strings.Split(strings.TrimSpace(with.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("table with reference: %d lines, want 3:\n%s", len(lines), with.String())
	}
	wantHead := "case pixels time s user s sys s pixels/s allocs alloc MB peak RSS MB ref s ref user s ref RSS MB time/ref user/ref issue ref s"
	if got := strings.Join(strings.Fields(lines[1]), " "); got != wantHead {
		t.Errorf("header %q, want %q", got, wantHead)
	}
	wantRow := "cubic1024 1048576 0.600 0.250 0.125 1.75e+06 7 4.5 20.0 2.000 1.600 9.0 0.30 0.16 0.20"
	if got := strings.Join(strings.Fields(lines[2]), " "); got != wantRow {
		t.Errorf("row %q, want %q", got, wantRow)
	}
	if strings.Contains(without.String(), "time/ref") || strings.Contains(without.String(), "user/ref") {
		t.Errorf("reference columns without a reference:\n%s", without.String())
	}
	// A case the issue did not time: "-" in its last column, not 0.00.
	var other bytes.Buffer
	if err := writeBenchTable(&other, []benchRow{{name: "interpolate", pixels: 1, seconds: 1}}, 3, 1, false); err != nil {
		t.Fatal(err)
	}
	last := strings.Fields(strings.Split(strings.TrimSpace(other.String()), "\n")[2])
	if got := last[len(last)-1]; got != "-" {
		t.Errorf("issue reference of a case without one: %q, want -:\n%s", got, other.String())
	}
}

// TestBenchCPUTimes: a child that spends its time computing reports that
// time as user CPU time, within its wall time; one that spends it in
// system calls (dd copying a byte at a time) as system time; one that
// sleeps reports next to none. (The shell's loop, dd and sleep are the
// independent source.)
func TestBenchCPUTimes(t *testing.T) {
	busy, _, err := timeProcess(t.TempDir(), nil, "/bin/sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if err != nil {
		t.Fatal(err)
	}
	if busy.user < 0.05 || busy.user < busy.sys || busy.user+busy.sys > 1.1*busy.wall+0.02 {
		t.Errorf("busy child: wall %.3f s, user %.3f s, sys %.3f s", busy.wall, busy.user, busy.sys)
	}
	calls, _, err := timeProcess(t.TempDir(), nil, "/bin/sh", "-c", "dd if=/dev/zero of=/dev/null bs=1 count=300000 2>/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	if calls.sys < 0.02 || calls.sys < calls.user || calls.user+calls.sys > 1.1*calls.wall+0.02 {
		t.Errorf("child in system calls: wall %.3f s, user %.3f s, sys %.3f s", calls.wall, calls.user, calls.sys)
	}
	idle, _, err := timeProcess(t.TempDir(), nil, "/bin/sh", "-c", "sleep 0.3")
	if err != nil {
		t.Fatal(err)
	}
	if idle.wall < 0.3 || idle.user+idle.sys > 0.1 {
		t.Errorf("sleeping child: wall %.3f s, user %.3f s, sys %.3f s", idle.wall, idle.user, idle.sys)
	}
	if a, b := ratio(1, 0), ratio(1, 4); a != "-" || b != "0.25" {
		t.Errorf("ratio(1, 0) = %q, ratio(1, 4) = %q", a, b)
	}
}

// TestBenchMedianTimes: each of a case's times is its own median over the
// runs (the runs' medians need not come from one run).
func TestBenchMedianTimes(t *testing.T) {
	wall, user, sys := medianTimes([]procTime{{3, 0.1, 0.9}, {1, 0.3, 0.7}, {2, 0.2, 0.8}})
	if wall != 2 || user != 0.2 || sys != 0.8 {
		t.Errorf("medians %g %g %g, want 2 0.2 0.8", wall, user, sys)
	}
}
