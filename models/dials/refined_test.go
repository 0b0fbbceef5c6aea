package dials

import (
	"bytes"
	"encoding/json"
	"math"
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
		m2, err := g.CellModel(base, 1)
		if err != nil {
			t.Fatal(err)
		}
		changed, err := m2.With("a", m2.Crystal.CellA*1.01)
		if err != nil {
			t.Fatal(err)
		}
		if changed, err = changed.With("orient_z", 0.5); err != nil {
			t.Fatal(err)
		}
		if err := el.SetCrystal(0, changed, base); err != nil {
			t.Fatal(err)
		}
		m3 := reread(t, el, base, 1)
		A := models.Float{}
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

// TestSetDetector: a list's detector moved in a model (distance, beam
// centre, a rotation about x) and written back with SetDetector reads
// back to the moved detector's placed frame to 1e-12 — also when the
// panel hangs in a hierarchy whose group is turned and shifted, which
// SetDetector must undo. SetWavelength's λ reads back exactly.
func TestSetDetector(t *testing.T) {
	base := model(t, "-cell", "57", "66", "79", "83", "95", "102", "-default_F", "100", "-N", "5", "-lambda", "1",
		"-distance", "120", "-pixel", "0.1", "-detpixels_f", "96", "-detpixels_s", "64", "-Xbeam", "4", "-Ybeam", "3",
		"-twotheta", "10", "-phi", "3", "-osc", "1", "-phisteps", "2")
	for _, turned := range []bool{false, true} {
		el, err := FromModel(base, Images{Template: "image_###.cbf", First: 1, Count: 4})
		if err != nil {
			t.Fatal(err)
		}
		if turned {
			c, s := math.Cos(0.3), math.Sin(0.3)
			h := el.Detectors[0].Hierarchy
			var e1, e2, e3 error
			h.FastAxis, e1 = unit.vec([3]float64{c, s, 0})
			h.SlowAxis, e2 = unit.vec([3]float64{-s, c, 0})
			h.Origin, e3 = mm.vec([3]float64{0.002, -0.001, 0.003})
			if e1 != nil || e2 != nil || e3 != nil {
				t.Fatal(e1, e2, e3)
			}
		}
		g, err := el.Geometry(0)
		if err != nil {
			t.Fatal(err)
		}
		m, err := g.Model(base, 1)
		if err != nil {
			t.Fatal(err)
		}
		moved := m
		for _, p := range []struct {
			name string
			dv   float64
		}{{"distance", 0.7}, {"xbeam", 0.3}, {"ybeam", -0.2}, {"rotx", 0.5}, {"lambda", 0.001}} {
			v, err := moved.Get(p.name)
			if err != nil {
				t.Fatal(err)
			}
			if moved, err = moved.With(p.name, v+p.dv); err != nil {
				t.Fatal(err)
			}
		}
		if err := el.SetDetector(0, moved, base); err != nil {
			t.Fatal(err)
		}
		if err := el.SetWavelength(0, moved); err != nil {
			t.Fatal(err)
		}
		m2 := reread(t, el, base, 1)
		A := models.Float{}
		want := models.Place[float64](A, moved.Detector, moved.Detector.Params())
		got := models.Place[float64](A, m2.Detector, m2.Detector.Params())
		before := models.Place[float64](A, m.Detector, m.Detector.Params())
		for k, pair := range [][3]models.V3[float64]{{want.Pix0, got.Pix0, before.Pix0}, {want.F, got.F, before.F},
			{want.S, got.S, before.S}, {want.O, got.O, before.O}} {
			d := models.Norm[float64](A, models.AddV[float64](A, pair[0], models.Scale[float64](A, pair[1], -1)))
			moved := models.Norm[float64](A, models.AddV[float64](A, pair[0], models.Scale[float64](A, pair[2], -1)))
			if d > 1e-12*models.Norm[float64](A, pair[0]) || moved == 0 {
				t.Errorf("turned %v: vector %d of the frame off by %g (the change moved it by %g)", turned, k, d, moved)
			}
		}
		if m2.Beam.Lambda != moved.Beam.Lambda {
			t.Errorf("λ %g, want %g", m2.Beam.Lambda, moved.Beam.Lambda)
		}
	}
}

// reread writes el, reads it back and returns experiment 0's model of
// image n on base.
func reread(t *testing.T, el *ExperimentList, base *models.Model, n int) *models.Model {
	t.Helper()
	var buf bytes.Buffer
	if err := el.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	g, err := back.Geometry(0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Model(base, n)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
