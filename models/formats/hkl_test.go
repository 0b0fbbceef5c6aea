package formats

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestReadHKLP1(t *testing.T) {
	// P1.hkl: every h,k,l in [-5,5] with F=100 (golden README), 1331 lines.
	g, err := ReadHKL(bytes.NewReader(readInput(t, "P1.hkl")), 0)
	if err != nil {
		t.Fatal(err)
	}
	if g.Count != 1331 || g.HMin != -5 || g.HMax != 5 || g.KMin != -5 || g.KMax != 5 || g.LMin != -5 || g.LMax != 5 {
		t.Fatalf("got count %d ranges h %d..%d k %d..%d l %d..%d", g.Count, g.HMin, g.HMax, g.KMin, g.KMax, g.LMin, g.LMax)
	}
	if h, k, l := g.Ranges(); h != 11 || k != 11 || l != 11 || len(g.F) != 12*12*12 {
		t.Fatalf("Ranges = %d %d %d, len(F) = %d, want 11 11 11 and 12^3", h, k, l, len(g.F))
	}
	for h := -5; h <= 6; h++ {
		for k := -5; k <= 6; k++ {
			for l := -5; l <= 6; l++ {
				want := 100.0
				if h == 6 || k == 6 || l == 6 {
					want = 0 // padding plane
				}
				if got := g.At(h, k, l); got != want {
					t.Fatalf("F(%d,%d,%d) = %g, want %g", h, k, l, got, want)
				}
			}
		}
	}
	if !g.InRange(5, -5, 0) || g.InRange(6, 0, 0) || g.InRange(0, -6, 0) {
		t.Error("InRange wrong at the edges")
	}
}

func TestReadHKLVaried(t *testing.T) {
	g, err := ReadHKL(bytes.NewReader(readInput(t, "P1_varied.hkl")), 7)
	if err != nil {
		t.Fatal(err)
	}
	// P1_varied.hkl: h,k,l in [-8,8], 17^3 = 4913 lines.
	if g.Count != 4913 || g.HMin != -8 || g.LMax != 8 {
		t.Fatalf("count %d, h from %d, l to %d", g.Count, g.HMin, g.LMax)
	}
	for _, tc := range []struct {
		h, k, l int
		f       float64
	}{
		{-8, -8, -8, 182.77}, // line 1
		{0, 0, 0, 20.00},     // line 2457
		{3, -2, 5, 199.24},   // line 3295
		{8, 8, 8, 37.23},     // line 4913
		{9, 0, 0, 0},         // padding stays 0 even with default_F = 7
		{0, 9, 0, 0},
		{0, 0, 9, 0},
	} {
		if got := g.At(tc.h, tc.k, tc.l); got != tc.f {
			t.Errorf("F(%d,%d,%d) = %g, want %g", tc.h, tc.k, tc.l, got, tc.f)
		}
	}
	if g.Index(-8, -8, -8) != 0 || g.Index(-8, -8, -7) != 1 || g.Index(-8, -7, -8) != 18 || g.Index(-7, -8, -8) != 18*18 {
		t.Error("Index is not h-slowest, l-fastest with padded strides 18")
	}
}

func TestReadHKLSemantics(t *testing.T) {
	// Sparse file: missing cells get default_F, duplicates overwrite,
	// reading stops at the first non-number.
	in := "0 0 0 1\n2 1 -1 5\n0 0 0 3 # comment stops reading\n1 1 1 9\n"
	g, err := ReadHKL(strings.NewReader(in), 42)
	if err != nil {
		t.Fatal(err)
	}
	if g.Count != 3 || g.HMin != 0 || g.HMax != 2 || g.KMin != 0 || g.KMax != 1 || g.LMin != -1 || g.LMax != 0 {
		t.Fatalf("got %+v", g)
	}
	for _, tc := range []struct {
		h, k, l int
		f       float64
	}{
		{0, 0, 0, 3},  // later duplicate wins
		{2, 1, -1, 5}, // as read
		{1, 0, 0, 42}, // not in file: default_F
		{1, 1, -1, 42},
		{3, 0, 0, 0}, // padding: zero
		{0, 2, 0, 0},
		{0, 0, 1, 0},
	} {
		if got := g.At(tc.h, tc.k, tc.l); got != tc.f {
			t.Errorf("F(%d,%d,%d) = %g, want %g", tc.h, tc.k, tc.l, got, tc.f)
		}
	}

	// Other spellings fscanf accepts; integral floats are accepted for
	// indices. Records may span lines.
	g, err = ReadHKL(strings.NewReader("1.0 +2 -3e0\n1e2\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if g.At(1, 2, -3) != 100 || g.Count != 1 {
		t.Errorf("got F=%g count %d", g.At(1, 2, -3), g.Count)
	}
}

func TestReadHKLErrors(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"", "no h k l F records"},
		{"# h k l F\n1 2 3 4\n", `line 1: no h k l F records before "#"`},
		{"1 2 3 4\n1.5 0 0 1\n", "line 2: h = 1.5 is not an integer"},
		{"1 2 3 4\n1 0 nan 1\n", "line 2: l = nan is not an integer"},
		{"1 2 3 4\n\n1 -inf 0 1\n", "line 3: k = -inf is out of range"},
		{"1 2 3 4\n5 6 7\n", "line 2: record has 3 of 4 numbers at end of input"},
		{"1 2 3 4\n5 6 x 7\n", `line 2: record has 2 of 4 numbers before "x"`},
		{"0 0 0 1\n3000000000 0 0 1\n", "line 2: h = 3000000000 is out of range"},
		{"0 0 0 1\n100000 100000 100000 1\n", "more than the"},
	} {
		_, err := ReadHKL(strings.NewReader(tc.in), 0)
		wantErr(t, fmt.Sprintf("ReadHKL(%q)", tc.in), err, tc.msg)
	}
}

// TestMarked: the grid's table with NaN in the cells no record set, made
// once (the same slice again); F itself for a grid without such cells.
func TestMarked(t *testing.T) {
	g, err := ReadHKL(strings.NewReader("0 0 0 1\n1 0 0 2\n"), 42)
	if err != nil {
		t.Fatal(err)
	}
	m := g.Marked()
	for i, v := range m {
		if g.Defaulted[i] != math.IsNaN(v) || (!g.Defaulted[i] && v != g.F[i]) {
			t.Fatalf("cell %d: marked %v, F %v, defaulted %v", i, v, g.F[i], g.Defaulted[i])
		}
	}
	if g.F[g.Index(0, 0, 0)] != 1 || math.IsNaN(g.F[1]) {
		t.Errorf("F changed: %v", g.F)
	}
	if &g.Marked()[0] != &m[0] {
		t.Error("Marked made the table again")
	}
	full := &HKLGrid{F: []float64{1, 2}}
	if &full.Marked()[0] != &full.F[0] {
		t.Error("a grid with data everywhere: Marked copied F")
	}
}
