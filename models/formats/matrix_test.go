package formats

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestReadMatrix(t *testing.T) {
	for _, tc := range []struct {
		file string
		want [9]float64
	}{
		// A.mat: three lines "a*x b*x c*x", "a*y ...", "a*z ..." (times λ).
		{"A.mat", [9]float64{
			-0.02837711, -0.00305386, 0.02535816,
			-0.02871390, 0.01019549, -0.01400049,
			0.01050048, -0.03209440, -0.01036054}},
		// A_mosflm.mat: a full 9-line MOSFLM matrix file; only its first
		// three lines (the first 9 numbers) are read.
		{"A_mosflm.mat", [9]float64{
			0.01214963, 0.02546154, -0.00087968,
			-0.01451536, 0.00000807, 0.02825911,
			0.01705250, 0.00089825, 0.02468136}},
	} {
		m, err := ReadMatrix(bytes.NewReader(readInput(t, tc.file)))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if m != tc.want {
			t.Errorf("%s: got %v, want %v", tc.file, m, tc.want)
		}
	}
	// Any whitespace layout works, as with fscanf.
	m, err := ReadMatrix(strings.NewReader("1 2\n3 4 5 6 7\n8\n\n9 trailing words"))
	if err != nil || m != [9]float64{1, 2, 3, 4, 5, 6, 7, 8, 9} {
		t.Errorf("free layout: %v %v", m, err)
	}
}

func TestReadMatrixErrors(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"", "found 0 of 9 numbers before end of input"},
		{"1 2 3 4 5 6 7 8", "found 8 of 9 numbers before end of input"},
		{"1 2 3\n4 5 6\nx 8 9", `matrix line 3: found 6 of 9 numbers, then "x"`},
	} {
		_, err := ReadMatrix(strings.NewReader(tc.in))
		wantErr(t, fmt.Sprintf("ReadMatrix(%q)", tc.in), err, tc.msg)
	}
}
