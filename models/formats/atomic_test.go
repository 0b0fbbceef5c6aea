package formats

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.img")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteFileAtomic(p, write("first")); err != nil {
		t.Fatal(err)
	}

	// A failing writer leaves the old file untouched and no temp file.
	boom := errors.New("boom")
	err := WriteFileAtomic(p, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want it to wrap boom", err)
	}
	// So does a panicking one.
	func() {
		defer func() { recover() }()
		WriteFileAtomic(p, func(w io.Writer) error { panic("writer panicked") })
	}()
	if b, _ := os.ReadFile(p); string(b) != "first" {
		t.Errorf("content after failures %q, want %q", b, "first")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %v, want only out.img", entries)
	}

	if err := WriteFileAtomic(p, write("second")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "second" || st.Mode().Perm() != 0o644 {
		t.Errorf("content %q mode %v", b, st.Mode())
	}

	// A missing directory is an error, not a panic.
	wantErr(t, "missing dir", WriteFileAtomic(filepath.Join(dir, "no/such/dir/x"), write("x")), "no such file")
}
