package graph

import (
	"math"
	"path/filepath"
	"testing"
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
// with the bits an objective that also has the distance (the whole
// gradient) gives for them.
func TestObjectiveCrystalGradient(t *testing.T) {
	m := model(t, "-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30", "-lambda", "2", "-N", "5",
		"-default_F", "100", "-distance", "100", "-pixel", "0.1", "-detpixels", "61", "-fluence", "1e29",
		"-mosaic", "0.5", "-mosaic_domains", "3")
	// built says whether m's program holds a gradient program of the
	// crystal's (or of the whole gradient).
	built := func(crystal bool) bool {
		s, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		p := s.Program()
		p.mu.Lock()
		defer p.mu.Unlock()
		for k, idle := range p.grads {
			if k.crystal == crystal && len(idle) > 0 {
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
