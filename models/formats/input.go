package formats

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Size limits of input files (bytes): a few times the largest sensible
// file of each kind, checked before reading (OpenInput).
const (
	// MaxHKLBytes: a P1 list of every reflection of a 300 Å cell to 1.5 Å
	// is ~3·10⁷ lines, under 1 GB.
	MaxHKLBytes = 1 << 30
	// MaxMatrixBytes: a MOSFLM matrix file is a few hundred bytes.
	MaxMatrixBytes = 1 << 20
	// MaxColumnBytes: a million sources (the most a model takes) of five
	// columns is ~60 MB.
	MaxColumnBytes = 256 << 20
	// MaxImageBytes: an 8192² image (the largest detector) as float32,
	// or as SMV with a header of up to 1 MiB.
	MaxImageBytes = 4<<26 + 1<<20
)

// ErrTooLarge marks an input file over its size limit.
var ErrTooLarge = errors.New("file too large")

// OpenInput opens the file at path for reading. A regular file larger
// than max bytes is refused before any of it is read; from anything else
// (a FIFO, a device) at most max bytes are read, and reading more is an
// error wrapping ErrTooLarge. A directory is an error.
func OpenInput(path string, max int64) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case st.IsDir():
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
	case st.Mode().IsRegular() && st.Size() > max:
		f.Close()
		return nil, fmt.Errorf("%s: %d bytes, more than the %d this kind of file may have: %w", path, st.Size(), max, ErrTooLarge)
	}
	return &limitedFile{f: f, left: max, max: max, path: path}, nil
}

// limitedFile reads at most max bytes of a file and fails if it holds more.
type limitedFile struct {
	f         *os.File
	left, max int64
	path      string
}

func (l *limitedFile) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := l.f.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%s: more than the %d bytes this kind of file may have: %w", l.path, l.max, ErrTooLarge)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.f.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limitedFile) Close() error { return l.f.Close() }

// ReadInput reads the whole file at path through OpenInput's limit.
func ReadInput(path string, max int64) ([]byte, error) {
	r, err := OpenInput(path, max)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
