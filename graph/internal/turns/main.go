// Command turns times builds of the graph package against each other, run
// by run: the timing harness for performance changes on a machine whose
// speed drifts by up to 2× within a minute (the 2-vCPU machines this
// project is measured on), where benchmarks run one after another, or
// whole processes alternated, cannot tell a few per cent.
//
// Linux only (named pipes, taskset). Build the graph test binary of each
// commit to compare, then give them, the first the baseline (from the
// repository's root):
//
//	go test -c -o /tmp/old.test ./graph   # (at the old commit)
//	go test -c -o /tmp/new.test ./graph
//	go run ./graph/internal/turns -case cubic1024 -mode gradient -n 40 /tmp/old.test /tmp/new.test
//
// (For a commit older than the harness, copy graph/turns_test.go into its
// tree before building.) Each binary runs as a server (GOBRAGG_TURNS, see
// graph/turns_test.go): it
// builds the case's simulator once and runs it when handed the turn
// through a named pipe. All are pinned to one CPU (taskset) and take
// turns, in alternating order from round to round, so that each round's
// runs see the same machine. It prints each binary's median time and the
// median and quartiles of the per-round ratios of each to each one before
// it. Two
// copies of one build give 0.98–1.00 with 40–80 rounds here. A binary
// may be given as path:mode to run the other mode (forward against
// gradient: the gradient/forward ratio).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	n := flag.Int("n", 40, "rounds")
	cs := flag.String("case", "cubic1024", "cubic256, cubic1024, cubic4096, mosaic10 or layers")
	mode := flag.String("mode", "gradient", "forward or gradient")
	cpu := flag.String("cpu", "1", "the CPU the binaries are pinned to (taskset -c)")
	flag.Parse()
	if err := run(*n, *cs, *mode, *cpu, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "turns:", err)
		os.Exit(1)
	}
}

// server is one binary taking turns.
type server struct {
	name     string
	cmd      *exec.Cmd
	in, out  *os.File // the pipes: the turn to it, back from it
	times    *bufio.Scanner
	runs     []float64
	finished bool
}

func run(rounds int, cs, mode, cpu string, bins []string) error {
	if len(bins) < 2 || rounds < 1 {
		return errors.New("give at least two test binaries and one round or more")
	}
	dir, err := os.MkdirTemp("", "turns")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var ss []*server
	defer func() {
		for _, s := range ss {
			if !s.finished {
				s.cmd.Process.Kill()
				s.cmd.Wait()
			}
		}
	}()
	for i, b := range bins {
		path, m, ok := strings.Cut(b, ":")
		if !ok {
			m = mode
		}
		s, err := start(dir, i, path, cs, m, cpu)
		if err != nil {
			return err
		}
		s.name = b
		ss = append(ss, s)
	}
	for r := 0; r < rounds; r++ {
		for j := range ss {
			if r%2 == 1 {
				j = len(ss) - 1 - j
			}
			if err := ss[j].turn(); err != nil {
				return fmt.Errorf("%s: %v", ss[j].name, err)
			}
		}
	}
	for _, s := range ss {
		s.in.Write([]byte{'q'})
		s.finished = true
		if err := s.cmd.Wait(); err != nil {
			return fmt.Errorf("%s: %v", s.name, err)
		}
	}
	for _, s := range ss {
		fmt.Printf("%s: median %.3f ms\n", s.name, median(s.runs))
	}
	for j, s := range ss {
		for _, b := range ss[:j] {
			r := make([]float64, rounds)
			for i := range r {
				r[i] = s.runs[i] / b.runs[i]
			}
			sort.Float64s(r)
			fmt.Printf("%s / %s: median %.3f (quartiles %.3f, %.3f; %d rounds)\n", s.name, b.name,
				median(r), r[rounds/4], r[(3*rounds)/4], rounds)
		}
	}
	return nil
}

// start starts binary path as the i'th server.
func start(dir string, i int, path, cs, mode, cpu string) (*server, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fin, fout := filepath.Join(dir, fmt.Sprint("in", i)), filepath.Join(dir, fmt.Sprint("out", i))
	for _, f := range []string{fin, fout} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command("taskset", "-c", cpu, abs)
	cmd.Env = append(os.Environ(), "GOBRAGG_TURNS="+strings.Join([]string{fin, fout, cs, mode}, ","))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, times: bufio.NewScanner(stdout)}
	// Opened for reading and writing, a pipe's end does not wait for the
	// other's (Linux): a server that fails before it opens its ends is
	// seen at its first turn, whose time line does not come.
	if s.in, err = os.OpenFile(fin, os.O_RDWR, 0); err != nil {
		return nil, err
	}
	if s.out, err = os.OpenFile(fout, os.O_RDWR, 0); err != nil {
		return nil, err
	}
	return s, nil
}

// turn hands the server the turn and waits for its run's time.
func (s *server) turn() error {
	if _, err := s.in.Write([]byte{'t'}); err != nil {
		return err
	}
	if !s.times.Scan() {
		return errors.New("ended before its turn was done")
	}
	t, err := strconv.ParseFloat(s.times.Text(), 64)
	if err != nil {
		return err
	}
	b := make([]byte, 1)
	if _, err := s.out.Read(b); err != nil {
		return err
	}
	s.runs = append(s.runs, t)
	return nil
}

func median(x []float64) float64 {
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	return y[len(y)/2]
}
