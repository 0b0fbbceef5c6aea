package physics

import "math"

// ImageSums are the sums of an image's statistics (what the reference
// prints: mean, rms and rmsd), added row by row. Each row's values are
// summed from 0 in slots partial sums, value j to slot j mod slots in
// order, and each slot then added to its total; the totals are added
// pairwise at the end (slotSum). The sums have the same bits on every
// lane kernel (imageSumsLanes, imageDevLanes) and machine, and no chain
// of additions one value long (the reference's one running sum, from
// which they differ in their last bits, far below the six digits it
// prints).
type ImageSums struct {
	s   [2 * slots]float64 // of the values, then of their squares
	dev [slots]float64     // of the squared deviations
}

// AddRow adds a row's values and their squares. With a mask (not nil)
// the values where it is 0 are left out (scalar code: the lane kernels
// take rows without one). It returns the smallest and the largest of the
// values taken (NaN is in neither; with none taken +Inf and −Inf), how
// many were taken, and whether their sum is finite (false when one is
// NaN or infinite: finite float32 values cannot overflow it).
func (m *ImageSums) AddRow(row []float32, mask []float64) (lo, hi float64, n int, finite bool) {
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
		m.s[i] += rs[i]
	}
	return lo, hi, n, math.Abs(slotSum(rs[:slots])) <= math.MaxFloat64
}

// AddDevRow adds a row's squared deviations from mean, (x − mean)², as
// AddRow adds the values.
func (m *ImageSums) AddDevRow(row []float32, mean float64) {
	var rs [slots]float64
	j := len(row) / maxLanes * maxLanes
	mv := repeat(mean)
	imageDev(row, j, &mv, &rs)
	for ; j < len(row); j++ {
		t := float64(row[j]) - mean
		rs[j%slots] += t * t
	}
	for i := range rs {
		m.dev[i] += rs[i]
	}
}

// Sum, SumSq and Dev are the sums of the values, of their squares and of
// the squared deviations.
func (m *ImageSums) Sum() float64   { return slotSum(m.s[:slots]) }
func (m *ImageSums) SumSq() float64 { return slotSum(m.s[slots:]) }
func (m *ImageSums) Dev() float64   { return slotSum(m.dev[:]) }
