package formats

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The project's shared test data (copies of ../shared/golden).
const top = "../../testdata"

// TestG: C printf("%g") formatting. Expected strings are the reference's
// own printed numbers from the golden manifest (stats_lines, printed by
// nanoBragg with %g) and C-standard facts about %g (6 significant digits,
// exponent form below 1e-4 and from 1e6, two-digit exponents).
func TestG(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{125932015286227086360700780544.0, "1.25932e+29"}, // reference "incident fluence" default
		{0.004091813, "0.00409181"},                       // AT-PARALLEL-001 solid angle
		{7544.5833, "7544.58"},                            // AT-PARALLEL-001 intfile_scale
		{7.29, "7.29"},
		{0.00325, "0.00325"},
		{100, "100"},
		{0, "0"},
		{1e-5, "1e-05"},
		{0.0001, "0.0001"},
		{123456, "123456"},
		{1234567, "1.23457e+06"},
		{-51.3, "-51.3"},
		{513.5, "513.5"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.Copysign(0, -1), "-0"},
		{0.99999951, "1"},
		{999999.5, "1e+06"},
	} {
		if got := G(c.x); got != c.want {
			t.Errorf("G(%v) = %q, C gives %q", c.x, got, c.want)
		}
	}
	if got := G(math.NaN()); got != "nan" && got != "-nan" {
		t.Errorf("G(NaN) = %q", got)
	}
}

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestReadHKL: P1.hkl holds h, k, l ∈ [−5, 5] with F = 100 (golden README,
// "Input files"); P1_varied.hkl h, k, l ∈ [−8, 8].
func TestReadHKL(t *testing.T) {
	g, err := ReadHKL(open(t, filepath.Join(top, "inputs/P1.hkl")), 7)
	if err != nil {
		t.Fatal(err)
	}
	if g.HMin != -5 || g.HMax != 5 || g.KMin != -5 || g.LMax != 5 || g.Count != 11*11*11 {
		t.Fatalf("P1.hkl: bounds %d..%d, count %d", g.HMin, g.HMax, g.Count)
	}
	if len(g.F) != 12*12*12 || g.At(1, -2, 3) != 100 || g.At(6, 0, 0) != 0 {
		t.Errorf("P1.hkl grid: %d values, F(1,-2,3) = %g, padding %g", len(g.F), g.At(1, -2, 3), g.At(6, 0, 0))
	}
	v, err := ReadHKL(open(t, filepath.Join(top, "inputs/P1_varied.hkl")), 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.HMin != -8 || v.HMax != 8 || v.Count != 17*17*17 {
		t.Errorf("P1_varied.hkl: %d..%d, %d records", v.HMin, v.HMax, v.Count)
	}
	// default_F fills the unpadded block of entries the file leaves out;
	// a later duplicate wins.
	s, err := ReadHKL(strings.NewReader("0 0 0 5\n2 1 0 6\n0 0 0 9\n"), 3)
	if err != nil {
		t.Fatal(err)
	}
	if s.At(0, 0, 0) != 9 || s.At(1, 0, 0) != 3 || s.At(2, 1, 0) != 6 || s.At(3, 0, 0) != 0 {
		t.Errorf("small table: %v", s.F)
	}
	for _, bad := range []string{"", "1 2 3\n", "1.5 0 0 10\n", "x y z\n"} {
		if _, err := ReadHKL(strings.NewReader(bad), 0); err == nil {
			t.Errorf("ReadHKL(%q): no error", bad)
		}
	}
}

// TestFdump: the cache written for a table reads back identically, and its
// layout is the reference's (text header "hmin hmax kmin kmax lmin lmax\n\f"
// then (hRange+1)(kRange+1)(lRange+1) float64 values).
func TestFdump(t *testing.T) {
	g, err := ReadHKL(open(t, filepath.Join(top, "inputs/P1_varied.hkl")), 100)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteFdump(&buf, g); err != nil {
		t.Fatal(err)
	}
	head := "-8 8 -8 8 -8 8\n\f"
	if !strings.HasPrefix(buf.String(), head) || buf.Len() != len(head)+8*18*18*18 {
		t.Fatalf("Fdump: %d bytes, header %q", buf.Len(), buf.String()[:20])
	}
	r, err := ReadFdump(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r.HMin != g.HMin || r.LMax != g.LMax || len(r.F) != len(g.F) || r.Count != 17*17*17 {
		t.Fatalf("read back %+v", r)
	}
	for i := range g.F {
		if g.F[i] != r.F[i] {
			t.Fatalf("value %d: %g, wrote %g", i, r.F[i], g.F[i])
		}
	}
	if _, err := ReadFdump(bytes.NewReader(buf.Bytes()[:buf.Len()-3])); err == nil {
		t.Error("truncated Fdump: no error")
	}
}

// TestReadMatrix: nine numbers read from each matrix file (A_mosflm.mat has
// more lines, of which only the first nine numbers count); the first value
// must be the file's first token.
func TestReadMatrix(t *testing.T) {
	for _, name := range []string{"A.mat", "A_mosflm.mat"} {
		raw, err := os.ReadFile(filepath.Join(top, "inputs", name))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ReadMatrix(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		first := strings.Fields(string(raw))[0]
		if G(m[0]) != G(mustFloat(t, first)) {
			t.Errorf("%s: first value %g, file says %s", name, m[0], first)
		}
	}
	if _, err := ReadMatrix(strings.NewReader("1 2 3 4 5 6 7 8")); err == nil {
		t.Error("8 numbers: no error")
	}
}

func mustFloat(t *testing.T, s string) float64 {
	var x float64
	if _, err := fmtSscan(s, &x); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestReadColumns: sources.txt has 3 sources of 5 columns (golden README);
// missing trailing columns are NaN.
func TestReadColumns(t *testing.T) {
	cols, err := ReadColumns(open(t, filepath.Join(top, "inputs/sources.txt")), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 5 || len(cols[0]) != 3 {
		t.Fatalf("sources.txt: %d columns of %d", len(cols), len(cols[0]))
	}
	for i := range cols[4] {
		if !(cols[4][i] > 0 && cols[4][i] < 1e-8) {
			t.Errorf("source %d wavelength %g m", i, cols[4][i])
		}
	}
	c, err := ReadColumns(strings.NewReader("1 2\n\n3,4;5\n"), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(c[0]) != 2 || c[0][0] != 1 || c[1][0] != 2 || !math.IsNaN(c[2][0]) || c[2][1] != 5 {
		t.Errorf("columns %v", c)
	}
}

func readGz(t *testing.T, path string) []byte {
	z, err := gzip.NewReader(open(t, path))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSMVHeader: the header for golden__simple_cubic, with the values that
// the reference printed for that run, is byte for byte the first 512 bytes
// of the reference's own .int.img; reading it back gives the values.
func TestSMVHeader(t *testing.T) {
	ref := readGz(t, filepath.Join(top, "golden/canonical/golden__simple_cubic.int.img.gz"))
	h := SMVHeader{PixelMM: 0.1, DistanceMM: 100, WavelengthA: 6.2, BeamCenterXMM: 51.25, BeamCenterYMM: 51.25,
		ADXVCenterXMM: 51.3, ADXVCenterYMM: 51.1, MOSFLMCenterXMM: 51.25, MOSFLMCenterYMM: 51.25,
		DenzoXBeamMM: 51.3, DenzoYBeamMM: 51.3, DialsOriginMM: [3]float64{-51.3, 51.3, -100},
		XDSOrgXPx: 513.5, XDSOrgYPx: 513.5, CloseDistanceMM: 100}
	im, err := ReadSMV(bytes.NewReader(ref))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSMV(&buf, h, 1024, 1024, im.Data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), ref) {
		n := 0
		for n < len(ref) && n < buf.Len() && ref[n] == buf.Bytes()[n] {
			n++
		}
		t.Fatalf("written file differs from the reference's at byte %d", n)
	}
	if im.Width != 1024 || im.Height != 1024 || im.HeaderBytes != 512 {
		t.Errorf("read %dx%d, header %d", im.Width, im.Height, im.HeaderBytes)
	}
	// The reference's ValueOf takes the last occurrence of the key, even
	// inside a longer key: DISTANCE finds CLOSE_DISTANCE.
	if v, ok := im.Value("WAVELENGTH"); !ok || v != 6.2 {
		t.Errorf("WAVELENGTH = %g, %v", v, ok)
	}
	if v, _ := im.Value("NO_SUCH_KEY"); !math.IsNaN(v) {
		t.Errorf("missing key gave %g", v)
	}
	if _, err := ReadSMV(strings.NewReader("not an image")); err == nil {
		t.Error("ReadSMV of garbage: no error")
	}
}

// TestImages: the intfile conversion and the PGM layout of the reference.
func TestImages(t *testing.T) {
	got := IntImage([]float32{0, 1, 100, 1e9, -1e9}, 10, 40)
	want := []uint16{40, 50, 1040, 65535, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("IntImage[%d] = %d, want %d", i, got[i], want[i])
		}
	}
	var buf bytes.Buffer
	if err := WritePGM(&buf, 2, 1, []float32{1, 200}, 2); err != nil {
		t.Fatal(err)
	}
	if want := "P5\n2 1\n# pixels scaled by 2\n255\n\x02\xff"; buf.String() != want {
		t.Errorf("PGM %q, want %q", buf.String(), want)
	}
	buf.Reset()
	if err := WriteFloatImage(&buf, []float32{1.5}); err != nil || !bytes.Equal(buf.Bytes(), []byte{0, 0, 0xc0, 0x3f}) {
		t.Errorf("float image %v %v", buf.Bytes(), err)
	}
	buf.Reset()
	if err := WritePNGPreview(&buf, 2, 2, []float32{0, 1, 2, 3}); err != nil || !bytes.HasPrefix(buf.Bytes(), []byte("\x89PNG")) {
		t.Errorf("PNG: %v", err)
	}
}

// TestWriteFileAtomic: a failing writer leaves no file behind.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.bin")
	err := WriteFileAtomic(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return io.ErrUnexpectedEOF
	})
	if err == nil {
		t.Fatal("no error from a failing writer")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write([]byte("ok")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "ok" {
		t.Errorf("content %q", b)
	}
}

func seedFiles(f *testing.F, names ...string) {
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(top, "inputs", n)); err == nil {
			f.Add(b)
		}
	}
}

// Fuzz targets: no input makes a parser panic.
func FuzzReadHKL(f *testing.F) {
	seedFiles(f, "P1.hkl")
	f.Add([]byte("1 2 3 4\n-1e9 0 0 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) { ReadHKL(bytes.NewReader(b), 1) })
}

func FuzzReadFdump(f *testing.F) {
	f.Add([]byte("0 1 0 0 0 0\n\f" + strings.Repeat("\x00", 8*3*2*2)))
	f.Fuzz(func(t *testing.T, b []byte) { ReadFdump(bytes.NewReader(b)) })
}

func FuzzReadMatrix(f *testing.F) {
	seedFiles(f, "A.mat", "A_mosflm.mat")
	f.Fuzz(func(t *testing.T, b []byte) { ReadMatrix(bytes.NewReader(b)) })
}

func FuzzReadColumns(f *testing.F) {
	seedFiles(f, "sources.txt", "sources_b.txt")
	f.Fuzz(func(t *testing.T, b []byte) { ReadColumns(bytes.NewReader(b), 5) })
}

func FuzzReadSMV(f *testing.F) {
	var buf bytes.Buffer
	WriteSMV(&buf, SMVHeader{PixelMM: 0.1}, 2, 2, []uint16{1, 2, 3, 4})
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		if im, err := ReadSMV(bytes.NewReader(b)); err == nil {
			im.Value("DISTANCE")
		}
	})
}

func fmtSscan(s string, x *float64) (int, error) { return fmt.Sscan(s, x) }
