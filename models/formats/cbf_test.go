package formats

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// TestByteOffsetCodec: the byte-offset scheme's widths at every boundary
// (the escape values −128, −32768 and −2³¹ never stand for themselves),
// and a round trip of random values of every magnitude.
func TestByteOffsetCodec(t *testing.T) {
	for _, c := range []struct {
		data []int32
		want []byte // from the scheme's definition in the CBF specification
	}{
		{[]int32{0, 127, 0}, []byte{0x00, 0x7f, 0x81}},
		{[]int32{-127}, []byte{0x81}},
		{[]int32{-128}, []byte{0x80, 0x80, 0xff}},
		{[]int32{128}, []byte{0x80, 0x80, 0x00}},
		{[]int32{32767}, []byte{0x80, 0xff, 0x7f}},
		{[]int32{-32767}, []byte{0x80, 0x01, 0x80}},
		{[]int32{-32768}, []byte{0x80, 0x00, 0x80, 0x00, 0x80, 0xff, 0xff}},
		{[]int32{32768}, []byte{0x80, 0x00, 0x80, 0x00, 0x80, 0x00, 0x00}},
		{[]int32{math.MaxInt32}, []byte{0x80, 0x00, 0x80, 0xff, 0xff, 0xff, 0x7f}},
		{[]int32{math.MinInt32 + 1}, []byte{0x80, 0x00, 0x80, 0x01, 0x00, 0x00, 0x80}},
		// A difference of −2³¹ needs the eight-byte form.
		{[]int32{0, math.MinInt32}, []byte{0x00, 0x80, 0x00, 0x80, 0x00, 0x00, 0x00, 0x80, 0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff}},
		// … and 2³²−1.
		{[]int32{math.MaxInt32 - 1, math.MaxInt32, math.MinInt32 + 1}, []byte{0x80, 0x00, 0x80, 0xfe, 0xff, 0xff, 0x7f, 0x01,
			0x80, 0x00, 0x80, 0x00, 0x00, 0x00, 0x80, 0x02, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff}},
	} {
		got := ByteOffsetCompress(c.data)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%v: packed % x, want % x", c.data, got, c.want)
		}
		back, err := ByteOffsetDecompress(got, len(c.data))
		if err != nil || !equalInt32(back, c.data) {
			t.Errorf("%v: unpacked %v, %v", c.data, back, err)
		}
	}
	r := rand.New(rand.NewSource(1))
	data := make([]int32, 10000)
	for i := range data {
		data[i] = int32(r.Int63n(1<<uint(r.Intn(33))) - 1<<uint(r.Intn(32)))
	}
	back, err := ByteOffsetDecompress(ByteOffsetCompress(data), len(data))
	if err != nil || !equalInt32(back, data) {
		t.Fatalf("random round trip: %v", err)
	}
	for _, c := range []struct {
		b []byte
		n int
	}{{[]byte{0x80, 0x01}, 1}, {[]byte{1, 2, 3}, 2}, {[]byte{1}, 2}, {[]byte{0x80, 0x00, 0x80, 0xff}, 1}} {
		if _, err := ByteOffsetDecompress(c.b, c.n); err == nil {
			t.Errorf("% x as %d values: no error", c.b, c.n)
		}
	}
	// Overflow of the running sum is an error, not a wrapped value.
	if _, err := ByteOffsetDecompress(ByteOffsetCompress([]int32{math.MaxInt32})[:7:7], 1); err != nil {
		t.Fatal(err)
	}
	if _, err := ByteOffsetDecompress(append(ByteOffsetCompress([]int32{math.MaxInt32}), 1), 2); err == nil {
		t.Error("MaxInt32 + 1: no error")
	}
}

func equalInt32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func testCBFHeader() CBFHeader {
	return CBFHeader{Name: "image_001", PixelM: 1e-4, DistanceM: 0.12, WavelengthA: 1,
		BeamXPx: 600.5, BeamYPx: 400.50000000000006, StartAngleDeg: 3, AngleIncrementDeg: 0.1,
		ExposureS: 1, ThicknessM: 0, TwoThetaDeg: 15, CountCutoff: 65535}
}

// TestCBFRoundTrip: what WriteCBF writes, ReadCBF reads back: the pixels,
// every header value exactly, and the MIME header's size and digest.
func TestCBFRoundTrip(t *testing.T) {
	const fp, sp = 7, 5
	data := make([]int32, fp*sp)
	for i := range data {
		data[i] = int32(i*i*97) - 300
	}
	data[3] = 65535
	h := testCBFHeader()
	var buf bytes.Buffer
	if err := WriteCBF(&buf, h, fp, sp, data); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	im, err := ReadCBF(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if im.Width != fp || im.Height != sp || !equalInt32(im.Data, data) {
		t.Fatalf("read %dx%d %v", im.Width, im.Height, im.Data)
	}
	if im.Header != h {
		t.Errorf("header read back as %+v, want %+v", im.Header, h)
	}
	// The structure dxtbx relies on: CRLF lines, the header convention,
	// "# Key value" lines, X-Binary-Size bytes after the start tag, then
	// the padding.
	s := string(b)
	for _, want := range []string{"###CBF: VERSION 1.5", "\r\ndata_image_001\r\n", `_array_data.header_convention "GENERIC_MINI"` + "\r\n",
		"# Pixel_size 0.0001 m x 0.0001 m\r\n", "# Beam_xy (600.5, 400.50000000000006) pixels\r\n",
		"# Detector_distance 0.12 m\r\n", "# Count_cutoff 65535 counts\r\n", `conversions="x-CBF_BYTE_OFFSET"`,
		"X-Binary-Number-of-Elements: 35\r\n", "X-Binary-Size-Fastest-Dimension: 7\r\n", "X-Binary-Size-Second-Dimension: 5\r\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("file lacks %q", want)
		}
	}
	packed := ByteOffsetCompress(data)
	start := bytes.Index(b, cbfStartTag) + 4
	if !bytes.Equal(b[start:start+len(packed)], packed) {
		t.Error("the data do not follow the start tag")
	}
	sum := md5.Sum(packed)
	if !strings.Contains(s, "Content-MD5: "+base64.StdEncoding.EncodeToString(sum[:])+"\r\n") {
		t.Error("no Content-MD5 of the packed data")
	}
	if !strings.HasSuffix(s, strings.Repeat("\x00", cbfPadding)+"\r\n--CIF-BINARY-FORMAT-SECTION----\r\n;\r\n\r\n") {
		t.Error("no padding and closing boundary")
	}
}

// TestCBFReadErrors: damaged files are errors naming the problem.
func TestCBFReadErrors(t *testing.T) {
	var buf bytes.Buffer
	data := []int32{1, 2, 300, 4, 70000, 6}
	if err := WriteCBF(&buf, testCBFHeader(), 3, 2, data); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	start := strings.Index(good, string(cbfStartTag)) + 4
	for _, c := range []struct {
		name, file, want string
	}{
		{"not cbf", "{\nHEADER_BYTES=512;", "not a CBF"},
		{"no binary", "###CBF: VERSION 1.5\r\ndata_x\r\n", "no binary section"},
		{"truncated", good[:start+3], "truncated"},
		{"digest", good[:start] + "\x02" + good[start+1:], "Content-MD5"},
		{"size", strings.Replace(good, "X-Binary-Size-Fastest-Dimension: 3", "X-Binary-Size-Fastest-Dimension: 4", 1), "Number-of-Elements"},
		{"no size", strings.Replace(good, "X-Binary-Size:", "X-Binary-Sise:", 1), "X-Binary-Size"},
		{"conversion", strings.Replace(good, "x-CBF_BYTE_OFFSET", "x-CBF_PACKED", 1), "not supported"},
		{"order", strings.Replace(good, "LITTLE_ENDIAN", "BIG_ENDIAN", 1), "byte order"},
		{"no tag", strings.Replace(good, string(cbfStartTag), "abcd", 1), "start tag"},
	} {
		_, err := ReadCBF(strings.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// Uncompressed data are read too.
	le := []byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}
	sum := md5.Sum(le)
	old := md5.Sum(ByteOffsetCompress(data))
	raw := strings.NewReplacer("x-CBF_BYTE_OFFSET", "x-CBF_NONE", `"signed 32-bit integer"`, `"unsigned 16-bit integer"`,
		"X-Binary-Size: "+strconv.Itoa(len(ByteOffsetCompress(data)))+"\r", "X-Binary-Size: 12\r",
		base64.StdEncoding.EncodeToString(old[:]), base64.StdEncoding.EncodeToString(sum[:])).Replace(good[:start])
	im, err := ReadCBF(strings.NewReader(raw + string(le)))
	if err != nil || !equalInt32(im.Data, []int32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("uncompressed: %v %v", im, err)
	}
}

func FuzzReadCBF(f *testing.F) {
	pixels := maxCBFPixels
	maxCBFPixels = 1 << 16
	f.Cleanup(func() { maxCBFPixels = pixels })
	var buf bytes.Buffer
	if err := WriteCBF(&buf, testCBFHeader(), 3, 2, []int32{1, -200, 40000, 7, 1 << 30, 0}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("###CBF\n--CIF-BINARY-FORMAT-SECTION--\nX-Binary-Size: 1\nX-Binary-Size-Fastest-Dimension: 1\nX-Binary-Size-Second-Dimension: 1\nconversions=\"x-CBF_BYTE_OFFSET\"\n\n\x0c\x1a\x04\xd5\x05"))
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := ReadCBF(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(im.Data) != im.Width*im.Height {
			t.Fatalf("%d pixels for %dx%d", len(im.Data), im.Width, im.Height)
		}
		var out bytes.Buffer
		if err := WriteCBF(&out, im.Header, im.Width, im.Height, im.Data); err != nil {
			t.Fatal(err)
		}
		back, err := ReadCBF(&out)
		if err != nil || !equalInt32(back.Data, im.Data) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
