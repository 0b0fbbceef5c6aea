package physics_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/physics"
)

// TestLanesImageSums: RowSums and ImageSums against their definition
// (per row, value j added in order to slot j mod Slots from 0 — four, or
// eight in the Go 1.27 vector build —, each slot then to its total, the
// totals added pairwise, halves first; the squared deviations from
// the image's mean from each row's own: the row's mean m_r from its
// slots over every value, the slot sums of x − m_r and (x − m_r)² added
// pairwise, S1 and S2, and S2 + 2(m_r − mean)·S1 + n(m_r − mean)² added
// row after row), bit for bit, with every lane kernel this binary runs
// (the same bits on each, so also on one another), for rows of lengths
// on both sides of the vectors' 4 and 8 values (the kernels take whole
// multiples of 8, the rest is scalar), with and without a mask (the
// deviations over every value), two rows a time; then the smallest and
// largest value and the finite flag with a NaN, +Inf or −Inf among the
// values, in the kernels' part of the row and in its tail.
func TestLanesImageSums(t *testing.T) {
	defer physics.SetVectorLanes(t, physics.VectorLanes())()
	t.Logf("lane kernels: %s", strings.Join(physics.AvailableVectorLanes(), ", "))
	var pairwise func(s []float64) float64
	pairwise = func(s []float64) float64 {
		if len(s) == 1 {
			return s[0]
		}
		return pairwise(s[:len(s)/2]) + pairwise(s[len(s)/2:])
	}
	const slots = physics.Slots
	const mean = 417.25
	for _, tier := range physics.AvailableVectorLanes() {
		if err := physics.UseVectorLanes(tier); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4)) // the same rows for every tier
		for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 64, 1027} {
			for _, masked := range []bool{false, true} {
				var sums physics.ImageSums
				var tot, totSq [slots]float64
				var totDev float64
				for range 2 {
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
					var rs, rq, ra [slots]float64
					lo, hi, cnt := math.Inf(1), math.Inf(-1), 0
					for j, v := range row {
						ra[j%slots] += float64(v)
						if masked && mask[j] == 0 {
							continue
						}
						cnt++
						x := float64(v)
						rs[j%slots] += x
						rq[j%slots] += x * x
						lo, hi = math.Min(lo, x), math.Max(hi, x)
					}
					for i := range tot {
						tot[i] += rs[i]
						totSq[i] += rq[i]
					}
					if n > 0 {
						mr := pairwise(ra[:]) / float64(n)
						var d1, d2 [slots]float64
						for j, v := range row {
							d := float64(v) - mr
							d1[j%slots] += d
							d2[j%slots] += d * d
						}
						dm := mr - mean
						totDev += pairwise(d2[:]) + 2*dm*pairwise(d1[:]) + float64(n)*dm*dm
					}
					var r physics.RowSums
					r.Set(row, mask)
					if r.Lo != lo || r.Hi != hi || r.N != cnt || !r.Finite {
						t.Errorf("%s n=%d masked=%v: lo, hi, n, finite = %v %v %d %v, want %v %v %d true", tier, n, masked, r.Lo, r.Hi, r.N, r.Finite, lo, hi, cnt)
					}
					sums.Add(&r)
					sums.AddDev(&r, mean)
				}
				for _, c := range []struct {
					name      string
					got, want float64
				}{{"sum", sums.Sum(), pairwise(tot[:])}, {"sum of squares", sums.SumSq(), pairwise(totSq[:])}, {"deviations", sums.Dev(), totDev}} {
					if math.Float64bits(c.got) != math.Float64bits(c.want) {
						t.Errorf("%s n=%d masked=%v: %s %v, want %v", tier, n, masked, c.name, c.got, c.want)
					}
				}
			}
		}
		// One value not finite, in the kernels' part (at 3) or the tail
		// (at 17) of a row of 19: NaN is in neither lo nor hi, ±Inf is.
		for _, at := range []int{3, 17} {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				row := make([]float32, 19)
				lo, hi := math.Inf(1), math.Inf(-1)
				for j := range row {
					row[j] = float32(j + 1)
					if j == at {
						row[j] = float32(bad)
					}
					if x := float64(row[j]); !math.IsNaN(x) {
						lo, hi = math.Min(lo, x), math.Max(hi, x)
					}
				}
				var r physics.RowSums
				r.Set(row, nil)
				if r.Lo != lo || r.Hi != hi || r.N != 19 || r.Finite {
					t.Errorf("%s %v at %d: lo, hi, n, finite = %v %v %d %v, want %v %v 19 false", tier, bad, at, r.Lo, r.Hi, r.N, r.Finite, lo, hi)
				}
			}
		}
	}
}
