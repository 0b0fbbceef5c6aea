package formats

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fuzz targets: no input may make a parser panic, and what parses must
// survive a round trip through the matching writer where there is one.
// Seeds are the project's input files plus hand-made edge cases.

// seedInputs adds the first seedLines lines of each input file: a whole
// 15 KB file would make every interesting mutation a 15 KB input, which the
// fuzzing engine then spends its whole time minimizing.
func seedInputs(f *testing.F, names ...string) {
	const seedLines = 24
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(top, "inputs", n))
		if err != nil {
			f.Fatal(err)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		f.Add(bytes.Join(lines[:min(len(lines), seedLines)], nil))
	}
}

// smallLimits keeps fuzzed grids and images small enough to allocate.
func smallLimits(f *testing.F) {
	cells, pixels := maxGridCells, maxSMVPixels
	maxGridCells, maxSMVPixels = 1<<16, 1<<16
	f.Cleanup(func() { maxGridCells, maxSMVPixels = cells, pixels })
}

func FuzzReadHKL(f *testing.F) {
	smallLimits(f)
	seedInputs(f, "P1.hkl", "P1_varied.hkl")
	for _, s := range []string{"1 2 3 4\n-1e9 0 0 1\n", "0 0 0 1e\n1 1 1 nan\n", "0x1 -0 +2 inf 1.0 1 1 .5", "1 2 3 4 # c"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ReadHKL(bytes.NewReader(b), 1)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteFdump(&buf, g); err != nil {
			t.Fatalf("WriteFdump of a parsed grid: %v", err)
		}
		r, err := ReadFdump(&buf)
		if err != nil {
			t.Fatalf("ReadFdump of a written grid: %v", err)
		}
		for i := range g.F {
			if math.Float64bits(g.F[i]) != math.Float64bits(r.F[i]) {
				t.Fatalf("cell %d changed from %g to %g", i, g.F[i], r.F[i])
			}
		}
	})
}

func FuzzReadFdump(f *testing.F) {
	smallLimits(f)
	f.Add([]byte("0 1 0 0 0 0\n\f" + strings.Repeat("\x00", 8*3*2*2)))
	f.Add([]byte("-1 0 2 2 0 0\n\f" + strings.Repeat("\x0a", 8*3*2*2)))
	f.Add([]byte("1 2 3 4 5\n\f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ReadFdump(bytes.NewReader(b))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteFdump(&buf, g); err != nil {
			t.Fatalf("WriteFdump of a read grid: %v", err)
		}
		if _, err := ReadFdump(&buf); err != nil {
			t.Fatalf("re-read: %v", err)
		}
	})
}

func FuzzReadMatrix(f *testing.F) {
	seedInputs(f, "A.mat", "A_mosflm.mat")
	f.Add([]byte("1 2 3 4 5 6 7 8 x"))
	f.Fuzz(func(t *testing.T, b []byte) { ReadMatrix(bytes.NewReader(b)) })
}

func FuzzReadColumns(f *testing.F) {
	seedInputs(f, "sources.txt", "sources_b.txt")
	f.Add([]byte("# X Y Z\r\n1,2;3:4!5\n\n\x001 2"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cols, err := ReadColumns(bytes.NewReader(b), 5)
		if err != nil {
			return
		}
		for _, c := range cols {
			if len(c) != len(cols[0]) {
				t.Fatal("columns of different lengths")
			}
		}
	})
}

func FuzzReadSMV(f *testing.F) {
	smallLimits(f)
	var buf bytes.Buffer
	if err := WriteSMV(&buf, simpleCubicHeader, 3, 2, []uint16{1, 2, 3, 4, 5, 6}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(strings.Replace(buf.String(), "little", "big", 1)))
	f.Add([]byte("{\nHEADER_BYTES=64;BYTE_ORDER=big_endian;SIZE1=1;SIZE2=1;        \x00\x07"))
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := ReadSMV(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(im.Data) != im.Width*im.Height || len(im.Header) != im.HeaderBytes {
			t.Fatalf("%dx%d image with %d pixels, header %d of %d bytes", im.Width, im.Height, len(im.Data), len(im.Header), im.HeaderBytes)
		}
		im.Value("DISTANCE")
		im.Value("")
	})
}
