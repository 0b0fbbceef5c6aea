package formats

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// miniCBF: the single-image CBF files that Dectris Pilatus detectors write
// (the CBF/imgCIF specification, "CBF: Crystallographic Binary File",
// Bernstein & Hammersley, International Tables G, ch. 2.3 and 5.6): a CIF
// text block whose _array_data.header_contents carries "# Key value"
// lines, then one binary section behind a MIME header, compressed with the
// byte-offset scheme. gobragg writes the header convention GENERIC_MINI,
// which dxtbx reads with its generic miniCBF class (FormatCBFMini) for any
// image size; "PILATUS" would make it apply the module-gap mask of a real
// Pilatus, which fails for other sizes.

// cbfStartTag opens the binary data (after the MIME header's blank line).
var cbfStartTag = []byte{0x0c, 0x1a, 0x04, 0xd5}

// cbfPadding is the zero padding after the binary data, as Pilatus writes
// it (X-Binary-Size-Padding).
const cbfPadding = 4095

// Limits for reading CBF files; tests lower maxCBFPixels.
var maxCBFPixels = 1 << 30

const maxCBFHeaderBytes = 1 << 20

// CBFHeader holds the experiment description of a miniCBF header, in the
// header's own units (m, Å, degrees, pixels, s). Beam_xy is in pixels from
// the outer corner of the first pixel, fast then slow, which is how dxtbx
// reads it (beam centre in mm = pixels × pixel size). A miniCBF header
// cannot describe a detector that is not perpendicular to the beam, or
// axes other than fast = +x and slow = −y in the DIALS frame; a DIALS
// experiment list (package models/dials) carries the exact geometry.
type CBFHeader struct {
	Name              string  // data block name (data_NAME); "image" if empty
	PixelM            float64 // Pixel_size, square pixels
	DistanceM         float64 // Detector_distance
	WavelengthA       float64 // Wavelength
	BeamXPx, BeamYPx  float64 // Beam_xy
	StartAngleDeg     float64 // Start_angle (and Phi)
	AngleIncrementDeg float64 // Angle_increment
	ExposureS         float64 // Exposure_time and Exposure_period
	ThicknessM        float64 // the sensor line's thickness (none written for 0)
	TwoThetaDeg       float64 // Detector_2theta (information only: dxtbx ignores it)
	CountCutoff       int     // Count_cutoff: the largest valid count
}

// cbfNum formats a header number exactly (the shortest decimal that reads back
// as the same float64).
func cbfNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// text is the CIF part of the file up to and including the MIME header's
// terminating blank line.
func (h *CBFHeader) text(fpixels, spixels, size int, digest string) string {
	name := h.Name
	if name == "" {
		name = "image"
	}
	// CIF data block names have no white space.
	name = strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' {
			return '_'
		}
		return r
	}, name)
	var b strings.Builder
	line := func(format string, a ...any) {
		fmt.Fprintf(&b, format, a...)
		b.WriteString("\r\n")
	}
	line("###CBF: VERSION 1.5, gobragg miniCBF writer")
	line("")
	line("data_%s", name)
	line("")
	line(`_array_data.header_convention "GENERIC_MINI"`)
	line("_array_data.header_contents")
	line(";")
	line("# Detector: gobragg simulated pixel array detector, S/N 0")
	line("# Pixel_size %s m x %s m", cbfNum(h.PixelM), cbfNum(h.PixelM))
	if h.ThicknessM > 0 {
		// dxtbx then applies its parallax correction with silicon's
		// attenuation; it refuses a thickness of 0.
		line("# Silicon sensor, thickness %s m", cbfNum(h.ThicknessM))
	}
	line("# Exposure_time %s s", cbfNum(h.ExposureS))
	line("# Exposure_period %s s", cbfNum(h.ExposureS))
	line("# Tau = 0 s")
	line("# Count_cutoff %d counts", h.CountCutoff)
	line("# Wavelength %s A", cbfNum(h.WavelengthA))
	line("# Detector_distance %s m", cbfNum(h.DistanceM))
	line("# Beam_xy (%s, %s) pixels", cbfNum(h.BeamXPx), cbfNum(h.BeamYPx))
	line("# Start_angle %s deg.", cbfNum(h.StartAngleDeg))
	line("# Angle_increment %s deg.", cbfNum(h.AngleIncrementDeg))
	line("# Detector_2theta %s deg.", cbfNum(h.TwoThetaDeg))
	line("# Phi %s deg.", cbfNum(h.StartAngleDeg))
	line("# Oscillation_axis X, CW")
	line("# N_oscillations 1")
	line(";")
	line("")
	line("_array_data.data")
	line(";")
	line("--CIF-BINARY-FORMAT-SECTION--")
	line("Content-Type: application/octet-stream;")
	line(`     conversions="x-CBF_BYTE_OFFSET"`)
	line("Content-Transfer-Encoding: BINARY")
	line("X-Binary-Size: %d", size)
	line("X-Binary-ID: 1")
	line(`X-Binary-Element-Type: "signed 32-bit integer"`)
	line("X-Binary-Element-Byte-Order: LITTLE_ENDIAN")
	line("Content-MD5: %s", digest)
	line("X-Binary-Number-of-Elements: %d", fpixels*spixels)
	line("X-Binary-Size-Fastest-Dimension: %d", fpixels)
	line("X-Binary-Size-Second-Dimension: %d", spixels)
	line("X-Binary-Size-Padding: %d", cbfPadding)
	line("")
	return b.String()
}

// WriteCBF writes a miniCBF image: the header h, then data (fpixels ×
// spixels signed 32-bit counts, data[slow*fpixels+fast]) byte-offset
// compressed, with its size, element count, dimensions and MD5 digest in
// the MIME header, the start tag before the data and 4095 bytes of zero
// padding after it, as Pilatus detectors write them.
func WriteCBF(w io.Writer, h CBFHeader, fpixels, spixels int, data []int32) error {
	if fpixels < 1 || spixels < 1 || len(data)/fpixels != spixels || len(data)%fpixels != 0 {
		return fmt.Errorf("formats: cbf: %d pixels do not make a %dx%d image", len(data), fpixels, spixels)
	}
	packed := ByteOffsetCompress(data)
	sum := md5.Sum(packed)
	bw := bufio.NewWriter(w)
	bw.WriteString(h.text(fpixels, spixels, len(packed), base64.StdEncoding.EncodeToString(sum[:])))
	bw.Write(cbfStartTag)
	bw.Write(packed)
	bw.Write(make([]byte, cbfPadding))
	bw.WriteString("\r\n--CIF-BINARY-FORMAT-SECTION----\r\n;\r\n\r\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("formats: cbf: %w", err)
	}
	return nil
}

// Int32Image widens 16-bit pixels (an SMV image's) to CBF's 32-bit ones.
func Int32Image(data []uint16) []int32 {
	out := make([]int32, len(data))
	for i, v := range data {
		out[i] = int32(v)
	}
	return out
}

// ByteOffsetCompress packs values with CBF's byte-offset scheme: each
// value is stored as its difference from the previous one (the first from
// 0), in one signed byte when it lies in −127…127, else after the escape
// byte 0x80 in two little-endian bytes when in −32767…32767, else after
// the escape 0x8000 in four bytes, else after 0x80000000 in eight.
func ByteOffsetCompress(data []int32) []byte {
	out := make([]byte, 0, len(data)+len(data)/8+16)
	var prev int64
	for _, v := range data {
		d := int64(v) - prev
		prev = int64(v)
		switch {
		case d >= -127 && d <= 127:
			out = append(out, byte(int8(d)))
		case d >= -32767 && d <= 32767:
			out = append(out, 0x80)
			out = binary.LittleEndian.AppendUint16(out, uint16(int16(d)))
		case d >= -(1<<31)+1 && d <= 1<<31-1:
			out = append(out, 0x80, 0x00, 0x80)
			out = binary.LittleEndian.AppendUint32(out, uint32(int32(d)))
		default:
			out = append(out, 0x80, 0x00, 0x80, 0x00, 0x00, 0x00, 0x80)
			out = binary.LittleEndian.AppendUint64(out, uint64(d))
		}
	}
	return out
}

// ByteOffsetDecompress unpacks n values from CBF byte-offset data (see
// ByteOffsetCompress). Trailing bytes are an error, as are too few bytes
// and a value outside the 32-bit range.
func ByteOffsetDecompress(packed []byte, n int) ([]int32, error) {
	if n < 0 || n > len(packed) {
		return nil, fmt.Errorf("formats: cbf: %d bytes cannot hold %d byte-offset values", len(packed), n)
	}
	out := make([]int32, n)
	var v int64
	p := 0
	short := func() error {
		return fmt.Errorf("formats: cbf: byte-offset data ends inside value %d of %d", len(out), n)
	}
	for i := range out {
		if p >= len(packed) {
			return nil, short()
		}
		d := int64(int8(packed[p]))
		p++
		if d == -128 {
			if p+2 > len(packed) {
				return nil, short()
			}
			d = int64(int16(binary.LittleEndian.Uint16(packed[p:])))
			p += 2
			if d == -32768 {
				if p+4 > len(packed) {
					return nil, short()
				}
				d = int64(int32(binary.LittleEndian.Uint32(packed[p:])))
				p += 4
				if d == -1<<31 {
					if p+8 > len(packed) {
						return nil, short()
					}
					d = int64(binary.LittleEndian.Uint64(packed[p:]))
					p += 8
				}
			}
		}
		v += d
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, fmt.Errorf("formats: cbf: value %d (%d) is outside the signed 32-bit range", i, v)
		}
		out[i] = int32(v)
	}
	if p != len(packed) {
		return nil, fmt.Errorf("formats: cbf: %d bytes left after %d byte-offset values", len(packed)-p, n)
	}
	return out, nil
}

// CBFImage is a miniCBF file as read by ReadCBF.
type CBFImage struct {
	// Text is the CIF text before the binary section; Header the values
	// found in its "# Key value" lines (NaN, or 0 for CountCutoff and
	// ThicknessM, when absent or not a number).
	Text   string
	Header CBFHeader
	Width  int // X-Binary-Size-Fastest-Dimension
	Height int // X-Binary-Size-Second-Dimension
	Data   []int32
}

// IsCBF reports whether b starts as a CBF file does.
func IsCBF(b []byte) bool { return bytes.HasPrefix(b, []byte("###CBF")) }

// ReadCBF reads a CBF image with one binary section: the file must start
// with "###CBF"; the section's MIME header must give its conversion
// (x-CBF_BYTE_OFFSET, or x-CBF_NONE with 16- or 32-bit little-endian
// integers), X-Binary-Size, and the dimensions, whose product must be
// X-Binary-Number-of-Elements when that is given. A Content-MD5 digest,
// when present, must match. The "# Key value" lines of a miniCBF header
// fill Header. Errors start with "formats: cbf:".
func ReadCBF(r io.Reader) (*CBFImage, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(6)
	if err != nil || !IsCBF(magic) {
		return nil, fmt.Errorf("formats: cbf: file does not start with ###CBF: not a CBF file")
	}
	// The text up to the binary section's marker.
	const marker = "--CIF-BINARY-FORMAT-SECTION--"
	var text strings.Builder
	for {
		line, err := br.ReadString('\n')
		text.WriteString(line)
		if text.Len() > maxCBFHeaderBytes {
			return nil, fmt.Errorf("formats: cbf: no binary section in the first %d bytes", maxCBFHeaderBytes)
		}
		if strings.HasPrefix(line, marker) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("formats: cbf: no binary section (%s)", marker)
		}
	}
	im := &CBFImage{Text: strings.TrimSuffix(strings.TrimRight(text.String(), "\r\n"), marker)}
	im.Header = parseCBFHeader(im.Text)
	// The MIME header, up to its blank line.
	mime := map[string]string{}
	read := text.Len()
	for {
		line, err := br.ReadString('\n')
		read += len(line)
		if read > maxCBFHeaderBytes {
			return nil, fmt.Errorf("formats: cbf: MIME header longer than %d bytes", maxCBFHeaderBytes)
		}
		l := strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(l) == "" {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("formats: cbf: MIME header ends before its blank line")
		}
		if k, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, " ") {
			mime[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		} else if strings.Contains(l, "conversions=") {
			mime["conversions"] = strings.Trim(strings.TrimSpace(l[strings.Index(l, "conversions=")+len("conversions="):]), `";`)
		}
	}
	atoi := func(name string) (int, error) {
		key := strings.ToLower(name)
		s, ok := mime[key]
		if !ok {
			return 0, fmt.Errorf("formats: cbf: MIME header has no %s", name)
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("formats: cbf: %s %q is not a count", name, s)
		}
		return n, nil
	}
	size, err := atoi("X-Binary-Size")
	if err != nil {
		return nil, err
	}
	if im.Width, err = atoi("X-Binary-Size-Fastest-Dimension"); err != nil {
		return nil, err
	}
	if im.Height, err = atoi("X-Binary-Size-Second-Dimension"); err != nil {
		return nil, err
	}
	if im.Width < 1 || im.Height < 1 || im.Width > maxCBFPixels || im.Height > maxCBFPixels/im.Width {
		return nil, fmt.Errorf("formats: cbf: bad image size %dx%d", im.Width, im.Height)
	}
	n := im.Width * im.Height
	if _, ok := mime["x-binary-number-of-elements"]; ok {
		if e, err := atoi("X-Binary-Number-of-Elements"); err != nil || e != n {
			return nil, fmt.Errorf("formats: cbf: X-Binary-Number-of-Elements %s is not %dx%d", mime["x-binary-number-of-elements"], im.Width, im.Height)
		}
	}
	if bo, ok := mime["x-binary-element-byte-order"]; ok && !strings.EqualFold(bo, "LITTLE_ENDIAN") {
		return nil, fmt.Errorf("formats: cbf: byte order %s is not supported", bo)
	}
	// The start tag: the data follow it.
	var skipped int
	for {
		b, err := br.ReadByte()
		if err != nil {
			return nil, errors.New("formats: cbf: no binary start tag after the MIME header")
		}
		if b == cbfStartTag[0] {
			if next, err := br.Peek(3); err == nil && bytes.Equal(next, cbfStartTag[1:]) {
				br.Discard(3)
				break
			}
		}
		if skipped++; skipped > 64 {
			return nil, errors.New("formats: cbf: no binary start tag after the MIME header")
		}
	}
	packed, err := io.ReadAll(io.LimitReader(br, int64(size)))
	if err != nil {
		return nil, fmt.Errorf("formats: cbf: %w", err)
	}
	if len(packed) != size {
		return nil, fmt.Errorf("formats: cbf: truncated: %d of %d binary bytes", len(packed), size)
	}
	if d, ok := mime["content-md5"]; ok {
		sum := md5.Sum(packed)
		if got := base64.StdEncoding.EncodeToString(sum[:]); got != d {
			return nil, fmt.Errorf("formats: cbf: Content-MD5 %s does not match the data's %s", d, got)
		}
	}
	conv := strings.ToLower(mime["conversions"])
	switch {
	case strings.Contains(conv, "x-cbf_byte_offset"):
		im.Data, err = ByteOffsetDecompress(packed, n)
	case strings.Contains(conv, "x-cbf_none"):
		im.Data, err = uncompressedCBF(packed, n, strings.ToLower(mime["x-binary-element-type"]))
	default:
		err = fmt.Errorf("formats: cbf: conversion %q is not supported (byte offset or none)", mime["conversions"])
	}
	if err != nil {
		return nil, err
	}
	return im, nil
}

// uncompressedCBF reads n little-endian integers of the element type.
func uncompressedCBF(b []byte, n int, typ string) ([]int32, error) {
	var size int
	var conv func([]byte) int32
	switch {
	case strings.Contains(typ, "signed 32-bit integer") && !strings.Contains(typ, "unsigned"):
		size, conv = 4, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) }
	case strings.Contains(typ, "unsigned 16-bit integer"):
		size, conv = 2, func(b []byte) int32 { return int32(binary.LittleEndian.Uint16(b)) }
	case strings.Contains(typ, "signed 16-bit integer"):
		size, conv = 2, func(b []byte) int32 { return int32(int16(binary.LittleEndian.Uint16(b))) }
	default:
		return nil, fmt.Errorf("formats: cbf: element type %q is not supported uncompressed", typ)
	}
	if len(b) != size*n {
		return nil, fmt.Errorf("formats: cbf: %d bytes for %d %d-byte values", len(b), n, size)
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = conv(b[size*i:])
	}
	return out, nil
}

// parseCBFHeader reads the "# Key value" lines that dxtbx reads.
func parseCBFHeader(text string) CBFHeader {
	nan := math.NaN()
	h := CBFHeader{PixelM: nan, DistanceM: nan, WavelengthA: nan, BeamXPx: nan, BeamYPx: nan,
		StartAngleDeg: nan, AngleIncrementDeg: nan, ExposureS: nan, TwoThetaDeg: nan}
	first := func(s string) float64 {
		f := strings.Fields(strings.NewReplacer("(", " ", ")", " ", ",", " ").Replace(s))
		if len(f) == 0 {
			return nan
		}
		x, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nan
		}
		return x
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, "data_") {
			h.Name = strings.TrimSpace(line[len("data_"):])
			continue
		}
		if !strings.HasPrefix(line, "# ") {
			continue
		}
		f := strings.Fields(line[2:])
		if len(f) < 2 {
			continue
		}
		rest := strings.Join(f[1:], " ")
		switch f[0] {
		case "Pixel_size":
			h.PixelM = first(rest)
		case "Detector_distance":
			h.DistanceM = first(rest)
		case "Wavelength":
			h.WavelengthA = first(rest)
		case "Beam_xy":
			h.BeamXPx = first(rest)
			if f := strings.Fields(strings.NewReplacer("(", " ", ")", " ", ",", " ").Replace(rest)); len(f) > 1 {
				h.BeamYPx = first(f[1])
			}
		case "Start_angle":
			h.StartAngleDeg = first(rest)
		case "Angle_increment":
			h.AngleIncrementDeg = first(rest)
		case "Exposure_time":
			h.ExposureS = first(rest)
		case "Detector_2theta":
			h.TwoThetaDeg = first(rest)
		case "Count_cutoff":
			if x := first(rest); x >= 0 && x < 1<<62 {
				h.CountCutoff = int(x)
			}
		case "Silicon", "CdTe":
			// "# Silicon sensor, thickness 0.000320 m"
			if i := strings.Index(rest, "thickness"); i >= 0 {
				h.ThicknessM = first(rest[i+len("thickness"):])
			}
		}
	}
	return h
}
