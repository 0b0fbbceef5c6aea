package models

import (
	"math"
	"testing"
)

// TestCellFromVectors: the real-space vectors of a -cell crystal with a
// misset and an orientation correction, and those of a matrix crystal,
// give back, through CellFromVectors, a -cell crystal whose vectors are
// the same to 1e-12 of their length (the reference's construction does
// not keep the angles: the recovered cell's angles are not the given
// ones, its vectors are).
func TestCellFromVectors(t *testing.T) {
	A := Float{}
	for _, argv := range [][]string{
		{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "-20", "30", "-default_F", "1"},
		{"-cell", "57", "66", "79", "83", "95", "102", "-misset", "25", "-12", "40", "-default_F", "1"},
		{"-matrix", "../testdata/inputs/A.mat", "-default_F", "1"},
	} {
		m := mustModel(t, argv...)
		if m.Crystal.FromMatrix == false {
			var err error
			if m, err = m.With("orient_y", 0.7); err != nil {
				t.Fatal(err)
			}
		}
		a, b, c := RealVectors[float64](A, m.Crystal, m.Crystal.Params(), m.Beam.Lambda)
		got, err := m.Crystal.CellFromVectors(a, b, c, m.Beam.Lambda)
		if err != nil {
			t.Fatal(err)
		}
		if got.FromMatrix || got.OrientY != 0 {
			t.Errorf("%s: not a -cell crystal without correction: %+v", argv[0], got)
		}
		ra, rb, rc := RealVectors[float64](A, got, got.Params(), m.Beam.Lambda)
		for i, pair := range [][2]V3[float64]{{a, ra}, {b, rb}, {c, rc}} {
			d := Norm[float64](A, AddV[float64](A, pair[0], Scale[float64](A, pair[1], -1)))
			if d > 1e-12*Norm[float64](A, pair[0]) {
				t.Errorf("%s: vector %d off by %g of %g", argv[0], i, d, Norm[float64](A, pair[0]))
			}
		}
		if argv[0] == "-cell" {
			// The given cell reproduces its own vectors: CellFromVectors
			// finds it again.
			if math.Abs(got.Alpha-m.Crystal.Alpha) > 1e-11 || math.Abs(got.CellB-m.Crystal.CellB) > 1e-9 {
				t.Errorf("%s: α %g (given %g), b %g (given %g)", argv[1], got.Alpha, m.Crystal.Alpha, got.CellB, m.Crystal.CellB)
			}
		}
	}
}
