package formats

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// simpleCubicHeader holds the header values of golden__simple_cubic: the
// reference's derived geometry for "-detsize 102.4 -pixel 0.1 -distance 100
// -lambda 6.2" under the default MOSFLM convention, as in its .int.img.
var simpleCubicHeader = SMVHeader{
	PixelMM: 0.1, DistanceMM: 100, WavelengthA: 6.2,
	BeamCenterXMM: 51.25, BeamCenterYMM: 51.25,
	ADXVCenterXMM: 51.3, ADXVCenterYMM: 51.1,
	MOSFLMCenterXMM: 51.25, MOSFLMCenterYMM: 51.25,
	DenzoXBeamMM: 51.3, DenzoYBeamMM: 51.3,
	DialsOriginMM: [3]float64{-51.3, 51.3, -100},
	XDSOrgXPx:     513.5, XDSOrgYPx: 513.5,
	CloseDistanceMM: 100,
}

// TestSMVGoldenSimpleCubic: the whole golden__simple_cubic.int.img is
// reproduced from the reference's float image: IntImage with the
// reference's automatic scale 55000/max_I and the default ADC offset 40,
// then WriteSMV with the header above. The header alone is checked first
// for a clearer failure.
func TestSMVGoldenSimpleCubic(t *testing.T) {
	ref := readGz(t, filepath.Join(top, "golden/canonical/golden__simple_cubic.int.img.gz"))
	img := floats(t, readGz(t, filepath.Join(top, "golden/canonical/golden__simple_cubic.bin.gz")))
	var buf bytes.Buffer
	if err := WriteSMV(&buf, simpleCubicHeader, 1024, 1024, IntImage(img, 55000/maxOf(img), 40)); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	if !bytes.Equal(got[:512], ref[:512]) {
		t.Fatalf("header differs:\n got %q\nwant %q", got[:512], ref[:512])
	}
	if !bytes.Equal(got, ref) {
		t.Fatalf("pixels differ from the reference's at byte %d", firstDiff(got, ref))
	}

	im, err := ReadSMV(bytes.NewReader(ref))
	if err != nil {
		t.Fatal(err)
	}
	if im.Width != 1024 || im.Height != 1024 || im.HeaderBytes != 512 || len(im.Header) != 512 {
		t.Errorf("read %dx%d, header %d bytes (%d)", im.Width, im.Height, im.HeaderBytes, len(im.Header))
	}
	for _, kv := range []struct {
		key  string
		want float64
	}{
		{"PIXEL_SIZE", 0.1}, {"WAVELENGTH", 6.2}, {"BEAM_CENTER_X", 51.25}, {"ADXV_CENTER_Y", 51.1},
		{"DIALS_ORIGIN", -51.3}, // atof stops at the first comma
		{"XDS_ORGY", 513.5}, {"TWOTHETA", 0}, {"DETECTOR_SN", 0},
	} {
		if v, ok := im.Value(kv.key); !ok || v != kv.want {
			t.Errorf("Value(%s) = %g, %v; want %g", kv.key, v, ok, kv.want)
		}
	}
}

// TestSMVHeaderFromValues: rewriting each golden SMV header from the values
// read out of it gives the same 512 bytes (the values were printed with
// %g, so G prints them identically).
func TestSMVHeaderFromValues(t *testing.T) {
	for _, name := range []string{
		"canonical/golden__simple_cubic.int.img.gz",
		"sweep/sweep__intfile_autoscale.int.img.gz",
		"sweep/sweep__noisefile_seed1.noise.img.gz",
	} {
		ref := readGz(t, filepath.Join(top, "golden", name))
		im, err := ReadSMV(bytes.NewReader(ref))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v := func(k string) float64 { x, _ := im.Value(k); return x }
		var o [3]float64
		dials, _ := lastAfter(im.Header, "DIALS_ORIGIN=")
		for i, s := range strings.SplitN(strings.Fields(dials)[0], ",", 3) {
			o[i], _ = strconv.ParseFloat(s, 64)
		}
		h := SMVHeader{v("PIXEL_SIZE"), v("\nDISTANCE"), v("WAVELENGTH"), v("BEAM_CENTER_X"), v("BEAM_CENTER_Y"),
			v("ADXV_CENTER_X"), v("ADXV_CENTER_Y"), v("MOSFLM_CENTER_X"), v("MOSFLM_CENTER_Y"),
			v("DENZO_X_BEAM"), v("DENZO_Y_BEAM"), o, v("XDS_ORGX"), v("XDS_ORGY"), v("CLOSE_DISTANCE"),
			v("PHI"), v("OSC_START"), v("OSC_RANGE"), v("TWOTHETA")}
		var buf bytes.Buffer
		if err := WriteSMV(&buf, h, im.Width, im.Height, im.Data); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), ref) {
			t.Errorf("%s: rewritten file differs at byte %d", name, firstDiff(buf.Bytes(), ref))
		}
	}
}

// TestSMVValueQuirks: ValueOf finds the last occurrence of the key
// anywhere, so DISTANCE reads CLOSE_DISTANCE's value and ORGX reads
// XDS_ORGX's.
func TestSMVValueQuirks(t *testing.T) {
	h := simpleCubicHeader
	h.CloseDistanceMM = 90
	var buf bytes.Buffer
	if err := WriteSMV(&buf, h, 2, 1, []uint16{1, 2}); err != nil {
		t.Fatal(err)
	}
	im, err := ReadSMV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want float64
		ok   bool
	}{
		{"DISTANCE", 90, true},    // finds CLOSE_DISTANCE=90, not DISTANCE=100
		{"\nDISTANCE", 100, true}, // anchoring at the line start avoids that
		{"ORGX", 513.5, true},     // XDS_ORGX
		{"BEAMLINE", 0, true},     // "fake" reads as 0
		{"NO_SUCH_KEY", math.NaN(), false},
		{"fake", 0, false}, // found, but no '=' after it
		{"", math.NaN(), false},
	} {
		v, ok := im.Value(tc.key)
		if ok != tc.ok || fmt.Sprint(v) != fmt.Sprint(tc.want) {
			t.Errorf("Value(%q) = %g, %v; want %g, %v", tc.key, v, ok, tc.want, tc.ok)
		}
	}
}

func TestSMVRoundTrip(t *testing.T) {
	data := []uint16{0, 1, 2, 65535, 256, 40}
	var buf bytes.Buffer
	if err := WriteSMV(&buf, simpleCubicHeader, 3, 2, data); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 512+12 {
		t.Fatalf("file is %d bytes, want 524", buf.Len())
	}
	file := buf.Bytes()
	im, err := ReadSMV(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if im.Width != 3 || im.Height != 2 || fmt.Sprint(im.Data) != fmt.Sprint(data) {
		t.Errorf("read %dx%d %v", im.Width, im.Height, im.Data)
	}

	// The same image big-endian, with a 1024-byte header, and with a
	// 256-byte one (whose data then starts inside the first 512 bytes).
	for _, hb := range []int{1024, 256} {
		head := strings.Replace(string(file[:200]), "HEADER_BYTES=512", "HEADER_BYTES="+strconv.Itoa(hb), 1)
		head = strings.Replace(head, "little_endian", "big_endian", 1)
		head += strings.Repeat(" ", hb-len(head))
		be := []byte(head)
		for _, v := range data {
			be = binary.BigEndian.AppendUint16(be, v)
		}
		im, err := ReadSMV(bytes.NewReader(be))
		if err != nil {
			t.Fatalf("HEADER_BYTES=%d: %v", hb, err)
		}
		if im.HeaderBytes != hb || len(im.Header) != hb || fmt.Sprint(im.Data) != fmt.Sprint(data) {
			t.Errorf("HEADER_BYTES=%d: header %d (%d bytes), data %v", hb, im.HeaderBytes, len(im.Header), im.Data)
		}
	}

	// DETECTOR_DIMENSIONS stands in for a missing SIZE1 (square images).
	sq := strings.NewReplacer("SIZE1=3;", "", "SIZE2=2;", "", "DIM=2;", "DETECTOR_DIMENSIONS=2;").Replace(string(file[:512]))
	sq += strings.Repeat(" ", 512-len(sq)) + "\x01\x00\x02\x00\x03\x00\x04\x00"
	if im, err := ReadSMV(strings.NewReader(sq)); err != nil || im.Width != 2 || im.Height != 2 || im.Data[3] != 4 {
		t.Errorf("DETECTOR_DIMENSIONS: %v %+v", err, im)
	}
}

func TestSMVErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSMV(&buf, simpleCubicHeader, 2, 2, []uint16{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	edit := func(old, new string) string {
		s := strings.Replace(strings.TrimRight(good[:512], " "), old, new, 1)
		return s + strings.Repeat(" ", 512-len(s)) + good[512:]
	}
	for _, tc := range []struct{ name, in, msg string }{
		{"empty", "", "not an SMV file"},
		{"short", good[:300], "file is 300 bytes, shorter than its 512-byte header"},
		{"not SMV", strings.Repeat("P5\n", 200), "not an SMV file"},
		{"bad HEADER_BYTES", edit("HEADER_BYTES=512", "HEADER_BYTES=-1"), "bad HEADER_BYTES -1"},
		{"huge HEADER_BYTES", edit("HEADER_BYTES=512", "HEADER_BYTES=4096"), "header of 4096 bytes is truncated"},
		{"no BYTE_ORDER", edit("BYTE_ORDER=little_endian;", ""), "no BYTE_ORDER"},
		{"bad BYTE_ORDER", edit("little_endian", "middle_endian"), `unknown BYTE_ORDER "middle_endian"`},
		{"float TYPE", edit("unsigned_short", "float"), `TYPE "float" is not supported`},
		{"no size", edit("SIZE1=2;", ""), "bad image size: no SIZE1 (or SIZE1=0) and no DETECTOR_DIMENSIONS"},
		{"zero width", edit("SIZE1=2;", "SIZE1=0;"), "bad image size: no SIZE1 (or SIZE1=0) and no DETECTOR_DIMENSIONS"},
		{"zero width, dimensions", edit("SIZE1=2;", "SIZE1=0;DETECTOR_DIMENSIONS=-3;"), "bad image size: DETECTOR_DIMENSIONS=-3 (no SIZE1, or SIZE1=0)"},
		{"zero height", edit("SIZE2=2;", "SIZE2=0;"), "bad image size: SIZE1=2 SIZE2=0"},
		{"truncated", good[:len(good)-1], "truncated: 7 of 8 pixel bytes for 2x2"},
	} {
		_, err := ReadSMV(strings.NewReader(tc.in))
		wantErr(t, tc.name, err, tc.msg)
	}

	wantErr(t, "WriteSMV size", WriteSMV(&buf, SMVHeader{}, 3, 2, []uint16{1, 2}), "2 pixels do not make a 3x2 image")
	long := SMVHeader{PixelMM: -1.23456e-100}
	long.DistanceMM, long.WavelengthA, long.BeamCenterXMM, long.BeamCenterYMM = long.PixelMM, long.PixelMM, long.PixelMM, long.PixelMM
	long.ADXVCenterXMM, long.ADXVCenterYMM, long.MOSFLMCenterXMM, long.MOSFLMCenterYMM = long.PixelMM, long.PixelMM, long.PixelMM, long.PixelMM
	wantErr(t, "WriteSMV long header", WriteSMV(&buf, long, 1, 1, []uint16{1}), "more than 512")
}

func floats(t testing.TB, b []byte) []float32 {
	t.Helper()
	if len(b)%4 != 0 {
		t.Fatalf("float image of %d bytes", len(b))
	}
	f := make([]float32, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

// maxOf is the reference's max_I: the largest pixel, as a double.
func maxOf(img []float32) float64 {
	m := 0.0
	for _, v := range img {
		m = max(m, float64(v))
	}
	return m
}

func firstDiff(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
