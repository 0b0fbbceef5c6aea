package fit

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/graph"
)

// stdErrSeeds is the number of noise seeds of TestStdErrs. With exact
// standard errors, the RMS of n normalised errors scatters by about
// 1/√(2n): 0.16 for 20 seeds, where the band 0.7–1.3 is less than 2σ
// wide and 27 checks would fail by chance about one time in three (the
// Gaussian loss's orient_y gave 1.305 over seeds 1–20, 1.165 over 1–60);
// 0.09 for 60.
const stdErrSeeds = 60

// TestStdErrs: are the standard errors honest, for every loss? The
// reference's moderate crystal (testdata/fitdata: ~120,000 photons) over
// the reference's background (~0.8 photons a pixel), drawn with noise
// seeds 1–60 (the reference's generator); each image fitted from the
// truth with the fit command's pixels (boxes of 10², estimated
// background) for cell and orientation, one start without coarse stages
// (from the truth they only cost time). Per loss and parameter, the RMS
// over the seeds of (refined − truth)/σ must lie between 0.7 and 1.3.
func TestStdErrs(t *testing.T) {
	truth := model(t, refArgs("1e29")...)
	bg := referenceBackground(t)
	x0 := make([]float64, len(cellOrient))
	for i, n := range cellOrient {
		x0[i], _ = truth.Get(n)
	}
	images := make([][]float64, stdErrSeeds)
	for s := range images {
		images[s] = noisy(t, truth, bg, int64(s+1))
	}
	for _, kind := range []graph.LossKind{graph.LossPoisson, graph.LossGauss, graph.LossSSE} {
		t.Run(kind.String(), func(t *testing.T) {
			sum := make([]float64, len(cellOrient))
			sum20 := make([]float64, len(cellOrient))
			for s, obs := range images {
				l, boxes := prepared(t, truth, kind, obs)
				o, err := graph.NewObjective(truth, cellOrient, l)
				if err != nil {
					t.Fatal(err)
				}
				r := Run(o, Settings{Boxes: boxes, Coarse: -1, Starts: 1})
				if r.Status != Converged {
					t.Fatalf("seed %d: %s: %v", s+1, r.Status, r.Err)
				}
				for i := range cellOrient {
					z := (r.X[i] - x0[i]) / r.StdErr[i]
					sum[i] += z * z
					if s < 20 {
						sum20[i] += z * z
					}
				}
			}
			var b, b20 strings.Builder
			for i, n := range cellOrient {
				rms := math.Sqrt(sum[i] / stdErrSeeds)
				fmt.Fprintf(&b, " %s %.3f", n, rms)
				fmt.Fprintf(&b20, " %s %.3f", n, math.Sqrt(sum20[i]/20))
				if !(rms >= 0.7 && rms <= 1.3) {
					t.Errorf("%s: RMS (refined − truth)/σ = %.3f over %d seeds", n, rms, stdErrSeeds)
				}
			}
			t.Logf("RMS (refined − truth)/σ over seeds 1–%d:%s", stdErrSeeds, b.String())
			t.Logf("over seeds 1–20 alone:%s", b20.String())
		})
	}
}
