package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gobragg/gobragg/cmd/gobragg/app"
)

// TestMPIFit builds gobragg with -tags mpi and fits a four-frame rotation
// series under mpirun -np 2 (issue 16): the refined values equal the
// single-process fit's to 1e-10 (they are the same bits: every rank sums
// the per-image results in image order). It runs where Open MPI is
// installed (mpirun, and pkg-config's ompi-c for the cgo layer), and is
// skipped otherwise or with -short.
func TestMPIFit(t *testing.T) {
	if testing.Short() {
		t.Skip("mpi build and run: without -short")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("no mpirun (Debian: openmpi-bin)")
	}
	if exec.Command("pkg-config", "--exists", "ompi-c").Run() != nil {
		t.Skip("no Open MPI headers (Debian: libopenmpi-dev)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gobragg-mpi")
	if b, err := exec.Command("go", "build", "-tags", "mpi", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, b)
	}
	model := []string{"-default_F", "100", "-N", "6", "-lambda", "1.2", "-distance", "90", "-pixel", "0.1", "-detpixels", "128",
		"-oversample", "1", "-fluence", "1e29", "-phisteps", "3"}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	// This test binary stands in for gobragg (TestMain): a process of its
	// own, away from the signal tests' state.
	self := func(args ...string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "GOBRAGG_MAIN=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
	for k := 0; k < 4; k++ {
		self(append(append([]string{"simulate", "-cell", "64", "77", "83", "81", "87", "99", "-misset", "12", "-7", "31"}, model...),
			"-phi", strconv.Itoa(k), "-osc", "1", "-water", "0.017", "-noisefile", "frame_00"+strconv.Itoa(k+1)+".img",
			"-seed", strconv.Itoa(20+k), "-floatfile", "/dev/null")...)
	}
	fitArgs := func(out string) []string {
		return append(append([]string{"--observed", "frame_###.img", "--refine", "cell,orientation,scale", "--per-image", "scale",
			"--starts", "1", "--out", out}, "-cell", "65", "76", "84", "82", "86", "100", "-misset", "12.5", "-7.5", "31"), model...)
	}
	self(append([]string{"fit"}, fitArgs("one")...)...)
	cmd := exec.Command(mpirun, append([]string{"-np", "2", "--oversubscribe", "--allow-run-as-root", bin, "fit"}, fitArgs("two")...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	read := func(path string) app.FitReport {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var r app.FitReport
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	one, two := read("one/fit.json"), read("two/fit.json")
	if one.Status != "converged" || two.Status != one.Status || len(two.Images) != 4 {
		t.Fatalf("one process %s, two ranks %s (%d images)", one.Status, two.Status, len(two.Images))
	}
	check := func(what string, a, b []app.FitParam) {
		for i := range a {
			if d := math.Abs(a[i].Value - b[i].Value); d > 1e-10*math.Max(1, math.Abs(a[i].Value)) {
				t.Errorf("%s %s: %.15g in one process, %.15g on two ranks", what, a[i].Name, a[i].Value, b[i].Value)
			}
		}
	}
	check("shared", one.Params, two.Params)
	for k := range one.Images {
		check(one.Images[k].File, one.Images[k].Params, two.Images[k].Params)
	}
	t.Logf("two ranks: %s after %d evaluations; %d shared and %d per-image values agree", two.Status, two.Evaluations,
		len(two.Params), 4*len(two.Images[0].Params))
}
