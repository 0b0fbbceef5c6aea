package physics_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/physics"
)

// TestLanesImageSums: ImageRowSums and ImageRowDev against their
// definition (per row, value j added in order to slot j mod 4 from 0,
// then each slot to its total), bit for bit, with every lane kernel this
// binary runs, for row lengths on both sides of the vectors' 4 and 8
// values, with and without a mask; the smallest and largest value with a
// NaN among them (left out) and with none taken.
func TestLanesImageSums(t *testing.T) {
	defer physics.SetVectorLanes(t, physics.VectorLanes())()
	t.Logf("lane kernels: %s", strings.Join(physics.AvailableVectorLanes(), ", "))
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tier := range physics.AvailableVectorLanes() {
		if err := physics.UseVectorLanes(tier); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 64, 1027} {
			for _, masked := range []bool{false, true} {
				row := make([]float32, n)
				var mask []float64
				if masked {
					mask = make([]float64, n)
				}
				for j := range row {
					row[j] = float32(rng.ExpFloat64() * 1e3)
					if masked && rng.IntN(3) != 0 {
						mask[j] = 1
					}
				}
				if n > 5 {
					row[n/2] = float32(math.NaN())
					if masked {
						mask[n/2] = 0
					}
				}
				// Start from totals that are not 0.
				sums := [8]float64{1, 2, 3, 4, 5, 6, 7, 8}
				want := sums
				var rs [8]float64
				lo, hi, cnt := math.Inf(1), math.Inf(-1), 0
				for j, v := range row {
					if masked && mask[j] == 0 || j == n/2 && n > 5 {
						continue
					}
					x := float64(v)
					rs[j%4] += x
					rs[4+j%4] += x * x
					lo, hi = math.Min(lo, x), math.Max(hi, x)
					cnt++
				}
				if n > 5 && !masked {
					// The NaN is in the sums, not in lo and hi.
					rs[(n/2)%4], rs[4+(n/2)%4], cnt = math.NaN(), math.NaN(), cnt+1
				}
				for i := range want {
					want[i] += rs[i]
				}
				glo, ghi, gn := physics.ImageRowSums(row, mask, &sums)
				for i := range sums {
					if math.Float64bits(sums[i]) != math.Float64bits(want[i]) && !(math.IsNaN(sums[i]) && math.IsNaN(want[i])) {
						t.Errorf("%s n=%d masked=%v: sum %d = %v, want %v", tier, n, masked, i, sums[i], want[i])
					}
				}
				if glo != lo || ghi != hi || gn != cnt {
					t.Errorf("%s n=%d masked=%v: lo, hi, n = %v %v %d, want %v %v %d", tier, n, masked, glo, ghi, gn, lo, hi, cnt)
				}
				if masked || n > 5 {
					continue
				}
				const mean = 417.25
				dev := [4]float64{1, 2, 3, 4}
				wdev := dev
				var rd [4]float64
				for j, v := range row {
					d := float64(v) - mean
					rd[j%4] += d * d
				}
				for i := range wdev {
					wdev[i] += rd[i]
				}
				physics.ImageRowDev(row, mean, &dev)
				if dev != wdev {
					t.Errorf("%s n=%d: dev %v, want %v", tier, n, dev, wdev)
				}
			}
		}
	}
}
