package formats

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenInput: a regular file over the limit is refused before reading
// (a sparse 3 GB file costs nothing); a stream is cut off at the limit;
// a directory is an error.
func TestOpenInput(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.hkl")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()
	if _, err := OpenInput(big, MaxHKLBytes); !errors.Is(err, ErrTooLarge) {
		t.Errorf("3 GB file: error %v, want ErrTooLarge", err)
	}
	if _, err := ReadInput(dir, 100); err == nil {
		t.Error("directory: no error")
	}

	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("0123456789"), 0o644)
	if b, err := ReadInput(small, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("file at the limit: %q, %v", b, err)
	}
	if _, err := ReadInput(small, 9); !errors.Is(err, ErrTooLarge) {
		t.Errorf("file over the limit: %v", err)
	}

	// A stream (here /dev/zero, endless) is read up to the limit only.
	r, err := OpenInput("/dev/zero", 1<<20)
	if err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	if !errors.Is(err, ErrTooLarge) || n != 1<<20 {
		t.Errorf("/dev/zero: %d bytes, error %v", n, err)
	}
}
