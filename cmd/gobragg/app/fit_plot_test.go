package app

import (
	"encoding/binary"
	"io"
	"math"
	"os"
	"testing"
)

// TestFitHugeFlatLoss: an observed image of 1e20 photons in every pixel
// (issue 14: gonum/plot's tick maker, which drew the loss curve then,
// panicked on a loss flat at a huge value): the fit ends with an error,
// not a panic, and still writes its report and its loss curve.
func TestFitHugeFlatLoss(t *testing.T) {
	inDir(t, nil, func() {
		const n = 64
		b := make([]byte, 4*n*n)
		for i := 0; i < n*n; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(1e20))
		}
		if err := os.WriteFile("flat.bin", b, 0o644); err != nil {
			t.Fatal(err)
		}
		argv := append([]string{"--observed", "flat.bin", "--loss", "sse", "--spots", "all", "--background", "none",
			"--max-evals", "20", "--out", "res"}, "-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30",
			"-default_F", "100", "-N", "5", "-lambda", "2", "-distance", "100", "-pixel", "0.4", "-detpixels", "64")
		err := Fit(argv, io.Discard, io.Discard)
		if err == nil {
			t.Fatal("a fit to a flat image of 1e20 photons converged")
		}
		for _, f := range []string{"res/fit.json", "res/loss.png"} {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 {
				t.Errorf("%s: %v", f, err)
			}
		}
		t.Logf("error: %v", err)
	})
}
