package models

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFlagTable: every flag has one entry, a group, a description, and
// value names when it takes values.
func TestFlagTable(t *testing.T) {
	groups := map[string]bool{GroupCrystal: true, GroupRotation: true, GroupBeam: true, GroupDetector: true,
		GroupSensor: true, GroupBack: true, GroupOutput: true, GroupGobragg: true}
	seen := map[string]bool{}
	for _, f := range Flags() {
		for _, n := range f.Names {
			if seen[n] || !strings.HasPrefix(n, "-") {
				t.Errorf("flag %q twice or without its dash", n)
			}
			seen[n] = true
		}
		if !groups[f.Group] || f.Doc == "" || (f.Values != 0) != (f.Args != "") {
			t.Errorf("flag %v: group %q, doc %q, %d values named %q", f.Names, f.Group, f.Doc, f.Values, f.Args)
		}
	}
	if len(seen) != len(byName) {
		t.Errorf("Flags lists %d names, the parser knows %d", len(seen), len(byName))
	}
}

// TestSuggestFlags: a misspelt flag gets the nearest names.
func TestSuggestFlags(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"-lamda", "-lambda"}, {"-detpixel", "-detpixels"},
		{"-mosaic_domain", "-mosaic_domains"}, {"-Xbem", "-Xbeam"}} {
		if got := SuggestFlags(c.in); len(got) == 0 || got[0] != c.want {
			t.Errorf("%s: suggested %v, want %s first", c.in, got, c.want)
		}
	}
	if got := SuggestFlags("-completely_different"); len(got) != 0 {
		t.Errorf("suggested %v for nonsense", got)
	}
}

// TestCrystalSize: the -xtal_size family sets N as the reference does
// (golden cases size__*: 80×80×80 cells of 100 Å for 0.0008 mm; 72×50×34
// of the 70 80 90 triclinic cell for 0.0005 × 0.0004 × 0.0003 mm), over
// -N, with the b and c sizes clipped to the beam.
func TestCrystalSize(t *testing.T) {
	for _, c := range []struct {
		argv string
		n    [3]float64
		log  string
	}{
		{"-cell 100 100 100 90 90 90 -xtal_size 0.0008 -N 5", [3]float64{80, 80, 80}, "crystal is 0.8 x 0.8 x 0.8 microns"},
		{"-cell 70 80 90 75 85 95 -misset 10 20 30 -sample_thick 0.0005 -sample_width 0.0004 -sample_height 0.0003",
			[3]float64{72, 50, 34}, "crystal is 0.504 x 0.4 x 0.306 microns"},
		{"-cell 70 80 90 75 85 95 -xtal_x 0.0006 -xtal_y 0.0005 -xtal_z 0.0004 -N 3", [3]float64{86, 63, 45}, "86x63x45 cells"},
		{"-cell 100 -xtal_y 0.3 -Na 2", [3]float64{2, 10000, 1}, "WARNING: clipping sample (0.0003 m high) with beam (0.0001 m)"},
		{"-cell 100 -xtalsize 0.3 -beamsize -1", [3]float64{30000, 30000, 30000}, "crystal is 300 x 300 x 300 microns"},
	} {
		a, err := ParseArgs(append(strings.Fields(c.argv), "-default_F", "1", "-detpixels", "4", "-oversample", "1"))
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		m, err := a.Model(&log)
		if err != nil {
			t.Fatalf("%s: %v", c.argv, err)
		}
		if got := [3]float64{m.Crystal.Na, m.Crystal.Nb, m.Crystal.Nc}; got != c.n || !strings.Contains(log.String(), c.log) {
			t.Errorf("%s: N %v, log %q; want %v and %q", c.argv, got, log.String(), c.n, c.log)
		}
	}
}

// TestInertFlags: -stol/-4stol/-Q tables are read and checked, -coherent,
// -density, -MW and -stolout are accepted: none changes the model.
func TestInertFlags(t *testing.T) {
	dir := t.TempDir()
	stol := filepath.Join(dir, "air.stol")
	if err := os.WriteFile(stol, []byte("0 14.1\n0.1 12\n0.5 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.stol")
	if err := os.WriteFile(empty, []byte("\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := strings.Fields("-cell 70 80 90 75 85 95 -default_F 1 -detpixels 4 -N 3")
	plain := mustModel(t, base...)
	for _, extra := range [][]string{{"-stol", stol}, {"-4stol", stol}, {"-Q", stol}, {"-coherent"}, {"-density", "1.2", "-MW", "18"}, {"-molecular_weight", "18"}, {"-molecules", "18"}, {"-molec", "18"},
		{"-stolout", filepath.Join(dir, "out.stol")}, {"-printout_pixel", "1", "2"}} {
		m := mustModel(t, append(append([]string{}, base...), extra...)...)
		if !sameParams(m, plain) {
			t.Errorf("%q changed the model", extra)
		}
	}
	// -source_distance: the reference's parsing of it is commented out,
	// so it has no effect there (0 and -10000 give its default image);
	// nor here (0 made the sources' directions NaN, -10000 flipped them).
	div := append(append([]string{}, base...), "-hdivrange", "0.5", "-hdivsteps", "3")
	withDiv := mustModel(t, div...)
	for _, d := range []string{"0", "-10000", "5"} {
		m := mustModel(t, append(append([]string{}, div...), "-source_distance", d)...)
		if !reflect.DeepEqual(m.Beam.Sources, withDiv.Beam.Sources) || len(m.Beam.Sources) != 3 {
			t.Errorf("-source_distance %s: sources %v, want %v", d, m.Beam.Sources, withDiv.Beam.Sources)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.stol")); !os.IsNotExist(err) {
		t.Error("-stolout wrote its file")
	}
	for _, c := range []struct {
		extra []string
		want  string
	}{{[]string{"-stol", empty}, "-stol " + empty + ": formats: columns: no data lines"},
		{[]string{"-Q", filepath.Join(dir, "missing")}, "-Q: "}} {
		a, err := ParseArgs(append(append([]string{}, base...), c.extra...))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Model(nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.extra, err, c.want)
		}
	}
}

func sameParams(a, b *Model) bool {
	pa, pb := a.Params(), b.Params()
	return pa == pb && a.Detector.Oversample == b.Detector.Oversample
}

// TestModelWritesNoFiles: building a model from -hkl writes nothing;
// WriteDump writes the reference's cache, which a later model reads.
func TestModelWritesNoFiles(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if err := os.WriteFile("x.hkl", []byte("0 0 0 10\n1 0 0 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ParseArgs(strings.Fields("-cell 50 -hkl x.hkl -detpixels 4"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Model(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 1 {
		t.Fatalf("Model left %v", entries)
	}
	var log bytes.Buffer
	a.WriteDump(m, &log)
	if !strings.Contains(log.String(), "writing dump file for next time: Fdump.bin") {
		t.Errorf("log %q", log.String())
	}
	b := mustModel(t, "-cell", "50", "-detpixels", "4")
	if b.Crystal.HKL == nil || math.Abs(b.Crystal.HKL.F[len(b.Crystal.HKL.F)/2]) > 1e10 {
		t.Error("the cache was not read back")
	}
}
