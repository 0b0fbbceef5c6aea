//go:build unix

package formats

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteFileDevice: a character device is written in place and stays
// a device (the node is a /dev/null made in a temporary directory, so the
// test needs root).
func TestWriteFileDevice(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("cannot make a device node here: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := WriteFileAtomic(null, writeString(strings.Repeat("x", 1<<17))); err != nil {
			t.Fatal(err)
		}
		if err := CheckWritable(null); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Lstat(null)
	if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", null, st.Mode(), err)
	}
	dirHolds(t, dir, "null")
}

// TestWriteFileFIFO: a FIFO is written in place (a reader gets the data)
// and stays a FIFO.
func TestWriteFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	if err := WriteFileAtomic(fifo, writeString("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "through the pipe" {
		t.Errorf("reader got %q", b)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("FIFO became %v", st.Mode())
	}
	dirHolds(t, dir, "pipe")
}

// TestWriteFileFallback: where no temporary file can be made beside an
// existing writable file, it is written in place with a warning; a new
// file there is an error.
func TestWriteFileFallback(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.bin")
	os.WriteFile(p, []byte("old contents"), 0o600)
	if os.Geteuid() == 0 {
		// Root creates files in read-only directories: make the temporary
		// file fail instead.
		makeTemp = func(string) (*os.File, error) { return nil, &fs.PathError{Op: "open", Path: "x", Err: syscall.EROFS} }
		defer func() { makeTemp = createTemp }()
	} else {
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
	}
	var log bytes.Buffer
	if err := (Output{Log: &log}).WriteFile(p, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("file holds %q", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if !strings.HasPrefix(log.String(), "WARNING: cannot make a temporary file beside") || strings.Count(log.String(), "\n") != 1 {
		t.Errorf("warning %q", log.String())
	}
	if err := (Output{Log: io.Discard}).WriteFile(filepath.Join(dir, "new.bin"), writeString("x")); err == nil {
		t.Error("new file without a temporary file: no error")
	}
	dirHolds(t, dir, "out.bin")
}
