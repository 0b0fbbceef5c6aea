package main

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/gobragg/gobragg/cmd/gobragg/interrupt"
	"github.com/urfave/cli/v2"
)

// TestMain lets the test binary stand in for gobragg: with GOBRAGG_MAIN
// set it runs main with the remaining arguments.
func TestMain(m *testing.M) {
	if os.Getenv("GOBRAGG_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCmd(t, "simulate", args...)
}

func runCmd(t *testing.T, sub string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{sub}, args...)...)
	cmd.Env = append(os.Environ(), "GOBRAGG_MAIN=1")
	cmd.Dir = t.TempDir()
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// TestExitCodes: bad input is one line on stderr naming the problem, a
// non-zero exit and no stack trace.
func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-cell", "100", "-default_F", "1", "-nonsense"}, exitUsage, "unknown flag -nonsense"},
		{[]string{"-cell", "100", "-default_F", "1", "-lambda", "x"}, exitUsage, `-lambda: "x" is not a number`},
		{[]string{"-cell", "100", "-hkl", "missing.hkl"}, exitFailure, "missing.hkl"},
	} {
		_, stderr, code := run(t, c.args...)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", c.args, code, c.code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], c.want) || strings.Contains(stderr, "goroutine") {
			t.Errorf("%q: stderr %q, want one line containing %q", c.args, stderr, c.want)
		}
	}
	stdout, stderr, code := run(t, "-cell", "100", "-default_F", "1", "-detpixels", "8", "-floatfile", "x.bin")
	if code != 0 || !strings.Contains(stdout, "max_I =") {
		t.Errorf("good run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestGradcheckExit: gradcheck's mistakes exit like simulate's, and a
// passing check exits 0.
func TestGradcheckExit(t *testing.T) {
	model := []string{"-cell", "70", "80", "90", "75", "85", "95", "-default_F", "100", "-N", "5", "-lambda", "1",
		"-pixel", "0.4", "-detpixels", "24"}
	_, stderr, code := runCmd(t, "gradcheck", append([]string{"--params", "bogus"}, model...)...)
	if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "bogus") {
		t.Errorf("bad --params: exit %d, stderr %q", code, stderr)
	}
	stdout, stderr, code := runCmd(t, "gradcheck", append([]string{"--params", "a,distance"}, model...)...)
	if code != 0 || !strings.Contains(stdout, "distance") {
		t.Errorf("good check: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestPanicExit: a panic anywhere in a command (here a stand-in command
// that panics, and one whose pixel workers panic) is one line on stderr
// and exit status 3, neither usage (2) nor ordinary failure (1).
func TestPanicExit(t *testing.T) {
	var stdout, stderr strings.Builder
	a := newApp(&stdout, &stderr)
	a.Commands = append(a.Commands, &cli.Command{Name: "boom", Action: func(*cli.Context) error {
		var m map[string]int
		m["x"] = 1 // assignment to a nil map
		return nil
	}})
	code := runApp(a, []string{"gobragg", "boom"}, &stderr)
	if code != exitInternal {
		t.Errorf("exit %d, want %d", code, exitInternal)
	}
	line := strings.TrimSpace(stderr.String())
	if strings.Contains(line, "\n") || !strings.Contains(line, "internal error: assignment to entry in nil map") {
		t.Errorf("stderr %q, want one line naming the panic", stderr.String())
	}
}

// TestInterruptedExit: a command that stopped on a signal and returned
// an *interrupt.Error exits 128 + the signal's number.
func TestInterruptedExit(t *testing.T) {
	var stderr strings.Builder
	a := newApp(io.Discard, &stderr)
	a.Commands = append(a.Commands, &cli.Command{Name: "stop", Action: func(*cli.Context) error {
		return &interrupt.Error{Signal: syscall.SIGTERM}
	}})
	if code := runApp(a, []string{"gobragg", "stop"}, &stderr); code != 143 {
		t.Errorf("exit %d, want 143", code)
	}
	if !strings.Contains(stderr.String(), "interrupted by SIGTERM") {
		t.Errorf("stderr %q", stderr.String())
	}
}
