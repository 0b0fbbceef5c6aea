package physics

import "math"

// ImageSums are the sums of an image's statistics (what the reference
// prints: mean, rms and rmsd), added row by row from each row's RowSums,
// rows in order. Each row's values are summed from 0 in slots partial
// sums, value j to slot j mod slots in order (RowSums.Set), and each slot
// then added to its total (Add); the totals are added pairwise at the
// end (slotSum). The sums have the same bits on every lane kernel
// (imageSumsLanes, imageDevLanes) and machine, and no chain of additions
// one value long (the reference's one running sum, from which they
// differ in their last bits, far below the six digits it prints).
type ImageSums struct {
	s   [2 * slots]float64 // of the values, then of their squares
	dev float64            // of the squared deviations from the image's mean (AddDev)
}

// RowSums are one row's part of ImageSums: the slot sums of its values
// and their squares that Add adds, and what the squared deviations from
// the image's mean need of the row alone (AddDev): the row's own mean
// over all its values and the slot sums of the deviations from it and
// of their squares. A row can so be summed as soon as it is rendered,
// while it is in cache, and the rows added in order afterwards: the
// deviations need the image's mean, which a pass over the finished
// image found before (two more passes over an image larger than the
// caches).
type RowSums struct {
	s    [2 * slots]float64 // the values taken, then their squares
	dev  [2 * slots]float64 // every value's x − mean, then (x − mean)²
	mean float64            // of every value, masked ones too (0 for none)
	all  int                // how many values, masked ones too

	// Lo and Hi are the smallest and the largest of the values taken (NaN
	// is in neither; with none taken +Inf and −Inf), N how many were
	// taken, and Finite whether their sum is finite (false when one is
	// NaN or infinite: finite float32 values cannot overflow it).
	Lo, Hi float64
	N      int
	Finite bool
}

// Set sums row. With a mask (not nil) the values where it is 0 are not
// taken (scalar code: the lane kernels take rows without one); the
// deviations are summed over every value.
func (r *RowSums) Set(row []float32, mask []float64) {
	var rs [2 * slots]float64
	var all [slots]float64 // with a mask: every value's slot sums, masked ones too
	lv, hv := repeat(math.Inf(1)), repeat(math.Inf(-1))
	j := 0
	if mask == nil {
		j = len(row) / maxLanes * maxLanes
		imageSums(row, j, &rs, &lv, &hv)
		r.N = len(row)
	} else {
		r.N = 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range lv {
		lo, hi = min(lo, lv[i]), max(hi, hv[i])
	}
	for ; j < len(row); j++ {
		x := float64(row[j])
		if mask != nil {
			all[j%slots] += x
			if mask[j] == 0 {
				continue
			}
			r.N++
		}
		rs[j%slots] += x
		rs[slots+j%slots] += x * x
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	if mask == nil {
		copy(all[:], rs[:slots]) // every value is taken
	}
	r.s, r.Lo, r.Hi, r.Finite = rs, lo, hi, math.Abs(slotSum(rs[:slots])) <= math.MaxFloat64
	r.all, r.mean = len(row), 0
	if len(row) > 0 {
		r.mean = slotSum(all[:]) / float64(len(row))
	}
	// The deviations from the row's mean, as the values.
	var rd [2 * slots]float64
	j = len(row) / maxLanes * maxLanes
	mv := repeat(r.mean)
	imageDev(row, j, &mv, &rd)
	for ; j < len(row); j++ {
		t := float64(row[j]) - r.mean
		rd[j%slots] += t
		rd[slots+j%slots] += t * t
	}
	r.dev = rd
}

// Add adds a row's sums of the values taken and their squares.
func (m *ImageSums) Add(r *RowSums) {
	for i := range r.s {
		m.s[i] += r.s[i]
	}
}

// AddDev adds a row's squared deviations from mean (the image's), from
// the row's own sums about its mean m_r (Set): with δ = m_r − mean,
//
//	Σ (x − mean)² = Σ (x − m_r)² + 2δ·Σ (x − m_r) + n·δ²,
//
// exact (the middle sum, 0 but for m_r's rounding, keeps it so; x − m_r
// and m_r − mean are exact where the values are near the means). Its
// rounding error has the bound of a direct sum of (x − mean)²
// (TestStats); a given row's can be larger or smaller (a review found
// 118 ulp against 0 for a constant row of 1027 values with one off, 630
// against 314 for one 3e38 spike in 4096).
func (m *ImageSums) AddDev(r *RowSums, mean float64) {
	if r.all == 0 {
		return
	}
	d := r.mean - mean
	m.dev += slotSum(r.dev[slots:]) + 2*d*slotSum(r.dev[:slots]) + float64(r.all)*d*d
}

// Sum, SumSq and Dev are the sums of the values, of their squares and of
// the squared deviations.
func (m *ImageSums) Sum() float64   { return slotSum(m.s[:slots]) }
func (m *ImageSums) SumSq() float64 { return slotSum(m.s[slots:]) }
func (m *ImageSums) Dev() float64   { return m.dev }
