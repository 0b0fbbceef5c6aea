//go:build unix

package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/gobragg/gobragg/models/formats"
)

// The hardening table: bad or extreme command lines and files, each run
// as a whole `gobragg simulate` process in a directory of input files.
// Every one must fail with one line on stderr naming the problem, an exit
// status of 1 or 2 (never 3, a panic, nor a signal), leave no output or
// temporary file and change nothing else in the directory, and stay under
// 1 GB of resident memory.

// hardDir makes the directory every case runs in: the project's inputs
// plus hostile files.
func hardDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, in := range []string{"P1.hkl", "A.mat", "sources.txt"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/inputs", in))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, in, b)
	}
	text := map[string]string{
		"biggrid.hkl":    "321 321 321 100\n-322 -322 -322 100\n", // 645³ cells from 38 bytes
		"nan.hkl":        "0 0 0 1\n1 1 1 nan\n",
		"inf.hkl":        "0 0 0 1\n1 1 1 -inf\n",
		"huge.hkl":       "0 0 0 1\n1 1 1 1e308\n",
		"frac.hkl":       "0 0 0 1\n1.5 0 0 1\n",
		"short.hkl":      "0 0 0 1\n1 1 1\n",
		"empty.hkl":      "",
		"comment.hkl":    "# h k l F\n",
		"longnum.hkl":    "1 2 3 " + strings.Repeat("9", 5000) + "\n",
		"hugeidx.hkl":    "0 0 0 1\n3000000000 0 0 1\n",
		"zero.mat":       "0 0 0 0 0 0 0 0 0\n",
		"nan.mat":        "nan 0 0 0 1 0 0 0 1\n",
		"short.mat":      "0.01 0 0 0 0.01\n",
		"flat.mat":       "0.01 0.01 0 0 1e-8 0 0 0 0.01\n",
		"lefthand.mat":   "-0.01 0 0 0 0.01 0 0 0 0.01\n",
		"nodir.src":      "0 0 0 1 1e-10\n",
		"neglambda.src":  "-10 0 0 1 -1e-10\n",
		"empty.src":      "\n\n",
		"infpos.src":     "inf 0 0 1 1e-10\n",
		"notsmv.img":     "P5\n16 16\n255\n",
		"badfdump/x.bin": "",
	}
	for name, s := range text {
		write(t, dir, name, []byte(s))
	}
	write(t, dir, "manyrows.src", bytes.Repeat([]byte("-10 0 0 1 1e-10\n"), formats.MaxColumnRows+1))
	// Sparse files over their caps: refused from their size.
	for name, size := range map[string]int64{"sparse.mat": 2 << 30, "sparse.hkl": 2 << 30, "sparse.src": 300 << 20,
		"sparse.img": 300 << 20} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Skipf("sparse files: %v", err)
		}
		f.Close()
	}
	// SMV headers with impossible values, a truncated image, and a mask
	// of the wrong size.
	smv := func(name string, h formats.SMVHeader, w, hgt int, cut int) {
		var buf bytes.Buffer
		if err := formats.WriteSMV(&buf, h, w, hgt, make([]uint16, w*hgt)); err != nil {
			t.Fatal(err)
		}
		write(t, dir, name, buf.Bytes()[:buf.Len()-cut])
	}
	good := formats.SMVHeader{PixelMM: 0.1, DistanceMM: 100, CloseDistanceMM: 100, WavelengthA: 1, BeamCenterXMM: 0.8,
		BeamCenterYMM: 0.8}
	bad := func(f func(*formats.SMVHeader)) formats.SMVHeader { h := good; f(&h); return h }
	// The reference finds DISTANCE in CLOSE_DISTANCE (the later key): both.
	smv("distinf.img", bad(func(h *formats.SMVHeader) { h.DistanceMM, h.CloseDistanceMM = math.Inf(1), math.Inf(1) }), 16, 16, 0)
	smv("pixhuge.img", bad(func(h *formats.SMVHeader) { h.PixelMM = 1e308 }), 16, 16, 0)
	smv("waveinf.img", bad(func(h *formats.SMVHeader) { h.WavelengthA = math.Inf(1) }), 16, 16, 0)
	smv("beaminf.img", bad(func(h *formats.SMVHeader) { h.BeamCenterXMM = math.Inf(-1) }), 16, 16, 0)
	smv("phiinf.img", bad(func(h *formats.SMVHeader) { h.PhiDeg = math.Inf(1) }), 16, 16, 0)
	smv("trunc.img", good, 16, 16, 100)
	smv("mask8.img", good, 8, 8, 0)
	// A stale cache that says it holds a 645³ grid.
	write(t, dir, "bigdump.bin", []byte("-322 321 -322 321 -322 321\n\f"))
	write(t, dir, "shortdump.bin", []byte("0 1 0 1 0 1\n\f\x00\x00"))
	return dir
}

func write(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot describes every entry under dir: type, mode, size and, for
// small regular files, a hash of the contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	s := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v %d %v", st.Mode(), st.Size(), st.ModTime().UnixNano())
		if st.Mode().IsRegular() && st.Size() < 64<<20 {
			b, _ := os.ReadFile(p)
			desc += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		rel, _ := filepath.Rel(dir, p)
		s[rel] = desc
		return nil
	})
	return s
}

func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for k, v := range after {
		if w, ok := before[k]; !ok {
			d = append(d, "new "+k)
		} else if v != w {
			d = append(d, "changed "+k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		}
	}
	sort.Strings(d)
	return d
}

// hardCase is one row of the table: extra arguments after a small valid
// base, and a fragment the error line must contain.
type hardCase struct {
	args []string
	want string
	// noBase runs args alone, without the base command line.
	noBase bool
}

var hardBase = []string{"-cell", "100", "-default_F", "100", "-N", "5", "-lambda", "1", "-detpixels", "32",
	"-floatfile", "out.bin", "-intfile", "out.img", "-noisefile", "noise.img", "-pgmfile", "out.pgm"}

var hardCases = []hardCase{
	// Command-line mistakes.
	{args: []string{"-nonsense"}, want: "unknown flag -nonsense"},
	{args: []string{"-lambda", "x"}, want: `-lambda: "x" is not a number`},
	{args: []string{"-lambda", "nan"}, want: `-lambda: "nan" is not a number`},
	{args: []string{"-lambda", "inf"}, want: `-lambda: "inf" is not a number`},
	{args: []string{"-lambda", "1e999"}, want: `-lambda: "1e999" is not a number`},
	{args: []string{"-misset", "1", "2"}, want: "-misset: needs 3 value(s)"},
	{args: []string{"-N", "2.5"}, want: `-N: "2.5" is not a whole number`},
	{args: []string{"-N", "1e12"}, want: `-N: "1e12" is not a whole number`},
	{args: []string{"stray"}, want: `unexpected argument "stray"`},
	{args: []string{"-pivot", "middle"}, want: `-pivot "middle"`},
	{args: []string{"-stol", "x"}, want: "-stol: open x: no such file"},
	{args: []string{"-lamda", "1"}, want: "unknown flag -lamda (did you mean -lambda?)"},
	{args: []string{"-max_work", "-1"}, want: "-max_work -1"},
	{args: []string{"-max_memory", "-5"}, want: "-max_memory -5"},
	{args: []string{"-detpixels", "32"}, want: "no crystal", noBase: true},
	{args: []string{"-cell", "100", "-detpixels", "32"}, want: "no structure factors", noBase: true},
	// Counts whose products overflow or explode.
	{args: []string{"-hdivrange", "4294967296", "-hdivstep", "1", "-vdivrange", "4294967296", "-vdivstep", "1"}, want: "at most a million are supported"},
	{args: []string{"-divsteps", "2147483648", "-dispsteps", "2147483648", "-divergence", "1", "-dispersion", "1"}, want: "at most a million are supported"},
	{args: []string{"-divsteps", "2147483648", "-dispsteps", "2147483648", "-divergence", "1", "-dispersion", "1", "-square_div"}, want: "at most a million are supported"},
	{args: []string{"-hdivrange", "1e300", "-hdivstep", "1e-300"}, want: "at most a million are supported"},
	{args: []string{"-phisteps", "1000000", "-osc", "1", "-detpixels", "128"}, want: "1000000 φ steps"},
	{args: []string{"-phisteps", "2147483648", "-osc", "1"}, want: "φ steps"},
	{args: []string{"-osc", "1e9", "-phistep", "1e-9"}, want: "-osc 1e+09"},
	{args: []string{"-mosaic_domains", "1000000", "-mosaic", "1"}, want: "at most 100000 domains"},
	{args: []string{"-mosaic_domains", "100000", "-mosaic", "1", "-phisteps", "100", "-osc", "1"}, want: "at most a million orientations"},
	{args: []string{"-mosaic_domains", "1000", "-mosaic", "1", "-phisteps", "100", "-osc", "1", "-detpixels", "512"}, want: "more than the 1e+10 allowed"},
	{args: []string{"-detpixels", "8192", "-oversample", "64"}, want: "more than the 1e+10 allowed"},
	{args: []string{"-detpixels", "100000"}, want: "is too large"},
	{args: []string{"-detsize", "1e308", "-detpixels", "0"}, want: "-detsize_f 1e+308"},
	{args: []string{"-detpixels", "0", "-pixel", "1e-5", "-detsize", "1e6"}, want: "is too large"},
	{args: []string{"-detpixels_x", "-4"}, want: "must be positive"},
	{args: []string{"-oversample", "100"}, want: "at most 64 sub-pixels"},
	{args: []string{"-N", "300"}, want: "automatic oversampling rule"},
	{args: []string{"-thicksteps", "100000", "-detector_thick", "100"}, want: "at most 1000 sensor layers"},
	{args: []string{"-detpixels", "8192", "-max_memory", "100"}, want: "more than the 100 MB allowed"},
	// Non-finite and physically impossible values.
	{args: []string{"-pixel", "1e308"}, want: "-pixel 1e+308 mm"},
	{args: []string{"-pixel", "1e-300"}, want: "-pixel 1e-300 mm"},
	{args: []string{"-pixel", "0"}, want: "-pixel 0 mm"},
	{args: []string{"-lambda", "1e-300"}, want: "wavelength 1e-300 Å"},
	{args: []string{"-lambda", "0"}, want: "wavelength 0 Å"},
	{args: []string{"-energy", "-5"}, want: "-energy -5"},
	{args: []string{"-distance", "1e300"}, want: "-distance 1e+300"},
	{args: []string{"-distance", "-100"}, want: "-distance -100"},
	{args: []string{"-close_distance", "0"}, want: "-close_distance 0"},
	{args: []string{"-Xbeam", "1e300"}, want: "-Xbeam 1e+300"},
	{args: []string{"-twotheta", "180"}, want: "does not face the forward beam"},
	{args: []string{"-twotheta", "90"}, want: "does not face the forward beam"},
	{args: []string{"-xds", "-twotheta", "135"}, want: "does not face the forward beam"},
	{args: []string{"-detector_roty", "90"}, want: "does not face the forward beam"},
	{args: []string{"-detector_rotz", "-95"}, want: "does not face the forward beam"},
	{args: []string{"-odet_vector", "-1", "0", "0"}, want: "does not face the forward beam"},
	{args: []string{"-beam_vector", "0", "0", "0"}, want: "-beam_vector"},
	{args: []string{"-fdet_vector", "0", "0", "1", "-sdet_vector", "0", "0", "1"}, want: "parallel"},
	{args: []string{"-cell", "100", "100", "100", "120", "120", "120"}, want: "degenerate (flat) cell"},
	{args: []string{"-cell", "100", "100", "100", "60", "60", "119.99999"}, want: "degenerate (flat) cell"},
	{args: []string{"-cell", "100", "100", "100", "90", "90", "180"}, want: "strictly between 0 and 180"},
	{args: []string{"-cell", "1e300"}, want: "lengths must lie between"},
	{args: []string{"-cell", "-100"}, want: "lengths must lie between"},
	{args: []string{"-default_F", "1e308"}, want: "-default_F 1e+308"},
	{args: []string{"-polar", "2"}, want: "-polar 2"},
	{args: []string{"-water", "-100"}, want: "-water -100 µm"},
	{args: []string{"-fluence", "1e300"}, want: "fluence 1e+300"},
	{args: []string{"-fluence", "-1"}, want: "fluence -1"},
	{args: []string{"-flux", "1e12", "-beamsize", "0"}, want: "-beamsize 0"},
	{args: []string{"-mosaic", "1e300", "-mosaic_domains", "2"}, want: "too large a spread"},
	{args: []string{"-dispersion", "250"}, want: "-dispersion 250%"},
	{args: []string{"-fudge", "-1", "-round_xtal"}, want: "-fudge -1"},
	{args: []string{"-detector_abs", "-1"}, want: "-detector_abs -1"},
	{args: []string{"-detector_thick", "-1"}, want: "-detector_thick -1"},
	{args: []string{"-roi", "20", "10", "0", "5"}, want: "-roi 20 10 0 5"},
	{args: []string{"-default_F", "1e10", "-N", "100", "-oversample", "1", "-fluence", "1e50", "-lambda", "6", "-detpixels", "64"}, want: "impossible pixel"},
	// Structure-factor files.
	{args: []string{"-hkl", "missing.hkl"}, want: "missing.hkl: no such file"},
	{args: []string{"-hkl", "badfdump"}, want: "badfdump: is a directory"},
	{args: []string{"-hkl", "biggrid.hkl"}, want: "needs 2.68e+08 cells"},
	{args: []string{"-hkl", "nan.hkl"}, want: "F(1,1,1) = NaN"},
	{args: []string{"-hkl", "inf.hkl"}, want: "F(1,1,1) = -Inf"},
	{args: []string{"-hkl", "huge.hkl"}, want: "F(1,1,1) = 1e+308"},
	{args: []string{"-hkl", "frac.hkl"}, want: "h = 1.5 is not an integer"},
	{args: []string{"-hkl", "short.hkl"}, want: "record has 3 of 4 numbers"},
	{args: []string{"-hkl", "empty.hkl"}, want: "no h k l F records"},
	{args: []string{"-hkl", "comment.hkl"}, want: `no h k l F records before "#"`},
	{args: []string{"-hkl", "longnum.hkl"}, want: "a number of more than 4096 characters"},
	{args: []string{"-hkl", "hugeidx.hkl"}, want: "h = 3000000000 is out of range"},
	{args: []string{"-hkl", "sparse.hkl"}, want: "more than the 1073741824"},
	{args: []string{"-hkl", "/dev/zero"}, want: "no h k l F records"},
	{args: []string{"-hkl", "/dev/null"}, want: "no h k l F records"},
	{args: []string{"-dump", "bigdump.bin", "-cell", "100", "-detpixels", "32"}, want: "bigdump.bin: its grid", noBase: true},
	{args: []string{"-dump", "shortdump.bin", "-cell", "100", "-detpixels", "32"}, want: "truncated", noBase: true},
	// Matrix files.
	{args: []string{"-default_F", "1", "-detpixels", "16", "-floatfile", "out.bin", "-mat", "sparse.mat"}, want: "more than the 1048576", noBase: true},
	{args: []string{"-default_F", "1", "-detpixels", "16", "-floatfile", "out.bin", "-mat", "zero.mat"}, want: "singular", noBase: true},
	{args: []string{"-default_F", "1", "-detpixels", "16", "-floatfile", "out.bin", "-mat", "nan.mat"}, want: "singular", noBase: true},
	{args: []string{"-default_F", "1", "-detpixels", "16", "-floatfile", "out.bin", "-mat", "short.mat"}, want: "found 5 of 9 numbers", noBase: true},
	{args: []string{"-default_F", "1", "-detpixels", "16", "-floatfile", "out.bin", "-mat", "flat.mat"}, want: "degenerate (flat) cell", noBase: true},
	{args: []string{"-default_F", "1", "-detpixels", "16", "-floatfile", "out.bin", "-mat", "lefthand.mat"}, want: "left-handed", noBase: true},
	{args: []string{"-default_F", "1", "-detpixels", "16", "-floatfile", "out.bin", "-mat", "/dev/zero"}, want: "found 0 of 9 numbers", noBase: true},
	// Source files.
	{args: []string{"-sourcefile", "sparse.src"}, want: "more than the 268435456"},
	{args: []string{"-sourcefile", "nodir.src"}, want: "no direction"},
	{args: []string{"-sourcefile", "neglambda.src"}, want: "non-positive wavelength"},
	{args: []string{"-sourcefile", "infpos.src"}, want: "no direction"},
	{args: []string{"-sourcefile", "empty.src"}, want: "no data lines"},
	{args: []string{"-sourcefile", "manyrows.src"}, want: "more than 1048576 rows"},
	{args: []string{"-sourcefile", "/dev/zero"}, want: "more than the 268435456"},
	// SMV images read for their headers or as masks.
	{args: []string{"-img", "distinf.img"}, want: "distance +Inf"},
	{args: []string{"-img", "pixhuge.img"}, want: "-pixel 1e+308"},
	{args: []string{"-img", "waveinf.img", "-cell", "100", "-default_F", "1", "-floatfile", "out.bin"}, want: "wavelength +Inf", noBase: true},
	{args: []string{"-img", "beaminf.img"}, want: "-Xbeam -Inf"},
	{args: []string{"-img", "phiinf.img"}, want: "-phi +Inf"},
	{args: []string{"-img", "trunc.img"}, want: "truncated"},
	{args: []string{"-img", "notsmv.img"}, want: "not an SMV file"},
	{args: []string{"-img", "sparse.img"}, want: "more than the 269484032"},
	{args: []string{"-mask", "mask8.img", "-detpixels", "32"}, want: "-mask: 64 pixels, the detector has 32x32"},
	// Outputs that cannot be written or would destroy an input.
	{args: []string{"-floatfile", "nodir/x.bin"}, want: "no such file or directory nodir"},
	{args: []string{"-intfile", "badfdump"}, want: "badfdump is a directory"},
	{args: []string{"-hkl", "P1.hkl", "-pgmfile", "P1.hkl"}, want: "is also the -hkl input file"},
	{args: []string{"-mat", "A.mat", "-noisefile", "A.mat"}, want: "is also the -mat input file"},
	{args: []string{"-sourcefile", "sources.txt", "-floatfile", "sources.txt"}, want: "is also the -sourcefile input file"},
}

// runProcess runs the test binary as gobragg with args in dir and returns
// stderr, the exit status (−1: killed by a signal) and the peak RSS (KB).
func runProcess(t *testing.T, dir string, args []string) (stderr string, code int, rssKB int64) {
	t.Helper()
	bin := os.Args[0]
	if b := os.Getenv("GOBRAGG_BIN"); b != "" {
		bin = b // another build, to compare (the "fails on today's code")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GOBRAGG_MAIN=1")
	cmd.Dir = dir
	var e bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &e
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	code = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rssKB = int64(ru.Maxrss)
	}
	return e.String(), code, rssKB
}

// TestHardeningTable runs every case; see the table's comment.
func TestHardeningTable(t *testing.T) {
	if len(hardCases) < 60 {
		t.Fatalf("%d cases, the table needs at least 60", len(hardCases))
	}
	dir := hardDir(t)
	before := snapshot(t, dir)
	var worst int64
	for _, c := range hardCases {
		args := append([]string{"simulate"}, c.args...)
		if !c.noBase {
			args = append(append([]string{"simulate"}, hardBase...), c.args...)
		}
		stderr, code, rss := runProcess(t, dir, args)
		worst = max(worst, rss)
		line := strings.TrimSpace(stderr)
		switch {
		case code != 1 && code != 2:
			t.Errorf("%q: exit %d, want 1 or 2 (stderr %q)", c.args, code, stderr)
		case strings.Contains(line, "\n") || !strings.Contains(line, c.want):
			t.Errorf("%q: stderr %q, want one line containing %q", c.args, stderr, c.want)
		}
		if rss > 1<<20 {
			t.Errorf("%q: peak RSS %d MB", c.args, rss>>10)
		}
		if d := diffSnapshots(before, snapshot(t, dir)); len(d) > 0 {
			t.Errorf("%q: directory changed: %v", c.args, d)
			before = snapshot(t, dir)
		}
	}
	t.Logf("%d cases, largest peak RSS %d MB", len(hardCases), worst>>10)
}

// TestCLIDevice: -floatfile on a character device (a /dev/null made in a
// temporary directory; needs root) writes through it and leaves it a
// device, as does -intfile on a FIFO with a reader.
func TestCLIDevice(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("cannot make a device node here: %v", err)
	}
	stderr, code, _ := runProcess(t, dir, []string{"simulate", "-cell", "100", "-default_F", "1", "-detpixels", "16", "-floatfile", "null",
		"-intfile", "null"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st, err := os.Lstat(null)
	if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("null is now %v (%v)", st.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %v", entries)
	}
}
