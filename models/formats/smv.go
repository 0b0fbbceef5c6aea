package formats

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// smvHeaderBytes is the header size the reference writes.
const smvHeaderBytes = 512

// Limits for reading SMV files; tests lower maxSMVPixels.
var maxSMVPixels = 1 << 30

const (
	maxSMVHeaderBytes = 1 << 20
	maxSMVSide        = 1 << 20
)

// SMVHeader holds the values the reference writes in an SMV header, in the
// header's own units. Each is printed with G (C's %g).
type SMVHeader struct {
	PixelMM         float64    // PIXEL_SIZE
	DistanceMM      float64    // DISTANCE
	WavelengthA     float64    // WAVELENGTH
	BeamCenterXMM   float64    // BEAM_CENTER_X
	BeamCenterYMM   float64    // BEAM_CENTER_Y
	ADXVCenterXMM   float64    // ADXV_CENTER_X
	ADXVCenterYMM   float64    // ADXV_CENTER_Y
	MOSFLMCenterXMM float64    // MOSFLM_CENTER_X
	MOSFLMCenterYMM float64    // MOSFLM_CENTER_Y
	DenzoXBeamMM    float64    // DENZO_X_BEAM
	DenzoYBeamMM    float64    // DENZO_Y_BEAM
	DialsOriginMM   [3]float64 // DIALS_ORIGIN=x,y,z
	XDSOrgXPx       float64    // XDS_ORGX
	XDSOrgYPx       float64    // XDS_ORGY
	CloseDistanceMM float64    // CLOSE_DISTANCE
	PhiDeg          float64    // PHI
	OscStartDeg     float64    // OSC_START
	OscRangeDeg     float64    // OSC_RANGE
	TwoThetaDeg     float64    // TWOTHETA
}

// text renders the header as the reference does, before padding.
func (h SMVHeader) text(fpixels, spixels int) string {
	var b strings.Builder
	kv := func(k string, v float64) { fmt.Fprintf(&b, "%s=%s;\n", k, G(v)) }
	fmt.Fprintf(&b, "{\nHEADER_BYTES=%d;\nDIM=2;\nBYTE_ORDER=little_endian;\nTYPE=unsigned_short;\n", smvHeaderBytes)
	fmt.Fprintf(&b, "SIZE1=%d;\nSIZE2=%d;\n", fpixels, spixels)
	kv("PIXEL_SIZE", h.PixelMM)
	kv("DISTANCE", h.DistanceMM)
	kv("WAVELENGTH", h.WavelengthA)
	kv("BEAM_CENTER_X", h.BeamCenterXMM)
	kv("BEAM_CENTER_Y", h.BeamCenterYMM)
	kv("ADXV_CENTER_X", h.ADXVCenterXMM)
	kv("ADXV_CENTER_Y", h.ADXVCenterYMM)
	kv("MOSFLM_CENTER_X", h.MOSFLMCenterXMM)
	kv("MOSFLM_CENTER_Y", h.MOSFLMCenterYMM)
	kv("DENZO_X_BEAM", h.DenzoXBeamMM)
	kv("DENZO_Y_BEAM", h.DenzoYBeamMM)
	// The reference writes this line without the ';'.
	o := h.DialsOriginMM
	fmt.Fprintf(&b, "DIALS_ORIGIN=%s,%s,%s\n", G(o[0]), G(o[1]), G(o[2]))
	kv("XDS_ORGX", h.XDSOrgXPx)
	kv("XDS_ORGY", h.XDSOrgYPx)
	kv("CLOSE_DISTANCE", h.CloseDistanceMM)
	kv("PHI", h.PhiDeg)
	kv("OSC_START", h.OscStartDeg)
	kv("OSC_RANGE", h.OscRangeDeg)
	kv("TWOTHETA", h.TwoThetaDeg)
	b.WriteString("DETECTOR_SN=000;\nBEAMLINE=fake;\n}\f")
	return b.String()
}

// WriteSMV writes an SMV image as the reference does: the header padded
// with spaces to 512 bytes, then fpixels*spixels unsigned 16-bit
// little-endian pixels, data[slow*fpixels+fast]. A header longer than 512
// bytes (possible only with very long numbers) is an error; the reference
// would write a file whose data starts at the wrong offset.
func WriteSMV(w io.Writer, h SMVHeader, fpixels, spixels int, data []uint16) error {
	if fpixels < 1 || spixels < 1 || len(data)/fpixels != spixels || len(data)%fpixels != 0 {
		return fmt.Errorf("formats: smv: %d pixels do not make a %dx%d image", len(data), fpixels, spixels)
	}
	t := h.text(fpixels, spixels)
	if len(t) > smvHeaderBytes {
		return fmt.Errorf("formats: smv: header is %d bytes, more than %d", len(t), smvHeaderBytes)
	}
	// The header, then the pixels (writeLittleEndian).
	head := make([]byte, 0, smvHeaderBytes)
	head = append(append(head, t...), strings.Repeat(" ", smvHeaderBytes-len(t))...)
	if _, err := w.Write(head); err != nil {
		return fmt.Errorf("formats: smv: %w", err)
	}
	if err := writeLittleEndian(w, data); err != nil {
		return fmt.Errorf("formats: smv: %w", err)
	}
	return nil
}

// SMVImage is an SMV file as read by ReadSMV. Data is in host order,
// Data[slow*Width+fast].
type SMVImage struct {
	Header      string // the first HeaderBytes bytes of the file
	HeaderBytes int
	Width       int // SIZE1, fast axis
	Height      int // SIZE2, slow axis
	Data        []uint16
}

// Value returns the number after the '=' that follows the last occurrence of
// key in the header, reproducing the reference's ValueOf: the key is matched
// anywhere, so "DISTANCE" finds "CLOSE_DISTANCE=" when that comes later, and
// the text after '=' is read with atof (0 if not a number). ok is false when
// the key does not occur (value NaN, as the reference returns) or no '='
// follows it (value 0, likewise). The header is read as a C string, up to
// its first NUL byte.
func (im *SMVImage) Value(key string) (float64, bool) {
	rest, ok := lastAfter(im.Header, key)
	if !ok {
		return math.NaN(), false
	}
	eq := strings.IndexByte(rest, '=')
	if eq < 0 {
		return 0, false
	}
	return atof([]byte(rest[eq+1:])), true
}

// lastAfter finds the last occurrence of key in the C string h the way
// repeated strstr calls do (never overlapping the previous match) and
// returns the text after it.
func lastAfter(h, key string) (string, bool) {
	if z := strings.IndexByte(h, 0); z >= 0 {
		h = h[:z]
	}
	if key == "" {
		return "", false
	}
	found := false
	for {
		i := strings.Index(h, key)
		if i < 0 {
			return h, found
		}
		h, found = h[i+len(key):], true
	}
}

// ReadSMV reads an SMV image of unsigned 16-bit pixels, following the
// reference's GetFrame: the file must start with "{\nHEADER_BYT"; the
// header size is HEADER_BYTES (any size, not just 512); the byte order is
// the value of the last BYTE_ORDER= ("little_endian" or "big_endian");
// the size is SIZE1×SIZE2, or DETECTOR_DIMENSIONS squared when SIZE1 is
// missing or 0. Unlike the reference, ReadSMV returns an error for any
// other byte order (the reference swaps bytes for anything that is not the
// host's order), for a TYPE other than unsigned_short (ignored there), and
// for a file shorter than the header plus pixels (zero-filled there); and
// it accepts a file shorter than 512 bytes when HEADER_BYTES says so.
func ReadSMV(r io.Reader) (*SMVImage, error) {
	// Read the usual 512 bytes to find HEADER_BYTES; a shorter file can
	// still be valid if its header is shorter.
	head := make([]byte, smvHeaderBytes)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("formats: smv: %w", err)
	}
	head = head[:n]
	const magic = "{\nHEADER_BYT"
	if !bytes.HasPrefix(head, []byte(magic)) {
		return nil, fmt.Errorf("formats: smv: file starts with %q, not %q: not an SMV file", head[:min(n, len(magic))], magic)
	}
	im := &SMVImage{Header: string(head)}
	hb, ok := im.Value("HEADER_BYTES")
	if !ok || !(hb >= 1 && hb < maxSMVHeaderBytes+1) {
		return nil, fmt.Errorf("formats: smv: bad HEADER_BYTES %s", G(hb))
	}
	im.HeaderBytes = int(hb)
	var rest io.Reader = r
	switch {
	case im.HeaderBytes > n && n < smvHeaderBytes:
		return nil, fmt.Errorf("formats: smv: file is %d bytes, shorter than its %d-byte header", n, im.HeaderBytes)
	case im.HeaderBytes > n:
		more := make([]byte, im.HeaderBytes-n)
		if _, err := io.ReadFull(r, more); err != nil {
			return nil, fmt.Errorf("formats: smv: header of %d bytes is truncated: %w", im.HeaderBytes, err)
		}
		im.Header += string(more)
	case im.HeaderBytes < n:
		im.Header = string(head[:im.HeaderBytes])
		rest = io.MultiReader(bytes.NewReader(head[im.HeaderBytes:]), r)
	}

	var order binary.ByteOrder
	bo, found := lastAfter(im.Header, "BYTE_ORDER=")
	switch {
	case !found:
		return nil, errors.New("formats: smv: header has no BYTE_ORDER")
	case strings.HasPrefix(bo, "little_endian"):
		order = binary.LittleEndian
	case strings.HasPrefix(bo, "big_endian"):
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("formats: smv: unknown BYTE_ORDER %s", firstField(bo))
	}
	if t, ok := lastAfter(im.Header, "\nTYPE="); ok && !strings.HasPrefix(t, "unsigned_short") {
		return nil, fmt.Errorf("formats: smv: TYPE %s is not supported, only unsigned_short", firstField(t))
	}

	w, okw := im.Value("SIZE1")
	h, _ := im.Value("SIZE2")
	square := !okw || int(w) == 0
	if square {
		// The reference's fallback, a square of DETECTOR_DIMENSIONS.
		w, _ = im.Value("DETECTOR_DIMENSIONS")
		h = w
	}
	if !(w >= 1 && w < maxSMVSide+1 && h >= 1 && h < maxSMVSide+1) || int(w)*int(h) > maxSMVPixels {
		what := fmt.Sprintf("SIZE1=%s SIZE2=%s", G(w), G(h))
		switch {
		case square && math.IsNaN(w):
			what = "no SIZE1 (or SIZE1=0) and no DETECTOR_DIMENSIONS"
		case square:
			what = "DETECTOR_DIMENSIONS=" + G(w) + " (no SIZE1, or SIZE1=0)"
		}
		return nil, fmt.Errorf("formats: smv: bad image size: %s", what)
	}
	im.Width, im.Height = int(w), int(h)

	want := int64(im.Width) * int64(im.Height) * 2
	data, err := io.ReadAll(io.LimitReader(rest, want))
	if err != nil {
		return nil, fmt.Errorf("formats: smv: %w", err)
	}
	if int64(len(data)) != want {
		return nil, fmt.Errorf("formats: smv: truncated: %d of %d pixel bytes for %dx%d", len(data), want, im.Width, im.Height)
	}
	im.Data = make([]uint16, im.Width*im.Height)
	for i := range im.Data {
		im.Data[i] = order.Uint16(data[2*i:])
	}
	return im, nil
}

// firstField returns s up to the first ';' or whitespace, for messages.
func firstField(s string) string {
	if i := strings.IndexAny(s, "; \t\r\n\f\v"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 40 {
		s = s[:40]
	}
	return fmt.Sprintf("%q", s)
}
