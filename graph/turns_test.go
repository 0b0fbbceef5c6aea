package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gobragg/gobragg/physics"
)

// turnCases are the runs a turns server can time: the benchmarks'
// standard cases.
var turnCases = map[string][]string{
	"cubic256":  cubic(256, 100),
	"cubic1024": cubic(1024, 100),
	"cubic4096": append(cubic(4096, 100), "-max_memory", "2000"),
	"mosaic10":  mosaic10(512),
	// 2×2 sub-pixels in a sensor of 3 layers: the loss rows' records per
	// sub-pixel.
	"layers": append(cubic(256, 100), "-oversample", "2", "-detector_thick", "200", "-detector_abs", "300", "-thicksteps", "3"),
	// The performance issue's mosaic case (gobragg bench's): structure
	// factors from P1.hkl, the orientation from A.mat, 1000² pixels, 10
	// domains. Its inputs are found beside this source file.
	"mosaic": mosaicHKL(),
	// Tricubic interpolation of P1_varied.hkl's structure factors (h, k, l
	// from −8 to 8), cubic 512²: inside the table's range everywhere, so
	// no pixel switches it off.
	"interpolate": append(cubic(512, 100), "-hkl", filepath.Join(inputsDir(), "P1_varied.hkl"), "-interpolate"),
	// The Gaussian spot shape, cubic 512² (its forward on the lanes, its
	// gradient on the general loops).
	"gauss": append(cubic(512, 100), "-gauss_xtal"),
	// The round shape and the top-hat, cubic 512².
	"round":  append(cubic(512, 100), "-round_xtal"),
	"tophat": append(cubic(512, 100), "-tophat_spots"),
	// Whole N beyond the Chebyshev form, cubic 512².
	"n50": append(cubic(512, 100), "-N", "50"),
	// Many sources × orientations (10 × 100), as fits with a spectrum
	// and mosaic domains have them, cubic 256²: the loss rows' chunks
	// beyond hklBudget.
	"many": append(cubic(256, 100), "-mosaic", "1", "-mosaic_domains", "100", "-dispersion", "1", "-dispsteps", "10"),
}

// inputsDir is testdata/inputs, found from this file's directory.
func inputsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "inputs")
}

// mosaicHKL is gobragg bench's mosaic case with its inputs' paths made
// absolute from this file's directory (a turns server runs wherever the
// harness is started). The model is only parsed, so no Fdump.bin is
// written.
func mosaicHKL() []string {
	in := inputsDir()
	return []string{"-hkl", filepath.Join(in, "P1.hkl"), "-matrix", filepath.Join(in, "A.mat"),
		"-lambda", "6.2", "-N", "5", "-default_F", "100", "-distance", "100", "-detsize", "100", "-pixel", "0.1",
		"-mosaic_spread", "1.0", "-mosaic_domains", "10"}
}

// With GOBRAGG_TURNS set, the test binary serves turns instead of testing.
// (An init function, so that this file alone, copied into an older
// commit's tree, makes its binary a server too.)
func init() {
	if spec := os.Getenv("GOBRAGG_TURNS"); spec != "" {
		if err := serveTurns(spec); err != nil {
			fmt.Fprintln(os.Stderr, "turns:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// serveTurns is one side of the timing harness graph/internal/turns runs
// (see there): with GOBRAGG_TURNS="case,mode" set, the test binary does
// not test but builds the case's simulator, runs it twice, writes "ready"
// as a line to stdout, then, for every byte it reads from stdin, runs it
// once more (mode "forward": the image; "gradient": the gradient of the
// summed-image loss; "crystal": its crystal's part, CrystalGradient;
// "size": its crystal's, N's and the fluence's, GradientFor, as a fit of
// the crystal, its size and its scale asks; "detector": its crystal's,
// the fluence's and the detector's, as the DIALS fit asks) and
// writes the run's time in ms as a line; "q" or the end of stdin ends it. GOBRAGG_LANES picks the lane
// kernels as it does for simulate. Two builds taking turns this way, pinned to
// one CPU, see the same drift of the machine's speed run by run.
func serveTurns(spec string) error {
	cs, mode, ok := strings.Cut(spec, ",")
	if !ok {
		return fmt.Errorf("GOBRAGG_TURNS: want case,mode, have %q", spec)
	}
	argv, ok := turnCases[cs]
	if !ok {
		return fmt.Errorf("GOBRAGG_TURNS: no case %q", cs)
	}
	if mode != "forward" && mode != "gradient" && mode != "crystal" && mode != "size" && mode != "detector" {
		return fmt.Errorf("GOBRAGG_TURNS: mode %q is not forward, gradient, crystal, size or detector", mode)
	}
	if name := os.Getenv("GOBRAGG_LANES"); name != "" {
		// As simulate takes it: the lane kernels to time.
		if err := physics.UseVectorLanes(name); err != nil {
			return err
		}
	}
	m, err := parseModel(argv) // (no -hkl: no Fdump.bin written)
	if err != nil {
		return err
	}
	s, err := New(m)
	if err != nil {
		return err
	}
	l := &Loss{Kind: LossSum}
	run := func() error { _, err := s.Image(); return err }
	switch mode {
	case "gradient":
		run = func() error { _, _, err := s.Gradient(l); return err }
	case "crystal":
		run = func() error { _, _, err := s.CrystalGradient(l); return err }
	case "size":
		size := func(n string) bool {
			return CrystalGradientInput(n) || nInput(n)
		}
		run = func() error { _, _, err := s.GradientFor(l, size); return err }
	case "detector":
		detector := func(n string) bool { return CrystalGradientInput(n) || strings.HasPrefix(n, "detector.") }
		run = func() error { _, _, err := s.GradientFor(l, detector); return err }
	}
	for range 2 {
		if err := run(); err != nil {
			return err
		}
	}
	fmt.Println("ready")
	b := make([]byte, 1)
	for {
		if n, _ := os.Stdin.Read(b); n == 0 || b[0] == 'q' {
			return nil
		}
		t0 := time.Now()
		if err := run(); err != nil {
			return err
		}
		fmt.Printf("%.4f\n", 1e3*time.Since(t0).Seconds())
	}
}
