package physics

import "math"

// ImageRowSums adds one row of a float32 image to the sums of an image's
// statistics (what the reference prints: mean and rms): sums[:4] are four
// partial sums of the values, sums[4:] of their squares. Each row's
// values are summed from 0 in four slots, value j to slot j mod 4 in
// order, and each slot then added to its total: the sums have the same
// bits on every lane kernel (imageSumsLanes) and machine, and no chain of
// additions one value long (the reference's one running sum; these differ
// from it in their last bits, far below the six digits it prints). With a
// mask (not nil) the values where it is 0 are left out (they add 0). It
// returns the smallest and the largest of the values taken (NaN is in
// neither; with none taken +Inf and −Inf) and how many were taken.
func ImageRowSums(row []float32, mask []float64, sums *[2 * slots]float64) (lo, hi float64, n int) {
	var rs [2 * slots]float64
	lv, hv := repeat(math.Inf(1)), repeat(math.Inf(-1))
	j := 0
	if mask == nil {
		j = len(row) / maxLanes * maxLanes
		imageSums(row, j, &rs, &lv, &hv)
		n = len(row)
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range lv {
		lo, hi = min(lo, lv[i]), max(hi, hv[i])
	}
	for ; j < len(row); j++ {
		if mask != nil {
			if mask[j] == 0 {
				continue
			}
			n++
		}
		x := float64(row[j])
		rs[j%slots] += x
		rs[slots+j%slots] += x * x
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	for i := range rs {
		sums[i] += rs[i]
	}
	return lo, hi, n
}

// ImageRowDev adds one row's squared deviations from mean, (x − mean)²,
// to the four partial sums dev, as ImageRowSums adds the values.
func ImageRowDev(row []float32, mean float64, dev *[slots]float64) {
	var rs [slots]float64
	j := len(row) / maxLanes * maxLanes
	mv := repeat(mean)
	imageDev(row, j, &mv, &rs)
	for ; j < len(row); j++ {
		t := float64(row[j]) - mean
		rs[j%slots] += t * t
	}
	for i := range rs {
		dev[i] += rs[i]
	}
}
