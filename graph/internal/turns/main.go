//go:build linux

// Command turns times builds of the graph package against each other, run
// by run: the timing harness for performance changes on a machine whose
// speed drifts by up to 2× within a minute (the 2-vCPU machines this
// project is measured on), where benchmarks run one after another, or
// whole processes alternated, cannot tell a few per cent.
//
// Linux only (taskset). Build the graph test binary of each commit to
// compare, then give them, the first the baseline:
//
//	go test -c -o /tmp/old.test ./graph   # (at the old commit)
//	go test -c -o /tmp/new.test ./graph
//	go run ./graph/internal/turns -case cubic1024 -mode gradient -n 40 /tmp/old.test /tmp/new.test
//
// (For a commit older than the harness, copy graph/turns_test.go into its
// tree before building.) Each binary runs as a server (GOBRAGG_TURNS, see
// graph/turns_test.go): it builds the case's simulator once and runs it
// each time it is handed the turn on its stdin. All are pinned to one CPU
// and take turns, in alternating order from round to round, so that each
// round's runs see the same machine. It prints each binary's median and
// fastest time and the median and quartiles of the per-round ratios of
// each to each one before it, and the ratio of their fastest runs (where
// other work on the machine stretches some runs at random, the fastest
// are the least disturbed). Two copies of one build give 0.98–0.99 with 40–80 rounds
// here. A binary may be given as path:forward, path:gradient,
// path:crystal (the crystal's gradient alone, Simulator.CrystalGradient:
// a cell-and-orientation fit's), path:size (the crystal's, N's and the
// fluence's, Simulator.GradientFor) or path:detector (the crystal's, the
// fluence's and the detector's) to run that
// mode instead of -mode (forward against gradient: the gradient/forward
// ratio).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 40, "rounds")
	cs := flag.String("case", "cubic1024", "cubic256, cubic1024, cubic4096, mosaic10, mosaic, interpolate, gauss, round, tophat, n50, many or layers")
	mode := flag.String("mode", "gradient", "forward, gradient, crystal, size or detector")
	cpu := flag.String("cpu", "1", "the CPU the binaries are pinned to (taskset -c)")
	wait := flag.Duration("timeout", 5*time.Minute, "the longest a server may take to get ready or to run once")
	flag.Parse()
	if err := run(*n, *cs, *mode, *cpu, *wait, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "turns:", err)
		os.Exit(1)
	}
}

// modes are the runs a server can time (graph/turns_test.go).
var modes = map[string]bool{"forward": true, "gradient": true, "crystal": true, "size": true, "detector": true}

// server is one binary taking turns.
type server struct {
	name  string
	cmd   *exec.Cmd
	in    io.WriteCloser // its stdin: the turns
	lines chan string    // its stdout's lines; closed at its end
	runs  []float64      // the times of its runs, ms
}

func run(rounds int, cs, mode, cpu string, wait time.Duration, bins []string) error {
	if len(bins) < 2 || rounds < 1 {
		return errors.New("give at least two test binaries and one round or more")
	}
	if !modes[mode] {
		return fmt.Errorf("-mode %q is not forward, gradient, crystal, size or detector", mode)
	}
	var ss []*server
	defer func() {
		for _, s := range ss {
			if s.cmd.ProcessState == nil {
				s.cmd.Process.Kill()
				s.cmd.Wait()
			}
		}
	}()
	for _, b := range bins {
		path, m := b, mode
		if i := strings.LastIndexByte(b, ':'); i >= 0 && modes[b[i+1:]] {
			path, m = b[:i], b[i+1:]
		}
		s, err := start(path, cs, m, cpu)
		if err != nil {
			return fmt.Errorf("%s: %v", b, err)
		}
		s.name = b
		ss = append(ss, s)
	}
	for _, s := range ss {
		line, err := s.line(wait)
		if err != nil {
			return fmt.Errorf("%s: %v", s.name, err)
		}
		if line != "ready" {
			return fmt.Errorf("%s: not a turns server (it said %q; built without graph/turns_test.go?)", s.name, line)
		}
	}
	for r := 0; r < rounds; r++ {
		for j := range ss {
			if r%2 == 1 {
				j = len(ss) - 1 - j
			}
			if err := ss[j].turn(wait); err != nil {
				return fmt.Errorf("%s: %v", ss[j].name, err)
			}
		}
	}
	for _, s := range ss {
		s.in.Write([]byte{'q'})
		s.in.Close()
		if err := s.cmd.Wait(); err != nil {
			return fmt.Errorf("%s: %v", s.name, err)
		}
	}
	for _, s := range ss {
		fmt.Printf("%s: median %.3f ms, fastest %.3f ms\n", s.name, quantile(s.runs, 0.5), quantile(s.runs, 0))
	}
	for j, s := range ss {
		for _, b := range ss[:j] {
			r := make([]float64, rounds)
			for i := range r {
				r[i] = s.runs[i] / b.runs[i]
			}
			fmt.Printf("%s / %s: median %.3f (quartiles %.3f, %.3f; %d rounds), fastest runs %.3f\n", s.name, b.name,
				quantile(r, 0.5), quantile(r, 0.25), quantile(r, 0.75), rounds, quantile(s.runs, 0)/quantile(b.runs, 0))
		}
	}
	return nil
}

// start starts the test binary at path as a server of case cs in mode m,
// pinned to cpu.
func start(path, cs, m, cpu string) (*server, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	// -test.run and -test.bench matching nothing: a binary that is not a
	// server says so at once instead of running its tests.
	cmd := exec.Command("taskset", "-c", cpu, abs, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), "GOBRAGG_TURNS="+cs+","+m)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, in: in, lines: make(chan string)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	return s, nil
}

// line returns the server's next line, waiting at most wait.
func (s *server) line(wait time.Duration) (string, error) {
	select {
	case l, ok := <-s.lines:
		if !ok {
			return "", errors.New("ended (see its message above)")
		}
		return l, nil
	case <-time.After(wait):
		return "", fmt.Errorf("no answer within %v", wait)
	}
}

// turn hands the server the turn and records its run's time.
func (s *server) turn(wait time.Duration) error {
	if _, err := s.in.Write([]byte{'t'}); err != nil {
		return err
	}
	l, err := s.line(wait)
	if err != nil {
		return err
	}
	t, err := strconv.ParseFloat(l, 64)
	if err != nil {
		return fmt.Errorf("not a time: %q", l)
	}
	s.runs = append(s.runs, t)
	return nil
}

// quantile is the q-quantile of x, interpolated linearly between the
// sorted values (the median of an even count: the mean of the middle
// two).
func quantile(x []float64, q float64) float64 {
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	h := q * float64(len(y)-1)
	i := int(math.Floor(h))
	if i+1 >= len(y) {
		return y[len(y)-1]
	}
	return y[i] + (h-float64(i))*(y[i+1]-y[i])
}
