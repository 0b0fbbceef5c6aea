package graph

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
)

// TestCrystalGradient: the crystal's gradient alone (what a fit of the
// cell and orientation asks for, and of them and the fluence) gives the
// bits the whole gradient gives for every crystal input and the fluence
// and 0 for the others, with the same loss, on the vector lanes'
// structures and on the per-pixel walk's.
func TestCrystalGradient(t *testing.T) {
	in := inputsDir()
	tri := []string{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30", "-lambda", "2", "-N", "5",
		"-default_F", "100", "-distance", "100", "-pixel", "0.1", "-detpixels", "64", "-fluence", "1e29"}
	with := func(extra ...string) []string { return append(append([]string{}, tri...), extra...) }
	cases := map[string][]string{
		"triclinic": tri,
		"mosaic, spectrum, phi steps": with("-mosaic", "0.5", "-mosaic_domains", "3", "-dispersion", "1", "-dispsteps", "2",
			"-phi", "1", "-osc", "0.2", "-phisteps", "2"),
		"N not whole":           tri, // (N 2.5 below: the command line takes whole N)
		"N per axis":            with("-Na", "3", "-Nb", "4", "-Nc", "5"),
		"table with no-data":    with("-hkl", writeHalfHKL(t, 6)),
		"matrix":                {"-matrix", filepath.Join(in, "A.mat"), "-hkl", filepath.Join(in, "P1.hkl"), "-lambda", "6.2", "-N", "5", "-distance", "100", "-detpixels", "64", "-pixel", "0.4"},
		"sub-pixels and sensor": with("-oversample", "2", "-detector_thick", "100", "-detector_abs", "500", "-thicksteps", "2"),
		"Gaussian shape":        with("-gauss_xtal"),
		"curved detector":       with("-curved_det"),
		"interpolated":          with("-hkl", filepath.Join(in, "P1_varied.hkl"), "-interpolate"),
		"water":                 with("-water", "100"),
		// The polarization: the crystal's loss rows take its factor
		// alone (polarizationLanes), the whole gradient's with its
		// derivatives (in general, and the K = 0 shortcut), or none.
		"Kahn factor 0.5": with("-polar", "0.5"),
		"Kahn factor 0":   with("-polar", "0"),
		"no polarization": with("-nopolar"),
	}
	for name, argv := range cases {
		t.Run(name, func(t *testing.T) {
			m := model(t, argv...)
			if name == "N not whole" {
				for _, n := range []string{"Na", "Nb", "Nc"} {
					var err error
					if m, err = m.With(n, 2.5); err != nil {
						t.Fatal(err)
					}
				}
			}
			img := image(t, m)
			s, err := New(m)
			if err != nil {
				t.Fatal(err)
			}
			obs, w := make([]float64, len(img)), make([]float64, len(img))
			for i, v := range img {
				obs[i] = math.Round(0.9*v + float64(i%3))
				w[i] = float64(i % 2)
			}
			l := &Loss{Kind: LossPoisson, Observed: obs, Weights: w}
			v, full, err := s.Gradient(l)
			if err != nil {
				t.Fatal(err)
			}
			vc, cry, err := s.CrystalGradient(l)
			if err != nil {
				t.Fatal(err)
			}
			if v != vc {
				t.Errorf("loss %v, %v with the crystal's gradient", v, vc)
			}
			some, fluence := false, false
			for i, name := range s.Program().Names() {
				want := 0.0
				if CrystalGradientInput(name) {
					want = full[i]
					some = some || want != 0 && CrystalInput(name)
					fluence = fluence || want != 0 && name == "beam.fluence"
				}
				if math.Float64bits(cry[i]) != math.Float64bits(want) {
					t.Errorf("%s: %v, want %v (the whole gradient's %v)", name, cry[i], want, full[i])
				}
			}
			if !some {
				t.Error("no crystal input has a derivative")
			}
			if !fluence {
				t.Error("the fluence has no derivative")
			}
		})
	}
}

// TestObjectiveCrystalGradient: an objective whose parameters move the
// crystal (and the fluence) alone runs the crystal's gradient (its
// program is the one built for it: a detector size no other test uses),
// with the bits an objective that also has the distance (a program that
// keeps the detector's sums) gives for them.
func TestObjectiveCrystalGradient(t *testing.T) {
	m := model(t, "-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30", "-lambda", "2", "-N", "5",
		"-default_F", "100", "-distance", "100", "-pixel", "0.1", "-detpixels", "61", "-fluence", "1e29",
		"-mosaic", "0.5", "-mosaic_domains", "3")
	// built says whether m's program holds a gradient program of the
	// crystal's (or another).
	built := func(crystal bool) bool {
		for _, k := range gradKeys(t, m) {
			if k.crystal == crystal {
				return true
			}
		}
		return false
	}
	crystal := []string{"a", "b", "c", "alpha", "beta", "gamma", "orient_x", "orient_y", "orient_z", "mosaic_spread", "fluence"}
	l := Loss{Kind: LossSum}
	oc, err := NewObjective(m, crystal, l)
	if err != nil {
		t.Fatal(err)
	}
	of, err := NewObjective(m, append(append([]string{}, crystal...), "distance"), l)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{70.1, 79.9, 90.2, 75.1, 84.9, 95.2, 0.1, -0.1, 0.05, 0.45, 1.1e29}
	vc, gc, err := oc.Gradient(x)
	if err != nil {
		t.Fatal(err)
	}
	if !built(true) || built(false) {
		t.Errorf("the objective of the crystal and the fluence: crystal's gradient program %v, whole gradient's %v; want true, false", built(true), built(false))
	}
	vf, gf, err := of.Gradient(append(append([]float64{}, x...), 100))
	if err != nil {
		t.Fatal(err)
	}
	if vc != vf {
		t.Errorf("loss %v, %v with the distance", vc, vf)
	}
	for i, n := range crystal {
		if math.Float64bits(gc[i]) != math.Float64bits(gf[i]) || gc[i] == 0 {
			t.Errorf("%s: %v, with the distance %v", n, gc[i], gf[i])
		}
	}
}

// TestGradientFor: the gradient for a set of inputs gives the whole
// gradient's bits for each of them and 0 for the others, with the same
// loss, for the sets whose programs leave parts out (no N, no default F,
// neither, no detector or beam, the crystal's alone) and one that leaves
// none out, on the
// vector lanes' structures (the usual one, N per axis) and on one whose
// terms compute every part anyway (interpolation).
func TestGradientFor(t *testing.T) {
	in := inputsDir()
	tri := []string{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30", "-lambda", "2", "-N", "5",
		"-default_F", "100", "-distance", "100", "-pixel", "0.1", "-detpixels", "64", "-fluence", "1e29"}
	with := func(extra ...string) []string { return append(append([]string{}, tri...), extra...) }
	hkl := []string{"-hkl", filepath.Join(in, "P1.hkl"), "-cell", "100", "100", "100", "90", "90", "90", "-lambda", "1", "-pixel", "0.3"}
	cases := map[string][]string{
		"triclinic":          with("-mosaic", "0.5", "-mosaic_domains", "3"),
		"N per axis, P1.hkl": with(append(hkl, "-Na", "3", "-Nb", "4", "-Nc", "6")...),
		"P1.hkl, sub-pixels": with(append(hkl, "-oversample", "2")...),
		"interpolated":       with("-hkl", filepath.Join(in, "P1_varied.hkl"), "-interpolate"),
	}
	isN := func(n string) bool { return n == "crystal.Na" || n == "crystal.Nb" || n == "crystal.Nc" }
	sets := map[string]func(string) bool{
		"all but N":           func(n string) bool { return !isN(n) },
		"all but default F":   func(n string) bool { return n != "crystal.default_F" },
		"all but both":        func(n string) bool { return !isN(n) && n != "crystal.default_F" },
		"the crystal's":       CrystalGradientInput,
		"cell and distance":   func(n string) bool { return n == "crystal.a" || n == "crystal.alpha" || n == "detector.distance" },
		"N and the detector":  func(n string) bool { return isN(n) || strings.HasPrefix(n, "detector.") },
		"the crystal's and N": func(n string) bool { return CrystalGradientInput(n) || isN(n) },
		"cell, N, default F": func(n string) bool {
			return n == "crystal.b" || n == "crystal.gamma" || isN(n) || n == "crystal.default_F"
		},
	}
	for name, argv := range cases {
		t.Run(name, func(t *testing.T) {
			m := model(t, argv...)
			img := image(t, m)
			s, err := New(m)
			if err != nil {
				t.Fatal(err)
			}
			obs := make([]float64, len(img))
			for i, v := range img {
				obs[i] = math.Round(0.9*v + float64(i%3))
			}
			l := &Loss{Kind: LossPoisson, Observed: obs}
			v, full, err := s.Gradient(l)
			if err != nil {
				t.Fatal(err)
			}
			names := s.Program().Names()
			for _, n := range []string{"crystal.Na", "crystal.Nc", "crystal.default_F", "crystal.a", "detector.distance"} {
				if n == "crystal.default_F" && name == "interpolated" {
					continue // (P1_varied.hkl's table covers the detector)
				}
				if i := slices.Index(names, n); i < 0 || full[i] == 0 {
					t.Errorf("the whole gradient has no entry for %s to leave out or keep", n)
				}
			}
			for set, want := range sets {
				vs, g, err := s.GradientFor(l, want)
				if err != nil {
					t.Fatal(err)
				}
				if vs != v {
					t.Errorf("%s: loss %v, the whole gradient's %v", set, vs, v)
				}
				for i, n := range names {
					w := 0.0
					if want(n) {
						w = full[i]
					}
					if math.Float64bits(g[i]) != math.Float64bits(w) {
						t.Errorf("%s: %s %v, want %v", set, n, g[i], w)
					}
				}
			}
		})
	}
}

// TestObjectiveGradientParts: an objective's gradient leaves out the
// derivatives by N, the default F, and the detector and the beam when its
// parameters do not move them (its program is built with noN,
// noDefaultF, noGeometry), and keeps them when they do.
func TestObjectiveGradientParts(t *testing.T) {
	l := Loss{Kind: LossSum}
	for i, c := range []struct {
		params             []string
		x                  []float64
		noN, noDef, noGeom bool
	}{
		{[]string{"a", "distance"}, []float64{70.1, 100.2}, true, true, false},
		{[]string{"a", "Na"}, []float64{70.1, 5.5}, false, true, true},
		{[]string{"a", "default_F"}, []float64{70.1, 90}, true, false, true},
		{[]string{"a", "orient_x", "Na", "fluence"}, []float64{70.1, 0.1, 5.5, 1.1e29}, false, true, true},
		{[]string{"Na", "lambda"}, []float64{5.5, 2.01}, false, true, false},
	} {
		// A program of its own (a detector size no other test uses).
		m := model(t, "-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30", "-lambda", "2", "-N", "5",
			"-default_F", "100", "-distance", "100", "-pixel", "0.1", "-detpixels", fmt.Sprint(53+i), "-fluence", "1e29")
		o, err := NewObjective(m, c.params, l)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := o.Gradient(c.x); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, k := range gradKeys(t, m) {
			if !k.crystal && k.noN == c.noN && k.noDefaultF == c.noDef && k.noGeometry == c.noGeom {
				found = true
			}
		}
		if !found {
			t.Errorf("%v: no gradient program with noN %v, noDefaultF %v, noGeometry %v among %+v", c.params, c.noN, c.noDef, c.noGeom, gradKeys(t, m))
		}
	}
}

// gradKeys are the losses and parts of the gradient programs m's program
// has built (those with an idle machine: every one run so far).
func gradKeys(t *testing.T, m *models.Model) []lossKey {
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Program()
	p.mu.Lock()
	defer p.mu.Unlock()
	var ks []lossKey
	for k, idle := range p.grads {
		if len(idle) > 0 {
			ks = append(ks, k)
		}
	}
	return ks
}
