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
	if n, ok := cells(hr, kr, lr); hr < 1 || kr < 1 || lr < 1 || !ok || n != len(g.F) {
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
func ReadFdump(r io.Reader) (*HKLGrid, error) {
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
	g, n, err := newGrid(v[0], v[1], v[2], v[3], v[4], v[5])
	if err != nil {
		return nil, fmt.Errorf("formats: fdump: %w", err)
	}
	hr, kr, lr := g.Ranges()
	g.Count = hr * kr * lr
	// Read through a limit so memory grows with the data actually present.
	want := int64(n) * 8
	data, err := io.ReadAll(io.LimitReader(br, want))
	if err != nil {
		return nil, fmt.Errorf("formats: fdump: %w", err)
	}
	if int64(len(data)) != want {
		return nil, fmt.Errorf("formats: fdump: truncated: %d of %d data bytes for grid h %d..%d k %d..%d l %d..%d",
			len(data), want, g.HMin, g.HMax, g.KMin, g.KMax, g.LMin, g.LMax)
	}
	if _, err := br.ReadByte(); err == nil {
		return nil, fmt.Errorf("formats: fdump: data longer than the %d bytes the header announces", want)
	}
	g.F = make([]float64, n)
	for i := range g.F {
		g.F[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return g, nil
}
