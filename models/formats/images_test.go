package formats

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/png"
	"math"
	"path/filepath"
	"slices"
	"testing"
)

// TestIntImageGolden: IntImage of the reference's float image with its
// automatic scale 55000/max_I and ADC offset 40 equals the pixels of the
// reference's own .int.img (sweep__intfile_autoscale, 256x256; the
// 1024x1024 golden__simple_cubic is checked in TestSMVGoldenSimpleCubic).
func TestIntImageGolden(t *testing.T) {
	img := floats(t, readGz(t, filepath.Join(top, "golden/sweep/sweep__intfile_autoscale.bin.gz")))
	ref, err := ReadSMV(bytes.NewReader(readGz(t, filepath.Join(top, "golden/sweep/sweep__intfile_autoscale.int.img.gz"))))
	if err != nil {
		t.Fatal(err)
	}
	scale := 55000 / maxOf(img)
	if G(scale) != "474.28" { // manifest stats_lines: "intfile_scale = 474.28"
		t.Fatalf("scale %s", G(scale))
	}
	got := IntImage(img, scale, 40)
	for i := range got {
		if got[i] != ref.Data[i] {
			t.Fatalf("pixel %d: %d, reference %d (float %g)", i, got[i], ref.Data[i], img[i])
		}
	}
}

// TestIntImageRounding: expected values are what the reference's
// expression (unsigned short)floorf(x+0.5) gives, checked with gcc/glibc.
func TestIntImageRounding(t *testing.T) {
	for _, tc := range []struct {
		v          float32
		scale, adc float64
		want       uint16
	}{
		{0, 1, 2.4999999, 3},  // x+0.5 = 2.9999999 rounds to 3 in float32; double floor gives 2
		{0, 1, 0.49999997, 0}, // float32(0.99999997) stays below 1
		{0, 1, 1234.4999999, 1235},
		{0, 1, 65534.9999, 65535},
		{0, 10, 40, 40}, // empty pixel: the ADC offset
		{1, 10, 40, 50},
		{100, 10, 40, 1040},
		{1e9, 10, 40, 65535}, // clamped
		{-1e9, 10, 40, 0},
		{float32(math.Inf(1)), 1, 40, 65535},
		{float32(math.NaN()), 1, 40, 0}, // C: floorf(NaN) cast on x86 gives 0
	} {
		if got := IntImage([]float32{tc.v}, tc.scale, tc.adc)[0]; got != tc.want {
			t.Errorf("IntImage(%g*%g+%g) = %d, want %d", tc.v, tc.scale, tc.adc, got, tc.want)
		}
	}
}

// TestPGMReference: the PGM the reference wrote with -pgmscale 37.25 for
// testdata/ref64/f.bin (see its README.md).
func TestPGMReference(t *testing.T) {
	ref := readFile(t, filepath.Join(ref64Dir, "p.pgm"))
	img := floats(t, readFile(t, filepath.Join(ref64Dir, "f.bin")))
	var buf bytes.Buffer
	if err := WritePGM(&buf, 64, 64, img, 37.25); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), ref) {
		t.Fatalf("PGM differs from the reference's at byte %d", firstDiff(buf.Bytes(), ref))
	}
}

func TestWritePGM(t *testing.T) {
	var buf bytes.Buffer
	// 0.5*2 = 1, 200*2 capped at 255, 1.99*2 = 3.98 truncated to 3,
	// negative and NaN give 0.
	if err := WritePGM(&buf, 3, 2, []float32{0.5, 200, 1.99, -4, float32(math.NaN()), 0}, 2); err != nil {
		t.Fatal(err)
	}
	if want := "P5\n3 2\n# pixels scaled by 2\n255\n\x01\xff\x03\x00\x00\x00"; buf.String() != want {
		t.Errorf("PGM %q, want %q", buf.String(), want)
	}
	wantErr(t, "WritePGM size", WritePGM(&buf, 2, 2, []float32{1}, 1), "1 pixels do not make a 2x2 image")
}

// TestWriteFloatImage: writing the reference's float image back gives the
// same bytes; 1.5 is 0x3fc00000.
func TestWriteFloatImage(t *testing.T) {
	ref := readFile(t, filepath.Join(ref64Dir, "f.bin"))
	var buf bytes.Buffer
	if err := WriteFloatImage(&buf, floats(t, ref)); err != nil || !bytes.Equal(buf.Bytes(), ref) {
		t.Errorf("round trip differs (%v)", err)
	}
	buf.Reset()
	if err := WriteFloatImage(&buf, []float32{1.5}); err != nil || !bytes.Equal(buf.Bytes(), []byte{0, 0, 0xc0, 0x3f}) {
		t.Errorf("1.5 wrote % x (%v)", buf.Bytes(), err)
	}
}

// sizesWriter records the length of each Write.
type sizesWriter struct {
	bytes.Buffer
	sizes []int
}

func (w *sizesWriter) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return w.Buffer.Write(p)
}

// TestWriteFloatImageChunks: an image of more than floatChunk bytes is
// written whole, in order, in writes of at most floatChunk bytes (the
// expected bytes from encoding/binary, value by value), and floatChunk
// is below the 2 MiB from which writes were slow (its comment).
func TestWriteFloatImageChunks(t *testing.T) {
	if floatChunk >= 2<<20 {
		t.Errorf("floatChunk %d: want less than 2 MiB", floatChunk)
	}
	img := make([]float32, 2*floatChunk/4+3)
	want := make([]byte, 4*len(img))
	for i := range img {
		img[i] = float32(i) * 0.25
		binary.LittleEndian.PutUint32(want[4*i:], math.Float32bits(img[i]))
	}
	var w sizesWriter
	if err := WriteFloatImage(&w, img); err != nil || !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("wrote %d bytes (%v), want %d bytes as encoding/binary writes them", w.Len(), err, len(want))
	}
	if len(w.sizes) < 3 || slices.Max(w.sizes) > floatChunk {
		t.Errorf("writes of %v bytes: want three or more, none over %d", w.sizes, floatChunk)
	}
}

func TestWritePNGPreview(t *testing.T) {
	// Pixels 0..999 with 1 and 2 replaced by -5 and NaN: the positive
	// values are 3..999, their 99.9th percentile (index 995 of 997) is 998,
	// so 998 and 999 are white, 0, -5 and NaN black, and 998/4 = 249.5 is
	// the half-brightness point (sqrt(1/4) = 1/2).
	img := make([]float32, 1000)
	for i := range img {
		img[i] = float32(i)
	}
	img[1] = -5
	img[2] = float32(math.NaN())
	var buf bytes.Buffer
	if err := WritePNGPreview(&buf, 50, 20, img); err != nil {
		t.Fatal(err)
	}
	dec, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := dec.(*image.Gray)
	if !ok || g.Rect.Dx() != 50 || g.Rect.Dy() != 20 {
		t.Fatalf("decoded %T %v", dec, dec.Bounds())
	}
	at := func(i int) uint8 { return g.GrayAt(i%50, i/50).Y }
	for _, tc := range []struct {
		i    int
		want uint8
	}{{0, 0}, {1, 0}, {2, 0}, {998, 255}, {999, 255}, {249, 127}, {250, 128}} {
		if got := at(tc.i); got != tc.want {
			t.Errorf("pixel %d = %d, want %d", tc.i, got, tc.want)
		}
	}
	for i := 4; i < 1000; i++ {
		if at(i) < at(i-1) {
			t.Fatalf("not monotonic at %d", i)
		}
	}
	buf.Reset()
	if err := WritePNGPreview(&buf, 2, 1, []float32{0, 0}); err != nil {
		t.Errorf("all-zero image: %v", err)
	}
	wantErr(t, "WritePNGPreview size", WritePNGPreview(&buf, 2, 2, nil), "0 pixels do not make a 2x2 image")
}

// TestWriteLittleEndian: writeLittleEndian's bytes are encoding/binary's
// little-endian ones, in writes of at most encodeChunk bytes, for both
// its types (float32 values are WriteFloatImage's on a big-endian
// machine, which this test reaches on any machine), and for no values.
func TestWriteLittleEndian(t *testing.T) {
	u := make([]uint16, encodeChunk+5) // two bytes each: three writes
	f := make([]float32, encodeChunk/2+1)
	var wantU, wantF bytes.Buffer
	for i := range u {
		u[i] = uint16(i * 7)
	}
	for i := range f {
		f[i] = float32(i) * -0.5
	}
	binary.Write(&wantU, binary.LittleEndian, u)
	binary.Write(&wantF, binary.LittleEndian, f)
	var wu, wf, w0 sizesWriter
	if err := writeLittleEndian(&wu, u); err != nil || !bytes.Equal(wu.Bytes(), wantU.Bytes()) || len(wu.sizes) != 3 || slices.Max(wu.sizes) > encodeChunk {
		t.Errorf("uint16: %v, %d bytes in writes of %v", err, wu.Len(), wu.sizes)
	}
	if err := writeLittleEndian(&wf, f); err != nil || !bytes.Equal(wf.Bytes(), wantF.Bytes()) || len(wf.sizes) != 3 || slices.Max(wf.sizes) > encodeChunk {
		t.Errorf("float32: %v, %d bytes in writes of %v", err, wf.Len(), wf.sizes)
	}
	if err := writeLittleEndian(&w0, []uint16{}); err != nil || w0.Len() != 0 || len(w0.sizes) != 0 {
		t.Errorf("no values: %v, %d bytes in writes of %v", err, w0.Len(), w0.sizes)
	}
}
