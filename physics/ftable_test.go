package physics

import (
	"math"
	"testing"
)

// TestFilledTable: a table's cells without data (NaN) take the default F,
// the fill is kept for the table and default F (the same slice again), a
// new default F gets a new fill and leaves the one handed out as it was,
// and a table without NaN is returned as it is.
func TestFilledTable(t *testing.T) {
	nan := math.NaN()
	tab := []float64{1, nan, 3, nan, 5}
	f7, miss := filledTable(tab, 7)
	want7 := []float64{1, 7, 3, 7, 5}
	for i := range tab {
		if w := i == 1 || i == 3; f7[i] != want7[i] || (miss[i] == math.Float64bits(1)) != w || (!w && miss[i] != 0) {
			t.Fatalf("fill %v missing %v, want %v", f7, miss, want7)
		}
	}
	if again, _ := filledTable(tab, 7); &again[0] != &f7[0] {
		t.Error("a second kernel at the same default F filled the table again")
	}
	f8, _ := filledTable(tab, 8)
	if f8[1] != 8 || f8[3] != 8 || f7[1] != 7 || f7[3] != 7 {
		t.Errorf("default F 8: %v (and the fill for 7 now %v)", f8, f7)
	}
	full := []float64{1, 2, 3}
	if f, m := filledTable(full, 7); &f[0] != &full[0] || m != nil {
		t.Errorf("a table with data everywhere: %v %v", f, m)
	}
}

// TestFilledTableKept: the fills of the last keptTables tables are kept;
// an older one is made again.
func TestFilledTableKept(t *testing.T) {
	newTable := func() []float64 { return []float64{1, math.NaN()} }
	first := newTable()
	f0, _ := filledTable(first, 3)
	if again, _ := filledTable(first, 3); &again[0] != &f0[0] {
		t.Fatal("the fill of the table just used was made again")
	}
	for range keptTables {
		filledTable(newTable(), 3)
	}
	f1, _ := filledTable(first, 3)
	if &f1[0] == &f0[0] {
		t.Errorf("%d tables later the first one's fill is still kept", keptTables)
	}
	if f1[1] != 3 {
		t.Errorf("the fill made again: %v", f1)
	}
}
