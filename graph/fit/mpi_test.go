//go:build mpi

package fit

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gobragg/gobragg/graph/fit/mpi"
)

// TestMPI runs the three stills of TestRanks under mpirun with two ranks
// (this test binary again, each rank with an mpi.Comm) and requires the
// refined values, standard errors and loss of the single-process fit to
// 1e-10 (they are the same bits: the per-image results are gathered and
// summed in image order on every rank).
func TestMPI(t *testing.T) {
	if out := os.Getenv("GOBRAGG_MPI_OUT"); out != "" {
		// A rank under mpirun.
		c, err := mpi.Init()
		if err != nil {
			t.Fatal(err)
		}
		defer mpi.Finalize()
		r := RunProblem(stills(t, 3, 11), Settings{Starts: 1, Comm: c})
		if c.Rank() == 0 {
			b, _ := json.Marshal(map[string]any{"status": r.Status, "loss": r.Loss, "x": r.X, "stderr": r.StdErr, "size": c.Size()})
			if err := os.WriteFile(out, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("no mpirun")
	}
	want := RunProblem(stills(t, 3, 11), Settings{Starts: 1})
	if want.Status != Converged {
		t.Fatalf("one process: %s: %v", want.Status, want.Err)
	}
	out := filepath.Join(t.TempDir(), "rank0.json")
	cmd := exec.Command(mpirun, "-np", "2", "--oversubscribe", "--allow-run-as-root", os.Args[0], "-test.run", "^TestMPI$")
	cmd.Env = append(os.Environ(), "GOBRAGG_MPI_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Status    Status
		Loss      float64
		X, Stderr []float64
		Size      int
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Size != 2 || got.Status != want.Status || math.Abs(got.Loss-want.Loss) > 1e-10*math.Abs(want.Loss) {
		t.Fatalf("under mpirun: %d ranks, %s, loss %v; one process: %s, %v", got.Size, got.Status, got.Loss, want.Status, want.Loss)
	}
	for i, n := range want.Names {
		if d := math.Abs(got.X[i] - want.X[i]); d > 1e-10*math.Max(1, math.Abs(want.X[i])) {
			t.Errorf("%s: %.15g under mpirun, %.15g in one process", n, got.X[i], want.X[i])
		}
		if d := math.Abs(got.Stderr[i] - want.StdErr[i]); d > 1e-10*want.StdErr[i] {
			t.Errorf("%s: σ %.15g under mpirun, %.15g in one process", n, got.Stderr[i], want.StdErr[i])
		}
	}
	t.Logf("2 ranks: %s, loss %.12g, %d parameters agree with one process", got.Status, got.Loss, len(want.X))
}

// BenchmarkStills50MPI fits BenchmarkStills50's stills under mpirun with
// two ranks (one thread each: GOMAXPROCS=1, the machine's two vCPUs
// between them) and reports rank 0's wall time of the fit, as
// BenchmarkStills50 reports one process's.
func BenchmarkStills50MPI(b *testing.B) {
	if out := os.Getenv("GOBRAGG_MPI_BENCH"); out != "" {
		c, err := mpi.Init()
		if err != nil {
			b.Fatal(err)
		}
		defer mpi.Finalize()
		p, truths := stillsBench(b, 50, "1e29")
		t0 := time.Now()
		r := RunProblem(p, Settings{Comm: c})
		wall := time.Since(t0)
		if c.Rank() == 0 {
			reportStills(b, r, p, truths, wall)
			os.WriteFile(out, []byte(strconv.FormatFloat(wall.Seconds(), 'g', -1, 64)), 0o644)
		}
		return
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		b.Skip("no mpirun")
	}
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "wall")
		cmd := exec.Command(mpirun, "-np", "2", "--oversubscribe", "--allow-run-as-root", "-x", "GOMAXPROCS=1",
			"-x", "GOBRAGG_MPI_BENCH="+out, os.Args[0], "-test.run", "^$", "-test.bench", "^BenchmarkStills50MPI$", "-test.benchtime", "1x")
		b2, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("mpirun: %v\n%s", err, b2)
		}
		b.Logf("%s", b2)
		w, err := os.ReadFile(out)
		if err != nil {
			b.Fatal(err)
		}
		s, _ := strconv.ParseFloat(string(w), 64)
		b.ReportMetric(s, "s/fit")
	}
}
