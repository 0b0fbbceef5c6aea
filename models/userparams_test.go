package models

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

// TestWithMatchesArgv: Model.With(name, v) gives the model that the
// command line with that flag value builds (its parameters and detector
// placement), for every user parameter, in BEAM- and SAMPLE-pivot setups.
func TestWithMatchesArgv(t *testing.T) {
	base := func(extra ...string) []string {
		return append([]string{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30",
			"-default_F", "100", "-Na", "5", "-Nb", "4", "-Nc", "3", "-lambda", "1.0", "-pixel", "0.4", "-detpixels", "40",
			"-phi", "2", "-mosaic", "0.3", "-mosaic_domains", "3", "-polar", "0.7", "-fluence", "1e24",
			"-detector_rotx", "1", "-detector_roty", "2", "-detector_rotz", "3", "-Xbeam", "7", "-Ybeam", "9"}, extra...)
	}
	cases := []struct {
		name  string
		value float64
		flag  []string
	}{
		{"a", 71, []string{"-cell", "71", "80", "90", "75", "85", "95"}},
		{"b", 79, []string{"-cell", "70", "79", "90", "75", "85", "95"}},
		{"c", 92, []string{"-cell", "70", "80", "92", "75", "85", "95"}},
		{"alpha", 76, []string{"-cell", "70", "80", "90", "76", "85", "95"}},
		{"beta", 84, []string{"-cell", "70", "80", "90", "75", "84", "95"}},
		{"gamma", 96, []string{"-cell", "70", "80", "90", "75", "85", "96"}},
		{"misset_x", 11, []string{"-misset", "11", "20", "30"}},
		{"misset_y", 19, []string{"-misset", "10", "19", "30"}},
		{"misset_z", 31, []string{"-misset", "10", "20", "31"}},
		{"phi", 3, []string{"-phi", "3"}},
		{"Na", 6, []string{"-Na", "6"}},
		{"Nb", 2, []string{"-Nb", "2"}},
		{"Nc", 7, []string{"-Nc", "7"}},
		{"mosaic_spread", 0.4, []string{"-mosaic", "0.4"}},
		{"xbeam", 6.5, []string{"-Xbeam", "6.5"}},
		{"ybeam", 9.5, []string{"-Ybeam", "9.5"}},
		{"rotx", 1.5, []string{"-detector_rotx", "1.5"}},
		{"roty", 2.5, []string{"-detector_roty", "2.5"}},
		{"rotz", 3.5, []string{"-detector_rotz", "3.5"}},
		{"lambda", 1.1, []string{"-lambda", "1.1"}},
		{"fluence", 2e24, []string{"-fluence", "2e24"}},
		{"polar", 0.5, []string{"-polar", "0.5"}},
		{"default_F", 120, []string{"-default_F", "120"}},
	}
	for _, setup := range []struct {
		name  string
		extra []string
	}{{"beam pivot", []string{"-distance", "100"}}, {"sample pivot", []string{"-close_distance", "90", "-twotheta", "5"}}} {
		more := []struct {
			name  string
			value float64
			flag  []string
		}{{"distance", 101, []string{"-distance", "101"}}}
		if setup.name == "sample pivot" {
			more = []struct {
				name  string
				value float64
				flag  []string
			}{{"close_distance", 91, []string{"-close_distance", "91"}}, {"twotheta", 6, []string{"-twotheta", "6"}}}
		}
		for _, c := range append(cases, more...) {
			m := mustModel(t, base(setup.extra...)...)
			want := mustModel(t, append(base(setup.extra...), c.flag...)...)
			got, err := m.With(c.name, c.value)
			if err != nil {
				t.Fatalf("%s: With(%s, %g): %v", setup.name, c.name, c.value, err)
			}
			if v, _ := got.Get(c.name); math.Abs(v-c.value) > 1e-12*math.Abs(c.value) {
				t.Errorf("%s: Get(%s) = %g after With %g", setup.name, c.name, v, c.value)
			}
			if g, w := got.Params(), want.Params(); !reflect.DeepEqual(g, w) {
				t.Errorf("%s: With(%s, %g) parameters\n%+v\ncommand line gives\n%+v", setup.name, c.name, c.value, g, w)
			}
			A := Float{}
			if g, w := Place[float64](A, got.Detector, got.Detector.Params()), Place[float64](A, want.Detector, want.Detector.Params()); g != w {
				t.Errorf("%s: With(%s) places the detector at %v, the command line at %v", setup.name, c.name, g, w)
			}
		}
	}
}

// TestWithRefuses: bad values and parameters the model does not have.
func TestWithRefuses(t *testing.T) {
	m := mustModel(t, "-cell", "70", "80", "90", "90", "90", "90", "-default_F", "1")
	for _, c := range []struct {
		name string
		v    float64
	}{{"a", -1}, {"Na", 0.5}, {"mosaic_spread", -1}, {"lambda", 0}, {"close_distance", 10}, {"bogus", 1}, {"alpha", 200}} {
		if _, err := m.With(c.name, c.v); err == nil {
			t.Errorf("With(%s, %g) accepted", c.name, c.v)
		}
	}
}

// TestArgvRoundTrip: the command line Model.Argv writes for a changed
// model builds that model again (to the 12 digits written).
func TestArgvRoundTrip(t *testing.T) {
	argv := []string{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "random", "-misset_seed", "3",
		"-default_F", "100", "-N", "5", "-energy", "12398.42", "-pixel", "0.4", "-detpixels", "40", "-mosaic", "0.2",
		"-mosaic_domains", "2", "-flux", "1e12", "-exposure", "1", "-beamsize", "0.1"}
	m := mustModel(t, argv...)
	changes := map[string]float64{"a": 70.7, "beta": 84.2, "misset_x": 3.25, "misset_z": -7, "Na": 6, "lambda": 1.01,
		"fluence": 3e24, "xbeam": 8.5, "rotz": 1.5, "mosaic_spread": 0.25, "polar": 0.3, "distance": 99}
	var names []string
	for _, p := range UserParams {
		if v, ok := changes[p.Name]; ok {
			var err error
			if m, err = m.With(p.Name, v); err != nil {
				t.Fatal(err)
			}
			names = append(names, p.Name)
		}
	}
	out, rounded := m.Argv(argv, names)
	if len(rounded) != 0 {
		t.Errorf("rounded %v", rounded)
	}
	back := mustModel(t, out...)
	for _, n := range names {
		want, _ := m.Get(n)
		got, _ := back.Get(n)
		if math.Abs(got-want) > 1e-10*math.Abs(want) {
			t.Errorf("%s: %g from %q, model has %g", n, got, out, want)
		}
	}
	if _, r := m.Argv(argv, []string{"Nb"}); r != nil {
		t.Errorf("whole Nb rounded: %v", r)
	}
	m2, _ := m.With("Nc", 4.6)
	if out, r := m2.Argv(argv, []string{"Nc"}); len(r) != 1 || out[len(out)-1] != "5" {
		t.Errorf("Nc 4.6: %q rounded %v", out, r)
	}
}

// TestOrientationArgv: an orientation correction written back as a
// command line is a -misset that gives the same reciprocal vectors (to
// 1e-11 of their length: the angles are written with 12 digits), for a
// cell crystal and for a matrix crystal, and with no correction the
// misset is written as it was.
func TestOrientationArgv(t *testing.T) {
	for _, argv := range [][]string{
		{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "-20", "30", "-default_F", "1"},
		{"-matrix", "../testdata/inputs/A.mat", "-misset", "1", "2", "3", "-default_F", "1"},
	} {
		m := mustModel(t, argv...)
		if out, _ := m.Argv(argv, []string{"orient_x"}); !reflect.DeepEqual(out[len(out)-4:], argv[slices.Index(argv, "-misset"):][:4]) {
			t.Errorf("no correction: %q", out)
		}
		for _, n := range []string{"orient_x", "orient_y", "orient_z"} {
			var err error
			if m, err = m.With(n, map[string]float64{"orient_x": 1.5, "orient_y": -0.7, "orient_z": 2.25}[n]); err != nil {
				t.Fatal(err)
			}
		}
		out, _ := m.Argv(argv, []string{"orient_x", "orient_y", "orient_z"})
		back := mustModel(t, out...)
		A := Float{}
		as, bs, cs := Reciprocal[float64](A, m.Crystal, m.Crystal.Params(), m.Beam.Lambda)
		as2, bs2, cs2 := Reciprocal[float64](A, back.Crystal, back.Crystal.Params(), back.Beam.Lambda)
		for i, pair := range [][2]V3[float64]{{as, as2}, {bs, bs2}, {cs, cs2}} {
			d := Norm[float64](A, AddV[float64](A, pair[0], Scale[float64](A, pair[1], -1)))
			if d > 1e-11*Norm[float64](A, pair[0]) {
				t.Errorf("%s: vector %d moved by %g of %g (%q)", argv[0], i, d, Norm[float64](A, pair[0]), out)
			}
		}
		// Zero correction in the rebuilt model: the orientation is all
		// in its misset.
		if v, _ := back.Get("orient_y"); v != 0 {
			t.Errorf("rebuilt orient_y = %g", v)
		}
		// The correction does change the vectors (the test can fail).
		as0, _, _ := Reciprocal[float64](A, mustModel(t, argv...).Crystal, mustModel(t, argv...).Crystal.Params(), m.Beam.Lambda)
		if d := Norm[float64](A, AddV[float64](A, as, Scale[float64](A, as0, -1))); d < 1e-3*Norm[float64](A, as) {
			t.Errorf("the orientation correction did not move a*")
		}
	}
}
