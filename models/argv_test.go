package models

import (
	"errors"
	"strings"
	"testing"
)

// TestParseArgsErrors: every command-line mistake is a usage error whose
// message names the flag or argument at fault.
func TestParseArgsErrors(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"-bogus"}, "unknown flag -bogus"},
		{[]string{"-lambda"}, "-lambda: needs 1 value"},
		{[]string{"-lambda", "abc"}, `-lambda: "abc" is not a number`},
		{[]string{"-N", "2.5"}, `-N: "2.5" is not a whole number`},
		{[]string{"-misset", "1", "2"}, "-misset: needs 3 value"},
		{[]string{"-cell"}, "-cell: needs the cell"},
		{[]string{"-pivot", "middle"}, `-pivot "middle"`},
		{[]string{"abc"}, `unexpected argument "abc"`},
		{[]string{"-lamda", "1"}, "unknown flag -lamda (did you mean -lambda"},
		{[]string{"-printout_pixel", "1"}, "-printout_pixel: needs 2 value"},
		{[]string{"-xtal_size", "-1"}, "-xtal_size -1 mm"},
		{[]string{"-energy", "0"}, "-energy 0"},
		{[]string{"-lambda", "NaN"}, `-lambda: "NaN" is not a number`},
	} {
		_, err := ParseArgs(c.argv)
		if err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a usage error containing %q", c.argv, err, c.want)
		}
	}
}

// TestParseArgsValues: aliases and multi-value flags land where the
// reference puts them (nanoBragg.c argv loop).
func TestParseArgsValues(t *testing.T) {
	a, err := ParseArgs([]string{"-cell", "70", "80", "90", "75", "85", "95", "-wave", "1.5", "-matrix", "A.mat",
		"-misset", "-89.9", "-31.3", "177.7", "-detpixels_x", "100", "-detpixels_y", "200", "-Na", "3",
		"-floatimage", "x.bin", "-dials", "-energy", "12398.42"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Cell != [6]float64{70, 80, 90, 75, 85, 95} || a.MatFile != "A.mat" || a.Misset != [3]float64{-89.9, -31.3, 177.7} ||
		a.Detector.FPixels != 100 || a.Detector.SPixels != 200 || a.Na != 3 || a.Nb != 1 || a.FloatFile != "x.bin" ||
		a.Detector.Convention != DIALS || a.LambdaA != 1 {
		t.Errorf("parsed %+v", a)
	}
	// A short -cell stops at the next flag; b, c and the angles default.
	a, err = ParseArgs([]string{"-cell", "50", "-default_F", "1"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Cell != [6]float64{50} || a.DefaultF != 1 {
		t.Errorf("short -cell parsed as %v, default_F %g", a.Cell, a.DefaultF)
	}
	m := mustModel(t, "-cell", "50", "-default_F", "1")
	if m.Crystal.CellB != 50 || m.Crystal.CellC != 50 || m.Crystal.Gamma != rad(90) {
		t.Errorf("short -cell gave %+v", m.Crystal)
	}
	// A second, shorter -cell keeps the first's other numbers: the
	// reference's -cell sets only the values it is given (nanoBragg.c
	// stops at the first that starts with '-'); a random comparison with
	// the reference found the images apart when they were reset.
	a, err = ParseArgs([]string{"-cell", "100", "100", "100", "90", "100", "110", "-cell", "70", "80", "-default_F", "1"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Cell != [6]float64{70, 80, 100, 90, 100, 110} {
		t.Errorf("-cell … -cell 70 80 parsed as %v", a.Cell)
	}
}

// TestModelErrors: impossible physics is refused with a clear message.
func TestModelErrors(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"-default_F", "1"}, "no crystal"},
		{[]string{"-cell", "10", "10", "10", "10", "10", "170", "-default_F", "1"}, "do not close a cell"},
		{[]string{"-cell", "10", "10", "10", "90", "90", "190", "-default_F", "1"}, "strictly between 0 and 180"},
		{[]string{"-cell", "10", "-default_F", "1", "-pixel", "0"}, "-pixel 0 mm"},
		{[]string{"-cell", "10", "-default_F", "1", "-fdet_vector", "0", "0", "1", "-sdet_vector", "1", "0", "0", "-odet_vector", "0", "1", "0"}, "parallel to the beam"},
		{[]string{"-cell", "10", "-default_F", "1", "-roi", "5", "4", "0", "1"}, "-roi 5 4 0 1"},
		{[]string{"-cell", "10", "-default_F", "1", "-detector_abs", "-5"}, "-detector_abs -5"},
		{[]string{"-cell", "10", "-hkl", "/nonexistent/x.hkl"}, "-hkl"},
	} {
		a, err := ParseArgs(c.argv)
		if err == nil {
			_, err = a.Model(nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.argv, err, c.want)
		}
	}
}

// FuzzParseArgs: no command line makes the parser or the model builder
// panic.
func FuzzParseArgs(f *testing.F) {
	f.Add("-cell 100 100 100 90 90 90 -default_F 100 -detpixels 8 -distance 100")
	f.Add("-xds -ORGX 1 -ORGY 2 -cell 70 80 90 75 85 95 -misset -1 2 3 -default_F 1 -detpixels 4")
	f.Add("-fdet_vector 0 0 1 -sdet_vector 0 -1 0 -odet_vector 0 0 0 -cell 5 -default_F 1 -detsize 1")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArgs(strings.Fields(s))
		if err != nil {
			return
		}
		if a.Detector.FPixels*a.Detector.SPixels > 1<<16 || a.HKLFile != "" || a.MatFile != "" {
			return // keep the fuzzer off the file system and off huge images
		}
		a.DumpFile = "/nonexistent/Fdump.bin"
		_, _ = a.Model(nil)
	})
}
