package graph

import (
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/physics"
)

// triclinic is a small triclinic crystal with misset on a coarse detector
// (40² pixels of 0.4 mm at 100 mm, λ = 1 Å): a few dozen spots.
func triclinic(extra ...string) []string {
	return append([]string{"-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30",
		"-default_F", "100", "-N", "5", "-lambda", "1.0", "-distance", "100", "-pixel", "0.4",
		"-detpixels", "40"}, extra...)
}

// gradConfigs are the physics features the backward pass must follow.
//
// step scales the central-difference steps: the round and Gaussian shapes
// are cut at half-integer hkl (a kink for round, a jump for Gaussian), and
// the difference is only right when no pixel crosses a cut within ±step.
var gradConfigs = []struct {
	name string
	argv []string
	step float64
}{
	{"triclinic misset", triclinic(), 1},
	{"mosaic domains", triclinic("-mosaic", "0.5", "-mosaic_domains", "4"), 1},
	{"phi steps", triclinic("-phi", "3", "-osc", "2", "-phisteps", "3"), 1},
	{"divergence dispersion", triclinic("-divergence", "0.3", "-divsteps", "2", "-dispersion", "1", "-dispsteps", "3"), 1},
	{"thickness", triclinic("-detector_thick", "200", "-detector_abs", "300", "-thicksteps", "3"), 1},
	{"polarization", triclinic("-polar", "0.7"), 1},
	{"oversample", triclinic("-oversample", "2"), 1},
	{"curved", triclinic("-curved_det"), 1},
	{"rotations twotheta", triclinic("-detector_rotx", "3", "-detector_roty", "-2", "-detector_rotz", "4", "-twotheta", "7"), 1},
	{"xds sample pivot", triclinic("-xds", "-ORGX", "18", "-ORGY", "22", "-polar", "0.5"), 1},
	{"oversample chain", triclinic("-oversample", "2", "-oversample_omega", "-oversample_polar", "-oversample_thick",
		"-detector_thick", "200", "-detector_abs", "300", "-thicksteps", "2", "-polar", "0.6"), 1},
	{"round", triclinic("-round_xtal", "-fudge", "1.3"), 1e-2},
	{"gauss", triclinic("-gauss_xtal", "-fudge", "0.8"), 1e-2},
	{"water", triclinic("-water", "0.05"), 1}, // ~10 photons/pixel, like the spots
	{"point pixel", triclinic("-point_pixel"), 1},
	{"roi", triclinic("-roi", "5", "30", "8", "35", "-polar", "0.8"), 1},
}

// missingHKLConfigs are the interpolation cases: a full table, and one
// that lacks every third reflection (those take default_F), also with the
// interpolation switched off part-way through the image (the table is too
// small for the far side of the detector at λ = 1 Å, with the beam near
// pixel 0).
func missingHKLConfigs(t *testing.T) []struct {
	name string
	argv []string
	step float64
} {
	b, err := os.ReadFile(filepath.Join(inputs, "P1_varied.hkl"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i%3 != 1 {
			keep = append(keep, line)
		}
	}
	file := filepath.Join(t.TempDir(), "holes.hkl")
	if err := os.WriteFile(file, []byte(strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := func(extra ...string) []string {
		return append([]string{"-hkl", file, "-interpolate", "-cell", "70", "80", "90", "75", "85", "95", "-misset", "10", "20", "30",
			"-default_F", "30", "-N", "2", "-pixel", "0.4", "-detpixels", "40"}, extra...)
	}
	return []struct {
		name string
		argv []string
		step float64
	}{{"interpolation", []string{"-hkl", filepath.Join(inputs, "P1_varied.hkl"), "-interpolate", "-cell", "70", "80", "90",
		"75", "85", "95", "-misset", "10", "20", "30", "-default_F", "30", "-N", "2", "-lambda", "6", "-distance", "120",
		"-pixel", "0.4", "-detpixels", "40"}, 1},
		{"interpolation with missing reflections", base("-lambda", "6", "-distance", "120"), 1},
		{"interpolation switched off", base("-lambda", "1", "-distance", "100", "-Xbeam", "2", "-Ybeam", "2"), 1}}
}

// fdStep is the central-difference step for each packed parameter: about
// 1e-7 of its typical scale (lengths in m, angles in rad). Sharp spots
// (N = 5 on 0.4 mm pixels) make the image vary on ~10 µm scales, so the
// truncation error of larger steps exceeds 1e-6.
func fdStep(i int, p []float64) float64 {
	switch {
	case i < physics.PCellA: // detector origin and axes
		return 1e-8
	case i < physics.PAStar: // real-space cell vectors, ~1e-8 m
		return 1e-16
	case i < physics.PLambda: // reciprocal vectors, Å⁻¹
		return 1e-9
	case i == physics.PLambda:
		return 1e-18
	case i == physics.PPixel:
		return 1e-12
	case i == physics.PMu:
		return 1e-4
	case i == physics.PThickStep:
		return 1e-12
	case i == physics.PDistance, i == physics.PIbg:
		return 1e-8 * math.Max(p[i], 1)
	}
	return 1e-7 * math.Max(math.Abs(p[i]), 1e-2)
}

// TestKernelGradient compares physics.Gradient with central differences
// of physics.Render for a random image gradient dI, parameter by parameter
// of the packed vector, over every feature of gradConfigs.
func TestKernelGradient(t *testing.T) {
	configs := append(gradConfigs[:len(gradConfigs):len(gradConfigs)], missingHKLConfigs(t)...)
	for _, tc := range configs {
		t.Run(tc.name, func(t *testing.T) {
			m := model(t, tc.argv...)
			cfg := KeyOf(m).Pixels
			in := FloatInputs(m)
			n := cfg.FPixels * cfg.SPixels
			rng := rand.New(rand.NewSource(1))
			dI := make([]float64, n)
			for i := range dI {
				dI[i] = rng.Float64()
			}
			loss := func(p []float64) float64 {
				in2 := *in
				in2.P = p
				img := make([]float64, n)
				physics.Render(&cfg, &in2, img)
				s := 0.0
				for i, v := range img {
					s += dI[i] * v
				}
				return s
			}
			grad := make([]float64, physics.NParams)
			physics.Gradient(&cfg, in, dI, grad)
			l0 := loss(in.P)
			if l0 == 0 {
				t.Fatal("empty image")
			}
			for i := 0; i < physics.NParams; i++ {
				if i == physics.PDmin {
					// A step function of d_min: no derivative to compare.
					if grad[i] != 0 {
						t.Errorf("d_min has gradient %g", grad[i])
					}
					continue
				}
				h := fdStep(i, in.P) * tc.step
				p := append([]float64(nil), in.P...)
				p[i] = in.P[i] + h
				lp := loss(p)
				p[i] = in.P[i] - h
				lm := loss(p)
				num := (lp - lm) / (2 * h)
				ana := grad[i]
				// Rounding in the difference: ~1e-15·|L|/h.
				floor := 1e-13 * math.Abs(l0) / h
				if err := math.Abs(ana - num); err > 1e-6*math.Max(math.Abs(ana), math.Abs(num)) && err > floor {
					t.Errorf("P[%d]: analytic %.10g, central difference %.10g (rel %.2g)", i, ana, num, err/math.Max(math.Abs(ana), math.Abs(num)))
				}
			}
		})
	}
}

// TestInterpolationSwitchesOff makes sure the "switched off" gradient case
// exercises what its name says.
func TestInterpolationSwitchesOff(t *testing.T) {
	cs := missingHKLConfigs(t)
	for i, want := range []bool{false, false, true} {
		m := model(t, cs[i].argv...)
		cfg := KeyOf(m).Pixels
		p, _ := physics.InterpolationCutoff(&cfg, FloatInputs(m))
		if got := p > 0 && p < cfg.FPixels*cfg.SPixels-1; got != want {
			t.Errorf("%s: cutoff at pixel %d", cs[i].name, p)
		}
	}
}
