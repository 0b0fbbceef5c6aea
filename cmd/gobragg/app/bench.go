package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gobragg/gobragg/models/formats"
	"github.com/gobragg/gobragg/physics"
	"github.com/urfave/cli/v2"
)

// BenchUsage describes the bench arguments.
const BenchUsage = ``

// benchFlags are bench's options.
func benchFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "runs", Value: 3, Usage: "`N` processes per case (the median is reported)"},
		&cli.StringFlag{Name: "cases", Usage: "a comma `LIST` of cases (default all: " + caseNames() + ")"},
		&cli.StringFlag{Name: "inputs", Value: filepath.Join("testdata", "inputs"), Usage: "`DIR`ectory holding the mosaic case's P1.hkl and A.mat and the interpolate case's P1_varied.hkl"},
		&cli.IntFlag{Name: "threads", Value: 1, Usage: "`N` threads, at most the CPUs: GOMAXPROCS (and OMP_NUM_THREADS for the reference)"},
		&cli.StringFlag{Name: "ref", Usage: "a reference nanoBragg binary `PATH` to time beside gobragg", EnvVars: []string{"GOBRAGG_REFERENCE"}},
	}
}

// BenchCommand is `gobragg bench`.
func BenchCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:         "bench",
		Usage:        "time the standard performance cases as whole simulate processes (optionally beside the reference)",
		ArgsUsage:    BenchUsage,
		Flags:        benchFlags(),
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			return runBench(c, c.Args().Slice(), stdout)
		},
	}
}

// BenchCase is one standard timing case: a simulate command line. Inputs
// named by the -hkl and -matrix flags are files in the inputs directory.
type BenchCase struct {
	Name string
	Argv []string
	// RefSeconds is the reference's time on this machine type (one
	// thread, whole process, median of 3) from the performance issue (0:
	// not one of its cases).
	RefSeconds float64
}

// BenchCases are the standard cases of the performance targets.
var BenchCases = []BenchCase{
	{"cubic1024", strings.Fields("-cell 100 100 100 90 90 90 -lambda 6.2 -N 5 -default_F 100 -distance 100 -pixel 0.1 -detpixels 1024"), 0.20},
	{"cubic4096", strings.Fields("-cell 100 100 100 90 90 90 -lambda 6.2 -N 5 -default_F 100 -distance 100 -pixel 0.1 -detpixels 4096"), 2.99},
	{"mosaic", strings.Fields("-hkl P1.hkl -matrix A.mat -lambda 6.2 -N 5 -default_F 100 -distance 100 -detsize 100 -pixel 0.1 -mosaic_spread 1.0 -mosaic_domains 10"), 1.12},
	{"triclinic", strings.Fields("-misset -89.968546 -31.328953 177.753396 -cell 70 80 90 75 85 95 -default_F 100 -N 5 -lambda 1.0 -detpixels 512"), 0.15},
	{"comprehensive", strings.Fields("-cell 70 80 90 75 85 95 -N 5 -mosaic 0.5 -mosaic_dom 5 -mosaic_seed 12345 -phi 1e-12 -osc 90 -phisteps 9 " +
		"-detector_rotx 5 -detector_roty 3 -detector_rotz 2 -twotheta 10 -detector_abs 500 -detector_thick 450 -thicksteps 5 -polar 0.95 " +
		"-detpixels 512 -pixel 0.1 -distance 100 -lambda 6.2 -oversample 1 -seed 42 -default_F 100 -mosflm -misset 15 25 35"), 5.0},
	// Not one of the issue's: structure factors from a table with N < 3,
	// which both programs interpolate tricubically by default
	// (P1_varied.hkl's h, k, l from −8 to 8 cover the detector: no
	// switch-off).
	{"interpolate", strings.Fields("-hkl P1_varied.hkl -cell 100 100 100 90 90 90 -lambda 6.2 -N 2 -distance 100 -pixel 0.1 -detpixels 512"), 0},
}

// Resolve returns the case's command line with its input files looked up in
// dir (made absolute: the runs happen in a scratch directory).
func (bc BenchCase) Resolve(dir string) ([]string, error) {
	argv := slices.Clone(bc.Argv)
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "-hkl" || argv[i] == "-matrix" {
			p, err := filepath.Abs(filepath.Join(dir, argv[i+1]))
			if err != nil {
				return nil, err
			}
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("case %s needs %s: %w (set --inputs)", bc.Name, argv[i+1], err)
			}
			argv[i+1] = p
		}
	}
	return argv, nil
}

// benchRow is one line of the table.
type benchRow struct {
	name           string
	pixels         int
	seconds        float64 // median whole-process time
	user, sys      float64 // median user and system CPU time of the process
	rssMB          float64 // peak resident memory of the process
	mallocs        uint64  // heap objects allocated by one in-process run
	allocMB        float64 // bytes allocated by one in-process run
	refSeconds     float64 // measured reference time (0: not run)
	refUser        float64 // the reference's median user CPU time
	refRSSMB       float64
	issueRefSecond float64
}

// Bench runs `gobragg bench`: each standard case as a whole `gobragg
// simulate` process (the float image written), --runs times, with
// GOMAXPROCS=--threads; with --ref the reference binary runs the same
// command lines interleaved with ours (OMP_NUM_THREADS=--threads), the
// two taking turns as the first of each pair of runs. It
// prints one table: case, pixels, median time, median user and system
// CPU time, pixels/s, allocations of one in-process run, peak RSS, and
// the reference's numbers and our ratios when measured. The CPU times
// tell the program's own work (user) from the kernel's (system: page
// faults, and writing the file, which on a slow disk or a busy page
// cache can outweigh the computation).
func Bench(argv []string, out io.Writer) error {
	return runCommand(context.Background(), BenchCommand(out), argv, out, out)
}

func runBench(c *cli.Context, rest []string, out io.Writer) error {
	if len(rest) > 0 {
		return usagef("bench takes no nanoBragg flags (got %s)", strings.Join(rest, " "))
	}
	runs, threads := c.Int("runs"), c.Int("threads")
	for _, v := range []struct {
		name string
		n    int
	}{{"runs", runs}, {"threads", threads}} {
		if v.n < 1 {
			return usagef("--%s %d: want a positive whole number", v.name, v.n)
		}
	}
	// More threads than CPUs only take turns on them, which times the
	// scheduler rather than the programs, and each costs the process
	// memory of its own: 100000 ran gobragg out of memory.
	if cpus := runtime.NumCPU(); threads > cpus {
		return usagef("--threads %d: more than this machine's %d CPUs", threads, cpus)
	}
	inputs := c.String("inputs")
	if inputs == "" {
		inputs = filepath.Join("testdata", "inputs")
	}
	var err error
	cases := BenchCases
	if s := c.String("cases"); s != "" {
		cases = nil
		for _, n := range strings.Split(s, ",") {
			i := slices.IndexFunc(BenchCases, func(c BenchCase) bool { return c.Name == n })
			if i < 0 {
				return usagef("--cases: no case %q (cases: %s)", n, caseNames())
			}
			cases = append(cases, BenchCases[i])
		}
	}
	ref := c.String("ref")
	if ref != "" {
		if ref, err = filepath.Abs(ref); err != nil {
			return err
		}
		if _, err := os.Stat(ref); err != nil {
			return fmt.Errorf("--ref: %w", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: finding this program: %w", err)
	}
	scratch, err := os.MkdirTemp("", "gobragg-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)

	// Child processes first: Linux counts the parent's resident high-water
	// mark into a child's peak (the child starts on the parent's memory
	// before exec), so the in-process runs, which hold whole images, come
	// after them.
	var rows []benchRow
	var argvs [][]string
	for _, bc := range cases {
		args, err := bc.Resolve(inputs)
		if err != nil {
			return err
		}
		argvs = append(argvs, args)
	}
	// One directory per case: a case reading -hkl leaves Fdump.bin behind,
	// and a later case without -hkl would read its structure factors.
	dirs := make([]string, len(cases))
	for i, bc := range cases {
		dirs[i] = filepath.Join(scratch, bc.Name)
		if err := os.Mkdir(dirs[i], 0o755); err != nil {
			return err
		}
	}
	floor := selfPeakMB()
	for i, bc := range cases {
		row := benchRow{name: bc.Name, issueRefSecond: bc.RefSeconds}
		env := []string{"GOMAXPROCS=" + strconv.Itoa(threads), "OMP_NUM_THREADS=" + strconv.Itoa(threads)}
		fileArgs := append(slices.Clone(argvs[i]), "-floatfile", "bench.bin")
		var ours, theirs []procTime
		runRef := func() error {
			t, rss, err := timeProcess(dirs[i], env, ref, fileArgs...)
			if err != nil {
				return fmt.Errorf("case %s: reference: %w", bc.Name, err)
			}
			theirs = append(theirs, t)
			row.refRSSMB = max(row.refRSSMB, rss)
			return nil
		}
		for r := 0; r < runs; r++ {
			// The two programs take turns as the first of a round: a
			// process right after the reference's long run measured up to
			// 30 % slower on the Intel machine than one after ours (the
			// core's state or the 64 MB file's write-back), so neither
			// always comes after the other.
			if ref != "" && r%2 == 0 {
				if err := runRef(); err != nil {
					return err
				}
			}
			t, rss, err := timeProcess(dirs[i], env, self, append([]string{"simulate"}, fileArgs...)...)
			if err != nil {
				return fmt.Errorf("case %s: %w", bc.Name, err)
			}
			ours = append(ours, t)
			row.rssMB = max(row.rssMB, rss)
			if ref != "" && r%2 == 1 {
				if err := runRef(); err != nil {
					return err
				}
			}
		}
		row.seconds, row.user, row.sys = medianTimes(ours)
		if ref != "" {
			row.refSeconds, row.refUser, _ = medianTimes(theirs)
		}
		rows = append(rows, row)
	}
	for i := range rows {
		var err error
		if rows[i].pixels, rows[i].mallocs, rows[i].allocMB, err = inProcess(argvs[i], dirs[i]); err != nil {
			return fmt.Errorf("case %s: %w", rows[i].name, err)
		}
	}
	if floor > 0 {
		fmt.Fprintf(out, "peak RSS has a floor of %.1f MB: this process's own peak, which Linux counts into its children's\n", floor)
	}
	return writeBenchTable(out, rows, runs, threads, ref != "")
}

// inProcess renders the case once in this process (as simulate does,
// float image written to nowhere) and returns the heap objects and MB it
// allocated, with the image's pixel count. It runs in dir: reading -hkl
// writes the Fdump cache.
func inProcess(args []string, dir string) (pixels int, mallocs uint64, mb float64, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return 0, 0, 0, err
	}
	if err := os.Chdir(dir); err != nil {
		return 0, 0, 0, err
	}
	defer os.Chdir(wd)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, _, err := Render(args, io.Discard)
	if err != nil {
		return 0, 0, 0, err
	}
	err = formats.WriteFloatImage(io.Discard, r.Image)
	runtime.ReadMemStats(&after)
	return len(r.Image), after.Mallocs - before.Mallocs, float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20), err
}

// procTime is a child process's wall time and its user and system CPU
// time, in seconds.
type procTime struct{ wall, user, sys float64 }

// medianTimes is the median of each of the runs' times.
func medianTimes(t []procTime) (wall, user, sys float64) {
	var w, u, s []float64
	for _, x := range t {
		w, u, s = append(w, x.wall), append(u, x.user), append(s, x.sys)
	}
	return median(w), median(u), median(s)
}

// timeProcess runs prog with args in dir and returns its wall and CPU
// times and its peak resident memory in MB.
func timeProcess(dir string, env []string, prog string, args ...string) (t procTime, rssMB float64, err error) {
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return procTime{}, 0, fmt.Errorf("%v: %s", err, firstLine(stderr.String()))
	}
	t.wall = time.Since(start).Seconds()
	t.user, t.sys = cmd.ProcessState.UserTime().Seconds(), cmd.ProcessState.SystemTime().Seconds()
	return t, peakRSSMB(cmd.ProcessState), nil
}

// firstLine sums up a failed process's stderr in one line: its first
// non-blank line (gobragg's one-line error, or the "fatal error:" or
// "panic:" heading a Go crash's stack dump), cut to 200 characters, with
// the number of lines left out.
func firstLine(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	line := strings.TrimSpace(lines[0])
	if line == "" {
		return "no message on stderr"
	}
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	if len(lines) > 1 {
		line += fmt.Sprintf(" (and %d more lines on stderr)", len(lines)-1)
	}
	return line
}

func writeBenchTable(out io.Writer, rows []benchRow, runs, threads int, withRef bool) error {
	fmt.Fprintf(out, "whole `gobragg simulate` processes, median of %d, GOMAXPROCS=%d, %s lanes; allocations of one in-process run\n", runs, threads, physics.VectorLanes())
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "case\tpixels\ttime s\tuser s\tsys s\tpixels/s\tallocs\talloc MB\tpeak RSS MB\t"
	if withRef {
		head += "ref s\tref user s\tref RSS MB\ttime/ref\tuser/ref\t"
	}
	fmt.Fprintln(tw, head+"issue ref s\t")
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%d\t%.3f\t%.3f\t%.3f\t%.3g\t%d\t%.1f\t%.1f\t", r.name, r.pixels, r.seconds, r.user, r.sys,
			float64(r.pixels)/r.seconds, r.mallocs, r.allocMB, r.rssMB)
		if withRef {
			line += fmt.Sprintf("%.3f\t%.3f\t%.1f\t%.2f\t%s\t", r.refSeconds, r.refUser, r.refRSSMB, r.seconds/r.refSeconds, ratio(r.user, r.refUser))
		}
		issue := "-"
		if r.issueRefSecond > 0 {
			issue = fmt.Sprintf("%.2f", r.issueRefSecond)
		}
		fmt.Fprintln(tw, line+issue+"\t")
	}
	return tw.Flush()
}

// selfPeakMB is this process's resident high-water mark (VmHWM) in MB, or
// 0 where /proc does not tell.
func selfPeakMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

// ratio is a/b to two decimals, or "-" where b is 0 (a CPU time the
// system did not report).
func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func caseNames() string {
	var n []string
	for _, c := range BenchCases {
		n = append(n, c.Name)
	}
	return strings.Join(n, ", ")
}
