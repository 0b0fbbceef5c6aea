package formats

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// maxFdumpHeader bounds the text line of an Fdump file (six C ints).
const maxFdumpHeader = 256

// WriteFdump writes g in the reference's Fdump.bin layout: the text
// "hmin hmax kmin kmax lmin lmax\n\f" followed by every cell of the padded
// grid as a little-endian float64, h slowest and l fastest.
func WriteFdump(w io.Writer, g *HKLGrid) error {
	if g == nil {
		return errors.New("formats: fdump: nil grid")
	}
	hr, kr, lr := g.Ranges()
	if n, ok := cells(hr, kr, lr, maxGridCells); hr < 1 || kr < 1 || lr < 1 || !ok || n != len(g.F) {
		return fmt.Errorf("formats: fdump: grid h %d..%d k %d..%d l %d..%d does not match %d values",
			g.HMin, g.HMax, g.KMin, g.KMax, g.LMin, g.LMax, len(g.F))
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d %d %d %d %d %d\n\f", g.HMin, g.HMax, g.KMin, g.KMax, g.LMin, g.LMax)
	var b [8]byte
	for _, f := range g.F {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(f))
		bw.Write(b[:])
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("formats: fdump: %w", err)
	}
	return nil
}

// ReadFdump reads a grid written by WriteFdump or by the reference. Count is
// set to hRange*kRange*lRange, as the reference does. The six indices must
// be followed by "\f" and then exactly the padded grid; anything else is an
// error. (The reference's fscanf pattern "\n\f" also swallows any
// whitespace-valued bytes at the start of the binary data, misaligning the
// grid; ReadFdump reads such files correctly.)
func ReadFdump(r io.Reader) (*HKLGrid, error) { return ReadFdumpMax(r, maxGridCells) }

// ReadFdumpMax is ReadFdump refusing, before reading the data, a grid of
// more than maxCells cells (padding included). The data are read straight
// into the grid, a chunk at a time.
func ReadFdumpMax(r io.Reader, maxCells int) (*HKLGrid, error) {
	br := bufio.NewReader(r)
	var head []byte
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil, errors.New("formats: fdump: header has no form feed: not an Fdump file or truncated")
		}
		if err != nil {
			return nil, fmt.Errorf("formats: fdump: %w", err)
		}
		if c == '\f' {
			break
		}
		if len(head) >= maxFdumpHeader {
			return nil, fmt.Errorf("formats: fdump: no form feed in the first %d bytes: not an Fdump file", maxFdumpHeader)
		}
		head = append(head, c)
	}
	f := bytes.Fields(head)
	if len(f) != 6 {
		return nil, fmt.Errorf("formats: fdump: header %q does not hold 6 integers", head)
	}
	var v [6]int
	for i, s := range f {
		x, err := strconv.Atoi(string(s))
		if err != nil {
			return nil, fmt.Errorf("formats: fdump: header %q does not hold 6 integers", head)
		}
		v[i] = x
	}
	g, n, err := newGridMax(v[0], v[1], v[2], v[3], v[4], v[5], maxCells)
	if err != nil {
		return nil, fmt.Errorf("formats: fdump: %w", err)
	}
	hr, kr, lr := g.Ranges()
	g.Count = hr * kr * lr
	want := int64(n) * 8
	// F's pages are touched only as data arrive: a short file with a large
	// header costs what it holds.
	g.F = make([]float64, 0, n)
	var buf [1 << 13]byte
	got := int64(0)
	for got < want {
		k, err := io.ReadFull(br, buf[:min(int64(len(buf)), want-got)])
		for i := 0; i+8 <= k; i += 8 {
			g.F = append(g.F, math.Float64frombits(binary.LittleEndian.Uint64(buf[i:])))
		}
		got += int64(k)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("formats: fdump: truncated: %d of %d data bytes for grid h %d..%d k %d..%d l %d..%d",
				got, want, g.HMin, g.HMax, g.KMin, g.KMax, g.LMin, g.LMax)
		}
		if err != nil {
			return nil, fmt.Errorf("formats: fdump: %w", err)
		}
	}
	if _, err := br.ReadByte(); err == nil {
		return nil, fmt.Errorf("formats: fdump: data longer than the %d bytes the header announces", want)
	}
	return g, nil
}
