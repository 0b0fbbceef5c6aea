package dials

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gobragg/gobragg/models"
)

// TestSetCrystal: a list written from a model, read into a model whose
// crystal is then changed (cell and orientation), written back with
// SetCrystal and read again, gives the changed crystal's vectors to
// 1e-12 of their length — also through a goniometer with a setting
// rotation, which SetCrystal must undo.
func TestSetCrystal(t *testing.T) {
	base := model(t, "-cell", "57", "66", "79", "83", "95", "102", "-misset", "25", "-12", "40", "-default_F", "100", "-N", "5",
		"-lambda", "1", "-distance", "120", "-detpixels", "64", "-pixel", "0.4", "-phi", "3", "-osc", "1", "-phisteps", "2")
	el, err := FromModel(base, Images{Template: "image_###.cbf", First: 1, Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, withSetting := range []bool{false, true} {
		if withSetting {
			// A 90° setting rotation about DIALS z: the stored vectors
			// are the lab ones turned back.
			el.Goniometers[0].SettingRotation = numbers(t, [9]float64{0, -1, 0, 1, 0, 0, 0, 0, 1})
		}
		g, err := el.Geometry(0)
		if err != nil {
			t.Fatal(err)
		}
		m, err := g.Model(base, 1)
		if err != nil {
			t.Fatal(err)
		}
		A := models.Float{}
		a, b, c := models.RealVectors[float64](A, m.Crystal, m.Crystal.Params(), m.Beam.Lambda)
		cell, err := m.Crystal.CellFromVectors(a, b, c, m.Beam.Lambda)
		if err != nil {
			t.Fatal(err)
		}
		m2 := *m
		m2.Crystal = cell
		changed, err := (&m2).With("a", cell.CellA*1.01)
		if err != nil {
			t.Fatal(err)
		}
		if changed, err = changed.With("orient_z", 0.5); err != nil {
			t.Fatal(err)
		}
		if err := el.SetCrystal(0, changed, base); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := el.Write(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := back.Geometry(0)
		if err != nil {
			t.Fatal(err)
		}
		m3, err := g2.Model(base, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := [3]models.V3[float64]{}
		want[0], want[1], want[2] = models.RealVectors[float64](A, changed.Crystal, changed.Crystal.Params(), changed.Beam.Lambda)
		got := [3]models.V3[float64]{}
		got[0], got[1], got[2] = models.RealVectors[float64](A, m3.Crystal, m3.Crystal.Params(), m3.Beam.Lambda)
		for i := range want {
			d := models.Norm[float64](A, models.AddV[float64](A, want[i], models.Scale[float64](A, got[i], -1)))
			if d > 1e-12*models.Norm[float64](A, want[i]) {
				t.Errorf("setting rotation %v: vector %d off by %g of %g", withSetting, i, d, models.Norm[float64](A, want[i]))
			}
		}
	}
}

func numbers(t *testing.T, m [9]float64) [9]json.Number {
	t.Helper()
	var out [9]json.Number
	for i, v := range m {
		n, err := unit.number(v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = n
	}
	return out
}
