package physics

import (
	"math"
	"sync"
)

// A structure-factor table (Inputs.Fhkl) marks the cells the file did not
// list with NaN: they take the default F, a parameter. A kernel reads the
// table with the default filled in, and a gradient also which cells those
// are. A fit builds a kernel per evaluation from the same table, and
// filling a copy of it each time (with the flags of the cells without data)
// took most of the evaluation: for a table of half a million cells, three
// quarters of a box fit's gradient (graph's TestTableReuse checks that
// it is no longer copied). So what a table gives is kept for the
// keptTables tables used last, found by the table's identity (its first
// element and length), and per default F the latest fill. A table must
// therefore not change once a kernel has read it: a changed table is a
// new slice. (graph passes a model's grid, which never changes after it
// is read.)

// keptTables is how many tables' fills are kept: a fit's images share one
// table; a few more keep two alternating fits from refilling.
const keptTables = 4

// tableFill is what a table gives: which of its cells are NaN, as the
// float64 bits of 1 there and 0 elsewhere (missBits; nil when none is),
// and the table filled with the default F def (filled). Each slice, once
// handed out, is never written again: a new default F makes a new fill.
type tableFill struct {
	table    []float64
	missBits []uint64
	def      uint64 // the bits of the default F filled holds
	filled   []float64
}

// tableCache holds the fills of the tables used last, the latest first.
var tableCache struct {
	sync.Mutex
	kept []*tableFill
}

// tableEntry returns the entry of table t (not empty), making it if t is
// not among the kept ones. The caller holds tableCache's lock.
func tableEntry(t []float64) *tableFill {
	kept := tableCache.kept
	for i, e := range kept {
		if len(e.table) == len(t) && &e.table[0] == &t[0] {
			copy(kept[1:i+1], kept[:i])
			kept[0] = e
			return e
		}
	}
	e := &tableFill{table: t}
	one := math.Float64bits(1)
	for i, v := range t {
		if v != v {
			if e.missBits == nil {
				e.missBits = make([]uint64, len(t))
			}
			e.missBits[i] = one
		}
	}
	if len(kept) < keptTables {
		kept = append(kept, nil)
	}
	copy(kept[1:], kept)
	kept[0] = e
	tableCache.kept = kept
	return e
}

// filledTable returns table t with def in its cells without data (t
// itself when it has none) and which cells those are (kernel.missBits:
// the bits of 1 there, 0 elsewhere; nil when none).
func filledTable(t []float64, def float64) ([]float64, []uint64) {
	if len(t) == 0 {
		return t, nil
	}
	tableCache.Lock()
	defer tableCache.Unlock()
	e := tableEntry(t)
	if e.missBits == nil {
		return t, nil
	}
	if e.filled == nil || e.def != math.Float64bits(def) {
		f := append([]float64(nil), t...)
		for i, m := range e.missBits {
			if m != 0 {
				f[i] = def
			}
		}
		e.filled, e.def = f, math.Float64bits(def)
	}
	return e.filled, e.missBits
}
