package formats

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileProcLinks: /dev/stdout goes to Output.Stdout, and a
// process-relative link (/proc/self/fd/N, whose target "pipe:[…]" is not
// a path) is written in place, through a link to it too.
func TestWriteFileProcLinks(t *testing.T) {
	var buf bytes.Buffer
	for _, p := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		buf.Reset()
		if err := (Output{Stdout: &buf}).WriteFile(p, writeString("x")); err != nil || buf.String() != "x" {
			t.Errorf("%s: %q, %v", p, buf.String(), err)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	fd := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	os.Symlink(fd, link)
	for _, p := range []string{fd, link} {
		if err := CheckWritable(p); err != nil {
			t.Errorf("CheckWritable(%s): %v", p, err)
		}
		if err := WriteFileAtomic(p, writeString("through "+p+";")); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	w.Close()
	got, _ := io.ReadAll(r)
	if want := "through " + fd + ";through " + link + ";"; string(got) != want {
		t.Errorf("pipe got %q, want %q", got, want)
	}
	dirHolds(t, dir, "link")
}
