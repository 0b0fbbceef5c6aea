//go:build unix

package app

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gobragg/gobragg/models"
)

// BenchmarkSeries times a 10-image series per image three ways, taken in
// turn within each iteration so that the machine's other load falls on
// all three alike: rendered in this process with --jobs 1 and --jobs 2,
// and as ten `gobragg simulate` processes one after the other (the binary
// is built first). It reports wall time and CPU time (user + system) per
// image. Cases: the DIALS test's 1024×768 series (5 φ steps an image,
// water background, noise as miniCBF) and a 256² one, where the fixed
// costs of a process (start, parsing, compiling the program) weigh more.
func BenchmarkSeries(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "gobragg")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	small := []string{"-cell", "57", "66", "79", "83", "95", "102", "-misset", "25", "-12", "40", "-default_F", "100",
		"-N", "8", "-lambda", "1.0", "-distance", "120", "-pixel", "0.2", "-detpixels", "256", "-oversample", "1",
		"-osc", "1", "-phisteps", "5", "-fluence", "1e29", "-water", "0.012", "-seed", "201"}
	const frames = 10
	for _, c := range []struct {
		name string
		argv []string
	}{{"1024x768", dialsSeries}, {"256x256", small}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			series := func(jobs int) (wall, cpu float64) {
				argv := append([]string{"--frames", strconv.Itoa(frames), "--jobs", strconv.Itoa(jobs), "--expt", "none"}, c.argv...)
				argv = append(argv, "-noisefile", filepath.Join(dir, "s"+strconv.Itoa(jobs)+"_###.cbf"))
				c0, t0 := cpuSelf(), time.Now()
				if err := Series(argv, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0).Seconds(), cpuSelf() - c0
			}
			processes := func() (wall, cpu float64) {
				t0 := time.Now()
				for k := 0; k < frames; k++ {
					argv := models.ReplaceFlag(models.ReplaceFlag(c.argv, "-phi", []string{strconv.Itoa(k)}), "-seed", []string{strconv.Itoa(201 + k)})
					argv = append(append([]string{"simulate"}, argv...), "-floatfile", os.DevNull,
						"-noisefile", filepath.Join(dir, "p_"+pad2(k)+".cbf"))
					cmd := exec.Command(bin, argv...)
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("%v\n%s", err, out)
					}
					cpu += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
				}
				return time.Since(t0).Seconds(), cpu
			}
			series(1) // compile outside the timing, as every process does in its own
			var w1, c1, w2, c2, wp, cp float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w, c := series(1)
				w1, c1 = w1+w, c1+c
				w, c = series(2)
				w2, c2 = w2+w, c2+c
				w, c = processes()
				wp, cp = wp+w, cp+c
			}
			n := float64(b.N * frames)
			b.ReportMetric(w1/n, "s/image-jobs1")
			b.ReportMetric(w2/n, "s/image-jobs2")
			b.ReportMetric(wp/n, "s/image-processes")
			b.ReportMetric(c1/n, "cpu-s/image-jobs1")
			b.ReportMetric(c2/n, "cpu-s/image-jobs2")
			b.ReportMetric(cp/n, "cpu-s/image-processes")
		})
	}
}

// cpuSelf is this process's CPU time so far (user + system), s.
func cpuSelf() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
