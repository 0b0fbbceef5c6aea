package models

import (
	"io"
	"math"
	"testing"
)

func mustModel(t *testing.T, argv ...string) *Model {
	t.Helper()
	a, err := ParseArgs(argv)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Model(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDetectorPlacement compares the placed detector with the geometry the
// reference printed for the same command line (golden logs, 6 significant
// digits: "Fbeam=… Sbeam=…", "Fclose=… Sclose=…", "DIRECTION_OF_DETECTOR_*",
// "dials origin=", "distance=").
func TestDetectorPlacement(t *testing.T) {
	base := []string{"-default_F", "100", "-cell", "100", "100", "100", "90", "90", "90", "-lambda", "1",
		"-pixel", "0.1", "-N", "5", "-detpixels", "256"}
	cases := []struct {
		log                          string
		extra                        []string
		fbeam, sbeam, fclose, sclose float64 // m
		distance                     float64 // m
		f, s, o                      [3]float64
		dials                        [3]float64 // mm
	}{
		{"sweep__conv_xds_ORGX120_ORGY110", []string{"-distance", "100", "-xds", "-ORGX", "120", "-ORGY", "110"},
			0.01195, 0.01095, 0.01195, 0.01095, 0.1,
			[3]float64{1, 0, 0}, [3]float64{0, 1, 0}, [3]float64{0, 0, 1}, [3]float64{100, -10.95, 11.95}},
		{"sweep__twotheta_20", []string{"-distance", "100", "-twotheta", "20"},
			0.0129, 0.0149626, 0.0129, 0.047102, 0.0939693,
			[3]float64{0, 0, 1}, [3]float64{-0.34202, -0.939693, 0}, [3]float64{0.939693, -0.34202, 0},
			[3]float64{-12.9, 12.122, -104.412}},
		{"sweep__conv_adxv", []string{"-distance", "100", "-adxv"},
			0.01285, 0.01285, 0.01285, 0.01285, 0.1,
			[3]float64{1, 0, 0}, [3]float64{0, -1, 0}, [3]float64{0, 0, 1}, [3]float64{100, 12.85, 12.85}},
		{"AT-PARALLEL-007__rot-5-3-2", []string{"-distance", "100", "-detector_rotx", "5", "-detector_roty", "3", "-detector_rotz", "2"},
			0.0129, 0.0129, 0.00738533, 0.00987919, 0.1,
			[3]float64{0.0551467, -0.0852831, 0.994829}, [3]float64{0.0302081, -0.995747, -0.0870363},
			[3]float64{0.998021, 0.0348517, -0.052336}, [3]float64{-11.7105, 13.9453, -98.8989}},
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 5e-6*math.Abs(want)+1e-6 }
	for _, c := range cases {
		m := mustModel(t, append(append([]string{}, base...), c.extra...)...)
		d := m.Detector
		fr := Place[float64](Float{}, d, d.Params())
		g := d.Derive(fr)
		for _, v := range []struct {
			name      string
			got, want float64
		}{{"Fbeam", g.Fbeam, c.fbeam}, {"Sbeam", g.Sbeam, c.sbeam}, {"Fclose", g.Fclose, c.fclose},
			{"Sclose", g.Sclose, c.sclose}, {"distance", g.Distance, c.distance}} {
			if !near(v.got, v.want) {
				t.Errorf("%s: %s = %g, reference printed %g", c.log, v.name, v.got, v.want)
			}
		}
		for i := 0; i < 3; i++ {
			if !near(fr.F[i], c.f[i]) || !near(fr.S[i], c.s[i]) || !near(fr.O[i], c.o[i]) {
				t.Errorf("%s: axes f %v s %v o %v, reference %v %v %v", c.log, fr.F, fr.S, fr.O, c.f, c.s, c.o)
				break
			}
			if math.Abs(g.DialsOrigin[i]-c.dials[i]) > 5e-6*math.Abs(c.dials[i])+1e-3 {
				t.Errorf("%s: dials origin %v, reference %v", c.log, g.DialsOrigin, c.dials)
				break
			}
		}
	}
}

// TestTriclinicCell compares the real-space vectors with those the
// reference printed for -cell 70 80 90 75 85 95 (golden log
// AT-PARALLEL-023__triclinic-misset-0-0-0, "real-space cell vectors").
func TestTriclinicCell(t *testing.T) {
	m := mustModel(t, "-cell", "70", "80", "90", "75", "85", "95", "-default_F", "1")
	a, b, c := RealVectors[float64](Float{}, m.Crystal, m.Crystal.Params(), m.Beam.Lambda)
	want := [3][3]float64{{69.28031109, -7.95101471, 6.08439479}, {0, 77.28816322, 20.65284063}, {0, 0, 90}}
	for i, v := range [3]V3[float64]{a, b, c} {
		for j := 0; j < 3; j++ {
			if got := v[j] * 1e10; math.Abs(got-want[i][j]) > 1e-7 {
				t.Errorf("vector %d component %d = %.8f Å, reference printed %.8f", i, j, got, want[i][j])
			}
		}
	}
	// The reciprocal vectors the reference regenerates with its formula
	// volume (same log, "reciprocal-space cell vectors", columns a* b* c*).
	as, bs, cs := ReciprocalOfReal[float64](Float{}, m.Crystal, m.Crystal.Params(), a, b, c)
	wantR := [3][3]float64{{0.01443705, 0, 0}, {0.00148521, 0.01294122, 0}, {-0.00131683, -0.00296970, 0.01111337}}
	for i, v := range [3]V3[float64]{as, bs, cs} {
		for j := 0; j < 3; j++ {
			if math.Abs(v[j]-wantR[i][j]) > 1e-8 {
				t.Errorf("reciprocal vector %d component %d = %.8f Å⁻¹, reference printed %.8f", i, j, v[j], wantR[i][j])
			}
		}
	}
}
