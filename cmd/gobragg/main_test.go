package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gobragg/gobragg/cmd/gobragg/interrupt"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/physics"
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

// TestVersion: --version prints the version once and exits 0.
func TestVersion(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--version")
	cmd.Env = append(os.Environ(), "GOBRAGG_MAIN=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "gobragg version ") || strings.Count(string(out), "\n") != 1 {
		t.Errorf("--version: %v, %q", err, out)
	}
}

// TestSuggestions: a misspelt command, option or flag is a usage error
// naming the nearest ones.
func TestSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"simulat"}, `unknown command "simulat" (did you mean simulate?)`},
		{[]string{"fit", "--observd", "x.img", "-cell", "100"}, "unknown option --observd (did you mean --observed?)"},
		{[]string{"gradcheck", "--param", "a", "-cell", "100"}, "unknown option --param (did you mean --params?)"},
		{[]string{"simulate", "-lamda", "1", "-cell", "100"}, "unknown flag -lamda (did you mean -lambda?)"},
		{[]string{"simulate", "--jsn"}, "did you mean --json?"},
		{[]string{"bench", "--runs", "x"}, `--runs "x": want a whole number`},
	} {
		cmd := exec.Command(os.Args[0], c.args...)
		cmd.Env = append(os.Environ(), "GOBRAGG_MAIN=1")
		cmd.Dir = t.TempDir()
		var e strings.Builder
		cmd.Stderr = &e
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != exitUsage || strings.Count(strings.TrimSpace(e.String()), "\n") != 0 || !strings.Contains(e.String(), c.want) {
			t.Errorf("%q: %v, stderr %q, want exit 2 and %q", c.args, err, e.String(), c.want)
		}
	}
}

// TestHelp: simulate --help (and -h, and help simulate, each a path of
// urfave/cli's to the help printer, which builds the flag list:
// lazyHelp) lists every flag ParseArgs accepts, generated from the flag
// table; fit, gradcheck and bench --help describe every option.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"simulate", "--help"}, {"simulate", "-h"}, {"help", "simulate"}} {
		h := strings.Join(args, " ")
		out, _, code := runCmd(t, args[0], args[1:]...)
		if strings.Contains(out, "{{") {
			t.Errorf("%s prints its template:\n%s", h, out)
		}
		if code != 0 {
			t.Fatalf("%s: exit %d", h, code)
		}
		for _, f := range models.Flags() {
			for _, n := range f.Names {
				if !strings.Contains(out, " "+n+" ") && !strings.Contains(out, " "+n+",") && !strings.Contains(out, " "+n+"\n") {
					t.Errorf("%s does not list %s", h, n)
				}
			}
			if !strings.Contains(out, strings.Fields(f.Doc)[0]) {
				t.Errorf("%s lacks the text of %s", h, f.Names[0])
			}
		}
		for _, g := range []string{models.GroupCrystal, models.GroupBeam, models.GroupDetector, models.GroupOutput} {
			if !strings.Contains(out, "   "+g+":\n") {
				t.Errorf("%s lacks the group %q", h, g)
			}
		}
	}
	a := newApp(io.Discard, io.Discard)
	for _, name := range []string{"fit", "gradcheck", "bench"} {
		out, _, code := runCmd(t, name, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d", name, code)
		}
		for _, f := range a.Command(name).Flags {
			n := f.Names()[0]
			d, ok := f.(cli.DocGenerationFlag)
			if !strings.Contains(out, "--"+n+" ") || !ok || d.GetUsage() == "" {
				t.Errorf("%s --help does not describe --%s:\n%s", name, n, out)
			}
		}
	}
}

// TestCompletion: the shell completion offers nanoBragg flags after a
// single dash, a command's options after two, and commands.
func TestCompletion(t *testing.T) {
	out, _, _ := runCmd(t, "simulate", "-lamb", "--generate-bash-completion")
	if !strings.Contains(out, "-lambda\n") || strings.Contains(out, "-cell") {
		t.Errorf("simulate -lamb<TAB>: %q", out)
	}
	out, _, _ = runCmd(t, "fit", "-cell", "100", "--obs", "--generate-bash-completion")
	if strings.TrimSpace(out) != "--observed" {
		t.Errorf("fit --obs<TAB>: %q", out)
	}
	out, _, _ = runCmd(t, "--generate-bash-completion")
	for _, c := range []string{"simulate", "gradcheck", "fit", "bench", "completion"} {
		if !strings.Contains(out, c+"\n") {
			t.Errorf("commands: %q lacks %s", out, c)
		}
	}
	out, _, code := runCmd(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "complete -o default") {
		t.Errorf("completion bash: exit %d, %q", code, out)
	}
}

// TestOptionsAnywhere: double-dash options may come before, between or
// after the nanoBragg flags, as --name value or --name=value.
func TestOptionsAnywhere(t *testing.T) {
	model := []string{"-cell", "70", "80", "90", "75", "85", "95", "-default_F", "100", "-N", "5", "-lambda", "1",
		"-pixel", "0.4", "-detpixels", "24"}
	argv := append(append(append([]string{}, model[:6]...), "--params=a", "--loss", "sum"), model[6:]...)
	argv = append(argv, "--tol", "1e-5")
	stdout, stderr, code := runCmd(t, "gradcheck", argv...)
	if code != 0 || !strings.Contains(stdout, "relative tolerance 1e-05") || !strings.Contains(stdout, "\n          a     Å") ||
		strings.Contains(stdout, "alpha") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestLanesEnv: GOBRAGG_LANES picks the lane kernels simulate runs (its
// --json says which); a name this binary or CPU does not run is a usage
// error naming those it does.
func TestLanesEnv(t *testing.T) {
	avail := physics.AvailableVectorLanes()
	widest := avail[len(avail)-1]
	args := []string{"simulate", "--json", "-cell", "100", "-default_F", "100", "-N", "5", "-lambda", "6.2", "-detpixels", "16", "-floatfile", "/dev/null"}
	for _, c := range []struct {
		env, want string
		code      int
	}{
		{"scalar", `"lanes":"scalar"`, 0},
		// Unset: the widest this binary runs on this CPU (the dispatch's
		// rule; AvailableVectorLanes lists narrowest first).
		{"", `"lanes":"` + widest + `"`, 0},
		{"avx1024", "GOBRAGG_LANES=avx1024: not available here (available: scalar", exitUsage},
	} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "GOBRAGG_MAIN=1", "GOBRAGG_LANES="+c.env)
		cmd.Dir = t.TempDir()
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		out := o.String() + e.String()
		if code != c.code || !strings.Contains(strings.ReplaceAll(out, " ", ""), strings.ReplaceAll(c.want, " ", "")) {
			t.Errorf("GOBRAGG_LANES=%q: exit %d, output %q; want exit %d and %q", c.env, code, out, c.code, c.want)
		}
		if c.code != 0 && strings.Count(strings.TrimSpace(e.String()), "\n") != 0 {
			t.Errorf("GOBRAGG_LANES=%q: stderr %q, want one line", c.env, e.String())
		}
	}
}

// TestNoDocsBuild: the README's fast build passes -tags urfave_cli_no_docs
// (urfave/cli without its Markdown and man-page writers, which gobragg
// does not call): gobragg builds with it, and its help and completions
// are this test binary's (not --version: a build in a git clone names
// the commit, a test binary does not).
func TestNoDocsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("a second build of gobragg: without -short")
	}
	bin := filepath.Join(t.TempDir(), "gobragg")
	if b, err := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags urfave_cli_no_docs: %v\n%s", err, b)
	}
	for _, args := range [][]string{{"--help"}, {"simulate", "--help"}, {"completion", "bash"}, {"completion", "fish"}} {
		want, _, wcode := runCmd(t, args[0], args[1:]...)
		cmd := exec.Command(bin, args...)
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if err != nil || wcode != 0 || o.String() != want || want == "" {
			t.Errorf("%q: %v (stderr %q); stdout differs from the default build's: %v", args, err, e.String(), o.String() != want)
		}
	}
}
