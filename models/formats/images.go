package formats

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"slices"
	"unsafe"
)

// littleEndian is whether this machine stores numbers little-endian, as
// the reference's float files are.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floatChunk is the most WriteFloatImage hands w at once: 1 MiB. On the
// Linux 6.18 virtual machine this project is measured on, a write(2) of
// 2 MiB or more to an ext4 file took ~10× as long per byte as writes of
// 1 MiB or less (64 MiB in 141–205 ms in writes of 2, 4, 8, 16 or 64 MiB,
// in 14–22 ms in writes of 64 KiB, 256 KiB or 1 MiB; each size twice):
// the page cache then takes the data in 2 MiB folios, whose memory there
// is slow to touch. In gobragg bench (runs taking turns with the
// reference's), the cubic 4096² simulate with chunks of 4 MiB spent
// 0.30–0.32 s in the kernel and 0.42–0.45 s in all, with 1 MiB 0.15–0.19 s
// and 0.29–0.31 s. More calls of 1 MiB cost nothing measurable.
const floatChunk = 1 << 20

// WriteFloatImage writes img as raw little-endian float32 values with no
// header (the reference's -floatfile).
func WriteFloatImage(w io.Writer, img []float32) error {
	if littleEndian {
		// The values' own bytes are the file's: straight to w, in chunks
		// of floatChunk (no conversion pass over the image).
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(img))), 4*len(img))
		for len(b) > 0 {
			n := min(len(b), floatChunk)
			if _, err := w.Write(b[:n]); err != nil {
				return fmt.Errorf("formats: float image: %w", err)
			}
			b = b[n:]
		}
		return nil
	}
	if err := writeLittleEndian(w, img); err != nil {
		return fmt.Errorf("formats: float image: %w", err)
	}
	return nil
}

// encodeChunk is the most writeLittleEndian hands w at once: 64 KiB,
// well below the 2 MiB from which writes were slow (floatChunk).
const encodeChunk = 1 << 16

// writeLittleEndian writes vals as little-endian bytes, encoded
// encodeChunk bytes at a time, each piece one write (WriteSMV's pixels,
// and WriteFloatImage's on a big-endian machine: a bufio.Writer's Write
// of two bytes a pixel was a seventh of a 1024² simulate process's
// samples).
func writeLittleEndian[T uint16 | float32](w io.Writer, vals []T) error {
	size := int(unsafe.Sizeof(*new(T)))
	buf := make([]byte, size*min(len(vals), encodeChunk/size))
	for len(vals) > 0 {
		n := min(len(vals), len(buf)/size)
		switch v := any(vals[:n]).(type) {
		case []uint16:
			for i, x := range v {
				binary.LittleEndian.PutUint16(buf[2*i:], x)
			}
		case []float32:
			for i, x := range v {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
			}
		}
		if _, err := w.Write(buf[:size*n]); err != nil {
			return err
		}
		vals = vals[n:]
	}
	return nil
}

// IntImage converts photons per pixel to the reference's -intfile pixel
// values: v*scale+adc in double precision, clamped to [0, 65535], then
// rounded as floorf(x+0.5), i.e. x+0.5 is first rounded to float32. NaN
// gives 0 (what the reference's conversion yields on x86). The reference
// leaves pixels outside its region of interest at 0; callers with an ROI
// must zero those themselves.
func IntImage(img []float32, scale, adc float64) []uint16 {
	out := make([]uint16, len(img))
	for i, v := range img {
		x := float64(v)*scale + adc
		if math.IsNaN(x) {
			continue
		}
		x = min(max(x, 0), 65535)
		out[i] = uint16(math.Floor(float64(float32(x + 0.5))))
	}
	return out
}

// WritePGM writes img as the reference's binary PGM: the header
// "P5\n<f> <s>\n# pixels scaled by <scale %g>\n255\n", then one byte per
// pixel, the value*scale truncated toward zero and capped at 255. Negative
// and NaN products give 0 (C leaves them undefined). Pixels outside the
// reference's region of interest are 0 there; callers must zero them.
func WritePGM(w io.Writer, fpixels, spixels int, img []float32, scale float64) error {
	if fpixels < 1 || spixels < 1 || len(img)/fpixels != spixels || len(img)%fpixels != 0 {
		return fmt.Errorf("formats: pgm: %d pixels do not make a %dx%d image", len(img), fpixels, spixels)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "P5\n%d %d\n# pixels scaled by %s\n255\n", fpixels, spixels, G(scale))
	for _, v := range img {
		x := float64(v) * scale
		var c byte
		if x >= 255 {
			c = 255
		} else if x > 0 {
			c = byte(x)
		}
		bw.WriteByte(c)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("formats: pgm: %w", err)
	}
	return nil
}

// WritePNGPreview writes an 8-bit greyscale PNG for a quick look at img.
// Display stretch: p is the 99.9th percentile of the positive finite pixel
// values; a pixel v shows as 255*sqrt(v/p), capped at 255, so the brightest
// 0.1% saturate and the square root lifts faint features. Zero, negative and
// NaN pixels are black, +Inf white. An image with no positive finite
// values is black apart from +Inf pixels.
func WritePNGPreview(w io.Writer, fpixels, spixels int, img []float32) error {
	if fpixels < 1 || spixels < 1 || len(img)/fpixels != spixels || len(img)%fpixels != 0 {
		return fmt.Errorf("formats: png: %d pixels do not make a %dx%d image", len(img), fpixels, spixels)
	}
	var pos []float32
	for _, v := range img {
		if v > 0 && !math.IsInf(float64(v), 1) {
			pos = append(pos, v)
		}
	}
	p := 0.0
	if len(pos) > 0 {
		slices.Sort(pos)
		p = float64(pos[int(0.999*float64(len(pos)-1))])
	}
	g := image.NewGray(image.Rect(0, 0, fpixels, spixels))
	for i, v := range img {
		x := float64(v)
		switch {
		case math.IsInf(x, 1):
			g.Pix[i] = 255
		case !(x > 0) || p == 0:
			// black
		case x >= p:
			g.Pix[i] = 255
		default:
			g.Pix[i] = uint8(255*math.Sqrt(x/p) + 0.5)
		}
	}
	if err := png.Encode(w, g); err != nil {
		return fmt.Errorf("formats: png: %w", err)
	}
	return nil
}
