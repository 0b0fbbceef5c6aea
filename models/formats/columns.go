package formats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Byte classes of the reference's text-table reader.
const (
	colDelims   = " \t,;:!"
	colNumChars = "0123456789-+.EGeg"
	// colLineMax is the most bytes one fgets call returns (buffer of 10240
	// including the terminating NUL); longer lines are split.
	colLineMax = 10239
)

// MaxColumnRows bounds the rows of a text table: a million sources (the
// most a model takes) and some room.
const MaxColumnRows = 1 << 20

// ReadColumns reads a text table of up to n numeric columns the way the
// reference's read_text_file does, and returns n slices of equal length, one
// per column. The rules, all reproduced:
//
//   - a line holding only delimiters (space, tab, ',', ';', ':', '!') and a
//     newline is skipped; every other line yields one row;
//   - values are separated by runs of delimiters and converted with atof, so
//     a non-numeric word (such as a '#' comment) reads as 0;
//   - columns missing at the end of a newline-terminated line are NaN, but
//     when the last value is followed by anything other than delimiters and
//     "\n" (e.g. "\r\n" or end of file without a newline) the remaining
//     columns become 0, as atof("") is 0 in the reference;
//   - values beyond n columns are ignored; lines longer than 10239 bytes are
//     split as fgets splits them; a NUL byte ends the line's text.
//
// A table with no rows is an error (the reference's callers abort on it),
// and so is one of more than MaxColumnRows rows (the reference would go on
// allocating). The input is read a line at a time, in time linear in its
// length.
func ReadColumns(r io.Reader, n int) ([][]float64, error) {
	if n < 1 {
		return nil, fmt.Errorf("formats: columns: need at least one column, got %d", n)
	}
	br := bufio.NewReaderSize(r, colLineMax)
	cols := make([][]float64, n)
	for {
		// One fgets call: a line, or the first colLineMax bytes of one.
		text, err := br.ReadSlice('\n')
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return nil, fmt.Errorf("formats: columns: %w", err)
		}
		if len(text) == 0 {
			break
		}
		if z := bytes.IndexByte(text, 0); z >= 0 {
			text = text[:z]
		}

		t := text[span(text, colDelims):]
		if string(t) == "\n" {
			continue
		}
		if len(cols[0]) == MaxColumnRows {
			return nil, fmt.Errorf("formats: columns: more than %d rows", MaxColumnRows)
		}
		for i := range cols {
			cols[i] = append(cols[i], math.NaN())
		}
		row := len(cols[0]) - 1
		for i := 0; ; {
			cols[i][row] = atof(t)
			t = t[span(t, colNumChars):]
			if string(t) == "\n" {
				break
			}
			t = t[cspan(t, colDelims):]
			t = t[span(t, colDelims):]
			if string(t) == "\n" {
				break
			}
			if i++; i >= n {
				break
			}
		}
	}
	if len(cols[0]) == 0 {
		return nil, errors.New("formats: columns: no data lines")
	}
	return cols, nil
}

// span returns the length of the prefix of b made only of bytes in set (C strspn).
func span(b []byte, set string) int {
	i := 0
	for i < len(b) && strings.IndexByte(set, b[i]) >= 0 {
		i++
	}
	return i
}

// cspan returns the length of the prefix of b free of bytes in set (C strcspn).
func cspan(b []byte, set string) int {
	i := 0
	for i < len(b) && strings.IndexByte(set, b[i]) < 0 {
		i++
	}
	return i
}
