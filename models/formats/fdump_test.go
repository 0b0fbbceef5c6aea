package formats

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestFdumpMatchesReference: the Fdump.bin that the reference wrote after
// reading P1_varied.hkl with -default_F 7 (testdata/ref64/README.md) is
// byte for byte what WriteFdump writes for ReadHKL of the same file.
func TestFdumpMatchesReference(t *testing.T) {
	ref := readFile(t, filepath.Join(ref64Dir, "Fdump.bin"))
	g, err := ReadHKL(bytes.NewReader(readInput(t, "P1_varied.hkl")), 7)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteFdump(&buf, g); err != nil {
		t.Fatal(err)
	}
	// Header text, then 18^3 float64 (17 indices plus a padding plane).
	if head := "-8 8 -8 8 -8 8\n\f"; !strings.HasPrefix(buf.String(), head) || buf.Len() != len(head)+8*18*18*18 {
		t.Fatalf("Fdump: %d bytes starting %q", buf.Len(), buf.String()[:20])
	}
	if !bytes.Equal(buf.Bytes(), ref) {
		t.Fatal("WriteFdump output differs from the reference's Fdump.bin")
	}

	r, err := ReadFdump(bytes.NewReader(ref))
	if err != nil {
		t.Fatal(err)
	}
	if r.HMin != -8 || r.HMax != 8 || r.KMin != -8 || r.KMax != 8 || r.LMin != -8 || r.LMax != 8 || r.Count != 17*17*17 {
		t.Fatalf("read h %d..%d k %d..%d l %d..%d count %d", r.HMin, r.HMax, r.KMin, r.KMax, r.LMin, r.LMax, r.Count)
	}
	for i := range g.F {
		if math.Float64bits(g.F[i]) != math.Float64bits(r.F[i]) {
			t.Fatalf("cell %d: read %g, want %g", i, r.F[i], g.F[i])
		}
	}
}

// TestFdumpCount: a grid read back from a dump counts hRange*kRange*lRange
// entries, as the reference's hkls does, whatever the HKL file held.
func TestFdumpCount(t *testing.T) {
	g, err := ReadHKL(strings.NewReader("0 0 0 1\n2 3 -1 2\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteFdump(&buf, g); err != nil {
		t.Fatal(err)
	}
	r, err := ReadFdump(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if g.Count != 2 || r.Count != 3*4*2 || r.At(2, 3, -1) != 2 || r.At(0, 0, 0) != 1 {
		t.Errorf("count %d -> %d, F = %g %g", g.Count, r.Count, r.At(2, 3, -1), r.At(0, 0, 0))
	}
}

// TestFdumpWhitespaceByte: a grid whose first cell's first byte is a
// whitespace character (F = 0.09 is 0x3fb70a3d70a3d70a, low byte '\n').
// The reference's fscanf("...\n\f") would skip that byte and misalign
// everything; ReadFdump must not.
func TestFdumpWhitespaceByte(t *testing.T) {
	g, err := ReadHKL(strings.NewReader("0 0 0 0.09\n0 0 1 5\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteFdump(&buf, g); err != nil {
		t.Fatal(err)
	}
	if b := buf.Bytes(); b[13] != '\n' {
		t.Fatalf("byte after the header is %#x, want the test's '\\n'", b[13])
	}
	r, err := ReadFdump(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r.At(0, 0, 0) != 0.09 || r.At(0, 0, 1) != 5 {
		t.Errorf("read %g %g", r.At(0, 0, 0), r.At(0, 0, 1))
	}
}

func TestFdumpErrors(t *testing.T) {
	good := "0 1 0 0 0 0\n\f" + strings.Repeat("\x00", 8*3*2*2)
	if _, err := ReadFdump(strings.NewReader(good)); err != nil {
		t.Fatalf("minimal dump: %v", err)
	}
	for _, tc := range []struct{ in, msg string }{
		{"", "no form feed"},
		{strings.Repeat("1 ", 200), "no form feed in the first 256 bytes"},
		{"0 1 0 0 0\n\f", "does not hold 6 integers"},
		{"0 1 0 0 0 0.5\n\f", "does not hold 6 integers"},
		{"0 1 0 0 0 x\n\f", "does not hold 6 integers"},
		{"1 0 0 0 0 0\n\f", "empty index range"},
		{"0 99999999999 0 0 0 0\n\f", "out of range"},
		{"-1000 1000 -1000 1000 -1000 1000\n\f", "more than the"},
		{good[:len(good)-1], "truncated: 95 of 96 data bytes"},
		{good + "x", "data longer than the 96 bytes"},
	} {
		_, err := ReadFdump(strings.NewReader(tc.in))
		wantErr(t, fmt.Sprintf("ReadFdump(%.30q)", tc.in), err, tc.msg)
	}
	wantErr(t, "WriteFdump(nil)", WriteFdump(&bytes.Buffer{}, nil), "nil grid")
	bad := &HKLGrid{HMax: 1, F: make([]float64, 3)}
	wantErr(t, "WriteFdump(short grid)", WriteFdump(&bytes.Buffer{}, bad), "does not match 3 values")
}
