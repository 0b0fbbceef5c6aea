package formats

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestReadColumnsSources(t *testing.T) {
	// sources.txt: X Y Z weight λ(m), 3 lines (golden README).
	cols, err := ReadColumns(bytes.NewReader(readInput(t, "sources.txt")), 5)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{
		{-10, -10, -10},
		{0, 0.02, 0},
		{0, 0, 0.015},
		{1, 1, 1},
		{1.0e-10, 1.0e-10, 1.02e-10},
	}
	if fmt.Sprint(cols) != fmt.Sprint(want) {
		t.Errorf("sources.txt: got %v, want %v", cols, want)
	}
}

// TestReadColumnsQuirks: every expected table here is what the reference's
// own read_text_file (compiled from nanoBragg.c with glibc) returned for
// the same input, with 3 columns unless noted.
func TestReadColumnsQuirks(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want [][]float64 // rows
	}{
		{"blank line skipped, missing column NaN", "1 2\n\n3,4;5\n", 3, [][]float64{{1, 2, nan}, {3, 4, 5}}},
		{"delimiter-only line skipped, all delimiters", " \t\n1:2!3\n", 3, [][]float64{{1, 2, 3}}},
		{"comment line reads as zeros", "# X Y Z\n1 2 3\n", 3, [][]float64{{0, 0, 0}, {1, 2, 3}}},
		{"CRLF: missing columns become 0", "1 2\r\n", 3, [][]float64{{1, 2, 0}}},
		{"no final newline: missing columns become 0", "1 2", 3, [][]float64{{1, 2, 0}}},
		{"CRLF blank line is a row of zeros", "\r\n", 3, [][]float64{{0, 0, 0}}},
		{"atof prefix, word skipped", "1e5x,7\n", 3, [][]float64{{1e5, 7, nan}}},
		{"extra columns ignored", "1 2 3 4 5 6 7\n", 3, [][]float64{{1, 2, 3}}},
		{"leading and repeated delimiters", ",,1,,2\n", 3, [][]float64{{1, 2, nan}}},
		{"strtod spellings", "-inf nan 0x10 .5e1\n", 4, [][]float64{{math.Inf(-1), nan, 16, 5}}},
		{"NUL ends the line's text", "1 2\x00 3\n4\n", 3, [][]float64{{1, 2, 0}, {4, nan, nan}}},
		{"lines over 10239 bytes split like fgets", strings.Repeat("1 ", 6000) + "\n", 2, [][]float64{{1, 1}, {1, 1}}},
	} {
		cols, err := ReadColumns(strings.NewReader(tc.in), tc.n)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var rows [][]float64
		for i := range cols[0] {
			var r []float64
			for _, c := range cols {
				r = append(r, c[i])
			}
			rows = append(rows, r)
		}
		if fmt.Sprint(rows) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, rows, tc.want)
		}
	}
}

func TestReadColumnsErrors(t *testing.T) {
	_, err := ReadColumns(strings.NewReader(""), 5)
	wantErr(t, "empty", err, "no data lines")
	_, err = ReadColumns(strings.NewReader("\n \n\t,\n"), 5)
	wantErr(t, "blank lines", err, "no data lines")
	_, err = ReadColumns(strings.NewReader("1\n"), 0)
	wantErr(t, "n=0", err, "at least one column")
}
