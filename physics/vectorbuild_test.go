package physics_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/physics"
)

// TestVectorBuild runs the lane tests (vectorBuildTests) in the
// GOEXPERIMENT=simd build too, from the default one, so that the
// README's one test command checks both builds: the AVX2 (and, where the
// CPU has it, AVX-512) kernels must give the general loops' bits on every
// golden case. It builds them with this Go and with Go 1.27
// (GOTOOLCHAIN=go1.27.3, which the go command fetches: simd/archsimd's
// names differ there, simd_go127.go). Skipped in the vector build itself
// (its TestLanesBits covers it), off amd64, with a Go that has no simd
// experiment, on a CPU without AVX2, and with -short; the Go 1.27 part
// with GOTOOLCHAIN=local and where that toolchain cannot be had.
func TestVectorBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the physics tests again (~30 s)")
	}
	for _, l := range physics.AvailableVectorLanes() {
		if l != "scalar" {
			t.Skipf("this is the vector build (%s): TestLanesBits covers it", l)
		}
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("the vector kernels are amd64's")
	}
	ran := false
	t.Run("this Go", func(t *testing.T) { ran = vectorBuild(t, "") })
	if !thisGoIs127 {
		t.Run(vectorToolchain, func(t *testing.T) {
			if !ran {
				t.Skip("the vector build did not run with this Go")
			}
			if os.Getenv("GOTOOLCHAIN") == "local" {
				t.Skip("GOTOOLCHAIN=local: no other Go is fetched")
			}
			goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
			cmd := exec.Command(goTool, "version")
			cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+vectorToolchain)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("no %s here: %v: %s", vectorToolchain, err, firstLine(string(out)))
			}
			vectorBuild(t, vectorToolchain)
		})
	}
}

// vectorToolchain is the Go that TestVectorBuild builds the vector
// kernels with beside this one.
const vectorToolchain = "go1.27.3"

// vectorBuildTests are the tests TestVectorBuild runs in the vector
// build.
var vectorBuildTests = []string{"TestLanesBits", "TestLanesGradientBits", "TestLanesNotWholeN", "TestLanesGenerated", "TestLanesImageSums", "TestFrameTune", "TestLanesLossSums", "TestGradientParts", "TestLanesSteps"}

// vectorBuild runs the lane tests with GOEXPERIMENT=simd and, unless it
// is "", GOTOOLCHAIN=toolchain; it reports whether they ran on vector
// kernels (and passed: otherwise it fails t).
func vectorBuild(t *testing.T, toolchain string) bool {
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "test", "-count=1", "-v", "-run", "^("+strings.Join(vectorBuildTests, "|")+")$", ".")
	cmd.Env = append(os.Environ(), "GOEXPERIMENT=simd")
	if toolchain != "" {
		cmd.Env = append(cmd.Env, "GOTOOLCHAIN="+toolchain)
	}
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil {
		if strings.Contains(s, "unknown GOEXPERIMENT") || strings.Contains(s, "invalid GOEXPERIMENT") {
			t.Skipf("this Go has no simd experiment: %s", firstLine(s))
		}
		t.Fatalf("GOEXPERIMENT=simd go test: %v\n%s", err, s)
	}
	if !strings.Contains(s, "lane kernels: scalar, avx2") {
		t.Skipf("the vector build runs no vector kernels on this CPU:\n%s", firstLine(s))
	}
	t.Logf("vector build: %s", firstLine(s[strings.Index(s, "lane kernels:"):]))
	for _, name := range vectorBuildTests {
		if !strings.Contains(s, "--- PASS: "+name+" ") {
			t.Fatalf("the vector build's %s did not pass:\n%s", name, s)
		}
	}
	return true
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
