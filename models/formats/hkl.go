package formats

import (
	"fmt"
	"io"
	"math"
	"sync"
)

// maxGridCells bounds the number of cells (padding included) of an HKL grid,
// so that a hostile or mistyped file cannot make us allocate without limit.
// 1<<28 cells is 2 GiB of float64, about h,k,l in ±320. Tests lower it.
var maxGridCells = 1 << 28

// maxIndex bounds |h|,|k|,|l|: the reference stores them in C ints.
const maxIndex = math.MaxInt32 / 2

// HKLGrid is a table of structure factors laid out as the reference lays
// out its Fhkl array: (hRange+1)×(kRange+1)×(lRange+1) values, h slowest and
// l fastest, with hRange = HMax-HMin+1 and so on. The extra last plane along
// each axis is padding that the reference allocates and never fills; it
// stays zero even when a default F is given.
type HKLGrid struct {
	HMin, HMax, KMin, KMax, LMin, LMax int
	// Count is the number of records read from an HKL file, or
	// hRange*kRange*lRange for a grid read from an Fdump file.
	Count int
	F     []float64
	// Defaulted marks the cells of F that no record set (filled with the
	// default F), so that a model can change the default later; nil for a
	// grid read from an Fdump file, whose cells are all data.
	Defaulted []bool

	markOnce sync.Once
	marked   []float64
}

// Marked returns F with NaN in the Defaulted cells (F itself when there
// are none): the table a simulation reads, which gives those cells the
// default F it is run with. It is made once per grid and shared by every
// model holding the grid (a fit builds a model per evaluation; copying a
// table of half a million cells each time took most of a box fit's
// evaluation): read only, as F and Defaulted are once the grid is read.
func (g *HKLGrid) Marked() []float64 {
	g.markOnce.Do(func() {
		g.marked = g.F
		if g.Defaulted == nil {
			return
		}
		g.marked = append([]float64(nil), g.F...)
		for i, d := range g.Defaulted {
			if d {
				g.marked[i] = math.NaN()
			}
		}
	})
	return g.marked
}

// Ranges returns the number of distinct indices along each axis (padding
// excluded).
func (g *HKLGrid) Ranges() (h, k, l int) {
	return g.HMax - g.HMin + 1, g.KMax - g.KMin + 1, g.LMax - g.LMin + 1
}

// Index returns the position of Miller index (h,k,l) in F. The caller
// guarantees HMin <= h <= HMax+1 and likewise for k and l.
func (g *HKLGrid) Index(h, k, l int) int {
	_, kr, lr := g.Ranges()
	return ((h-g.HMin)*(kr+1)+(k-g.KMin))*(lr+1) + (l - g.LMin)
}

// At returns F at Miller index (h,k,l), with the same precondition as Index.
func (g *HKLGrid) At(h, k, l int) float64 { return g.F[g.Index(h, k, l)] }

// InRange reports whether (h,k,l) lies inside the indices read
// (HMin <= h <= HMax and so on).
func (g *HKLGrid) InRange(h, k, l int) bool {
	return h >= g.HMin && h <= g.HMax && k >= g.KMin && k <= g.KMax && l >= g.LMin && l <= g.LMax
}

// newGridMax checks the bounds of a grid and returns it with its padded
// cell count, at most min(maxCells, maxGridCells); F is not allocated yet.
func newGridMax(hmin, hmax, kmin, kmax, lmin, lmax, maxCells int) (*HKLGrid, int, error) {
	for _, v := range [...]int{hmin, hmax, kmin, kmax, lmin, lmax} {
		if v < -maxIndex || v > maxIndex {
			return nil, 0, fmt.Errorf("index %d out of range", v)
		}
	}
	g := &HKLGrid{HMin: hmin, HMax: hmax, KMin: kmin, KMax: kmax, LMin: lmin, LMax: lmax}
	hr, kr, lr := g.Ranges()
	if hr < 1 || kr < 1 || lr < 1 {
		return nil, 0, fmt.Errorf("empty index range h %d..%d k %d..%d l %d..%d", hmin, hmax, kmin, kmax, lmin, lmax)
	}
	limit := min(maxCells, maxGridCells)
	n, ok := cells(hr, kr, lr, limit)
	if !ok {
		return nil, 0, &GridTooLarge{Cells: float64(hr+1) * float64(kr+1) * float64(lr+1), Max: limit,
			Ranges: fmt.Sprintf("h %d..%d k %d..%d l %d..%d", hmin, hmax, kmin, kmax, lmin, lmax)}
	}
	return g, n, nil
}

// GridTooLarge is the error for a grid over its cell limit.
type GridTooLarge struct {
	Cells  float64 // padded cells the indices need
	Max    int     // the limit
	Ranges string  // the index ranges, for the message
}

func (e *GridTooLarge) Error() string {
	return fmt.Sprintf("grid %s needs %.4g cells, more than the %d allowed", e.Ranges, e.Cells, e.Max)
}

// cells returns the padded cell count (hr+1)(kr+1)(lr+1), or false if it
// exceeds limit.
func cells(hr, kr, lr, limit int) (int, bool) {
	n := 1
	for _, r := range [...]int{hr, kr, lr} {
		if r+1 > limit/n {
			return 0, false
		}
		n *= r + 1
	}
	return n, true
}

// ReadHKL reads an HKL file: records of four numbers "h k l F" separated by
// any whitespace. Numbers are read as fscanf("%lg") reads them, and reading
// stops silently at the first token that does not start a number, as in the
// reference (which is how a trailing comment is ignored). Records are
// stored in a grid spanning the minimum to maximum index read on each axis.
// The unpadded part of the grid is first filled with defaultF; later
// duplicates of an index overwrite earlier ones.
//
// Where the reference would go wrong silently, ReadHKL returns an error: no
// records at all, a non-integer h, k or l (the reference only warns and then
// stops its second pass early), and a record cut short by the end of input
// or by a non-number. Integral values written as floats ("1.0") are
// accepted; the reference's second pass, which reads h k l with %d, would
// stop there.
//
// Like the reference, ReadHKL makes two passes: the first checks the
// records and finds the index ranges, the second fills the grid. Memory is
// the grid plus the text up to where reading stopped; r is not read past
// the token that stops it. Time is linear in the text.
func ReadHKL(r io.Reader, defaultF float64) (*HKLGrid, error) {
	return ReadHKLMax(r, defaultF, maxGridCells)
}

// ReadHKLMax is ReadHKL refusing, before allocating it, a grid of more
// than maxCells cells (padding included).
func ReadHKLMax(r io.Reader, defaultF float64, maxCells int) (*HKLGrid, error) {
	s := newReaderScanner(r)
	count := 0
	var lo, hi [3]int
	for {
		hkl, _, n, err := hklRecord(s)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		if count == 0 {
			lo, hi = hkl, hkl
		}
		for i, x := range hkl {
			lo[i] = min(lo[i], x)
			hi[i] = max(hi[i], x)
		}
		count++
	}
	if count == 0 {
		if s.skipSpace() {
			return nil, fmt.Errorf("formats: hkl line %d: no h k l F records before %s", s.line, s.token())
		}
		return nil, fmt.Errorf("formats: hkl: no h k l F records")
	}
	g, n, err := newGridMax(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], maxCells)
	if err != nil {
		return nil, fmt.Errorf("formats: hkl: %w", err)
	}
	g.F = make([]float64, n)
	g.Defaulted = make([]bool, n)
	g.Count = count
	hr, kr, lr := g.Ranges()
	for h := range hr {
		for k := range kr {
			i := g.Index(g.HMin+h, g.KMin+k, g.LMin)
			row, def := g.F[i:i+lr], g.Defaulted[i:i+lr]
			for l := range row {
				row[l], def[l] = defaultF, true
			}
		}
	}
	// Second pass over the text the first one read.
	s2 := newScanner(s.b[:s.pos])
	for range count {
		hkl, f, _, _ := hklRecord(s2)
		i := g.Index(hkl[0], hkl[1], hkl[2])
		g.F[i], g.Defaulted[i] = f, false
	}
	return g, nil
}

// hklRecord reads one "h k l F" record: n is 4, or 0 at the end of the
// records (end of input or a token that is not a number).
func hklRecord(s *scanner) (hkl [3]int, f float64, n int, err error) {
	s.skipSpace()
	line := s.line
	for ; n < 4; n++ {
		x, ok := s.next()
		if !ok {
			break
		}
		if n == 3 {
			f = x
			continue
		}
		if x != math.Trunc(x) {
			return hkl, f, n, fmt.Errorf("formats: hkl line %d: %c = %s is not an integer", s.line, "hkl"[n], s.text())
		}
		if math.Abs(x) > maxIndex {
			return hkl, f, n, fmt.Errorf("formats: hkl line %d: %c = %s is out of range", s.line, "hkl"[n], s.text())
		}
		hkl[n] = int(x)
	}
	if err := s.failure(); err != nil {
		return hkl, f, n, fmt.Errorf("formats: hkl: %w", err)
	}
	if n > 0 && n < 4 {
		if s.skipSpace() {
			return hkl, f, n, fmt.Errorf("formats: hkl line %d: record has %d of 4 numbers before %s", line, n, s.token())
		}
		return hkl, f, n, fmt.Errorf("formats: hkl line %d: record has %d of 4 numbers at end of input", line, n)
	}
	return hkl, f, n, nil
}
