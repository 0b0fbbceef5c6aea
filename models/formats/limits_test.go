package formats

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

// failAfter is a reader that yields text and then fails: a parser that
// reads past what it needs gets the error.
type failAfter struct{ text string }

var errReadTooFar = errors.New("read past the end of the records")

func (f *failAfter) Read(p []byte) (int, error) {
	if f.text == "" {
		return 0, errReadTooFar
	}
	n := copy(p, f.text)
	f.text = f.text[n:]
	return n, nil
}

// zeros is an endless stream of NUL bytes (/dev/zero), counting what is
// read.
type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += len(p)
	return len(p), nil
}

// TestReadHKLStopsReading: reading stops at the first token that is not a
// number, so nothing after it is read: a comment line ends an endless or
// failing stream, and /dev/zero is refused after one chunk.
func TestReadHKLStopsReading(t *testing.T) {
	g, err := ReadHKL(&failAfter{"0 0 0 1\n1 1 1 2\n# end of data\n"}, 0)
	if err != nil || g.Count != 2 {
		t.Fatalf("count %v, error %v", g, err)
	}
	z := &zeros{}
	_, err = ReadHKL(z, 0)
	wantErr(t, "/dev/zero", err, "no h k l F records")
	if z.n > 1<<20 {
		t.Errorf("read %d bytes of zeros", z.n)
	}
	// An overlong number is an error, not an endless read.
	_, err = ReadHKL(io.MultiReader(strings.NewReader("1 2 3 "), &digits{}), 0)
	wantErr(t, "endless number", err, "a number of more than 4096 characters")
	_, err = ReadMatrix(io.MultiReader(strings.NewReader("1 2 3 4 5 6 7 8 "), &digits{}))
	wantErr(t, "endless number", err, "a number of more than 4096 characters")
	// The same, whether or not the number is already in the buffer.
	_, err = ReadHKL(strings.NewReader("1 2 3 "+strings.Repeat("9", 5000)+"\n"), 0)
	wantErr(t, "long number", err, "a number of more than 4096 characters")
	if g, err := ReadHKL(strings.NewReader("1 2 3 "+strings.Repeat("9", 4000)+"e-3990\n"), 0); err != nil || g.F[0] != 1e10 {
		t.Errorf("4006-character number: %v", err)
	}
	// Reader errors are reported, not taken for the end of the input.
	_, err = ReadHKL(&failAfter{"0 0 0 1\n1 1 1 2\n"}, 0)
	wantErr(t, "failing reader", err, errReadTooFar.Error())
}

// digits is an endless stream of '7's.
type digits struct{}

func (digits) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '7'
	}
	return len(p), nil
}

// TestGridLimits: a grid over the caller's cell limit is refused before
// it is allocated (from an HKL file's indices, from an Fdump header).
func TestGridLimits(t *testing.T) {
	_, err := ReadHKLMax(strings.NewReader("321 321 321 100\n-322 -322 -322 100\n"), 0, 1000)
	var big *GridTooLarge
	if !errors.As(err, &big) || big.Max != 1000 || big.Cells != 645*645*645 {
		t.Errorf("error %v", err)
	}
	_, err = ReadFdumpMax(strings.NewReader("-322 321 -322 321 -322 321\n\f"), 1000)
	if !errors.As(err, &big) {
		t.Errorf("fdump: error %v", err)
	}
	if g, err := ReadHKLMax(strings.NewReader("1 1 1 1\n2 2 2 2\n"), 0, 27); err != nil || len(g.F) != 27 {
		t.Errorf("grid at the limit: %v", err)
	}
}

// TestReadColumnsLimits: more than MaxColumnRows rows is an error (the
// rows would otherwise cost 40 bytes per 2 bytes of input), found while
// reading.
func TestReadColumnsLimits(t *testing.T) {
	rows := bytes.Repeat([]byte("1\n"), MaxColumnRows+1)
	_, err := ReadColumns(bytes.NewReader(rows), 5)
	wantErr(t, "too many rows", err, "more than 1048576 rows")
	cols, err := ReadColumns(bytes.NewReader(rows[:2*MaxColumnRows]), 5)
	if err != nil || len(cols[0]) != MaxColumnRows {
		t.Errorf("rows at the limit: %v", err)
	}
}

// TestReadColumnsLinear: reading a table without newlines takes time
// proportional to its length (the old reader searched the rest of the
// input for a newline at every 10239-byte line: 64 times the time for 8
// times the input). The ratio of two sizes' times, best of three, must
// stay well under the quadratic one (measured here: 8–17 for this code,
// about 60 for the old one).
func TestReadColumnsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("times 120 MB of parsing")
	}
	best := func(n int) time.Duration {
		data := bytes.Repeat([]byte("1 2 3 4 5 "), n/10)
		var b time.Duration
		for i := 0; i < 3; i++ {
			t0 := time.Now()
			if _, err := ReadColumns(bytes.NewReader(data), 5); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(t0); i == 0 || d < b {
				b = d
			}
		}
		return b
	}
	small, large := best(4<<20), best(32<<20)
	t.Logf("%v for 4 MB, %v for 32 MB", small, large)
	if ratio := float64(large) / float64(small); ratio > 40 {
		t.Errorf("8× the input took %.1f× the time (%v, %v): not linear", ratio, small, large)
	}
}

// TestLongNumbers: numbers longer than Go's ParseFloat handles (800
// digits) convert as strtod converts them.
func TestLongNumbers(t *testing.T) {
	for _, c := range []struct {
		s    string
		want float64
	}{
		{strings.Repeat("9", 4000) + "e-3990", 1e10},
		{"0." + strings.Repeat("0", 1000) + "123e1004", 1230},
		{strings.Repeat("0", 900) + "5", 5},
		{"1" + strings.Repeat("0", 900) + "e-900", 1},
		{strings.Repeat("1", 800), math.Inf(1)},
		{"1." + strings.Repeat("0", 800) + "1", 1},
		{"-" + strings.Repeat("2", 750) + "e-749", -2.2222222222222223},
	} {
		if got := numberValue([]byte(c.s)); got != c.want {
			t.Errorf("%.20s… (%d chars) = %g, want %g", c.s, len(c.s), got, c.want)
		}
	}
}
