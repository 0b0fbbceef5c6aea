package formats

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// dirHolds fails unless dir holds exactly the names given.
func dirHolds(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, "|") != strings.Join(names, "|") {
		t.Errorf("directory holds %q, want %q", got, names)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.img")
	if err := WriteFileAtomic(p, writeString("first")); err != nil {
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
	dirHolds(t, dir, "out.img")

	if err := WriteFileAtomic(p, writeString("second")); err != nil {
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
	wantErr(t, "missing dir", WriteFileAtomic(filepath.Join(dir, "no/such/dir/x"), writeString("x")), "no such file")
	wantErr(t, "directory", WriteFileAtomic(dir, writeString("x")), "is a directory")
}

// TestWriteFileKeepsMode: replacing a file keeps its permission bits; a
// file this process may not write is refused, not replaced (root may
// write it, as a shell redirection would, and its mode stays).
func TestWriteFileKeepsMode(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []fs.FileMode{0o600, 0o640, 0o755, 0o444} {
		p := filepath.Join(dir, "f"+mode.String())
		if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		err := WriteFileAtomic(p, writeString("new"))
		b, _ := os.ReadFile(p)
		st, _ := os.Stat(p)
		if mode&0o200 == 0 && os.Geteuid() != 0 {
			wantErr(t, "read-only file", err, "permission denied")
			if string(b) != "old" {
				t.Errorf("read-only file changed to %q", b)
			}
		} else if err != nil || string(b) != "new" {
			t.Errorf("mode %v: error %v, content %q", mode, err, b)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("mode %v became %v", mode, st.Mode().Perm())
		}
	}
	dirHolds(t, dir, "f-r--r--r--", "f-rw-------", "f-rw-r-----", "f-rwxr-xr-x")
}

// TestWriteFileSymlink: a link is followed to its target (through a chain
// and across directories), the link stays a link; a dangling link
// creates its target; a loop is an error.
func TestWriteFileSymlink(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	target := filepath.Join(sub, "target.bin")
	os.WriteFile(target, []byte("old"), 0o640)
	os.Symlink("sub/target.bin", filepath.Join(dir, "link1"))
	os.Symlink("link1", filepath.Join(dir, "link2"))
	if err := WriteFileAtomic(filepath.Join(dir, "link2"), writeString("new")); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"link1", "link2"} {
		if st, err := os.Lstat(filepath.Join(dir, l)); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link: %v %v", l, st, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target holds %q", b)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
		t.Errorf("target mode %v", st.Mode())
	}
	dirHolds(t, sub, "target.bin")

	os.Symlink("sub/new.bin", filepath.Join(dir, "dangling"))
	if err := WriteFileAtomic(filepath.Join(dir, "dangling"), writeString("x")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(sub, "new.bin")); string(b) != "x" {
		t.Errorf("dangling link's target holds %q", b)
	}

	os.Symlink("loopB", filepath.Join(dir, "loopA"))
	os.Symlink("loopA", filepath.Join(dir, "loopB"))
	wantErr(t, "link loop", WriteFileAtomic(filepath.Join(dir, "loopA"), writeString("x")), "symbolic links")
	wantErr(t, "link loop", CheckWritable(filepath.Join(dir, "loopA")), "symbolic links")
}

// TestWriteFileStdout: "-" writes to Output.Stdout.
func TestWriteFileStdout(t *testing.T) {
	var buf bytes.Buffer
	if err := (Output{Stdout: &buf}).WriteFile("-", writeString("to stdout")); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "to stdout" {
		t.Errorf("stdout got %q", buf.String())
	}
	if err := CheckWritable("-"); err != nil {
		t.Error(err)
	}
}

// TestWriteFileLongName: a 250-character name works (its temporary name
// is shortened) and leaves nothing else behind.
func TestWriteFileLongName(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{strings.Repeat("a", 250), strings.Repeat("é", 127)} {
		p := filepath.Join(dir, name)
		for i := 0; i < 2; i++ {
			if err := WriteFileAtomic(p, writeString("long")); err != nil {
				t.Fatalf("%d-byte name: %v", len(name), err)
			}
		}
		if b, _ := os.ReadFile(p); string(b) != "long" {
			t.Errorf("%d-byte name holds %q", len(name), b)
		}
		os.Remove(p)
	}
	dirHolds(t, dir)
	for _, base := range []string{"x", strings.Repeat("b", 300), strings.Repeat("é", 200)} {
		if n := tempName(base, 4294967295); len(n) > nameMax || !strings.HasPrefix(n, ".") {
			t.Errorf("temporary name %q (%d bytes)", n, len(n))
		}
	}
}

// TestCheckWritable: what CheckWritable accepts and refuses.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	for _, ok := range []string{"file", "new.bin"} {
		if err := CheckWritable(filepath.Join(dir, ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	wantErr(t, "missing dir", CheckWritable(filepath.Join(dir, "nodir/x")), "no such file")
	wantErr(t, "file as dir", CheckWritable(filepath.Join(dir, "file/x")), "not a directory")
	wantErr(t, "dir", CheckWritable(dir), "is a directory")
	dirHolds(t, dir, "file")
}

// TestRemoveTemps: what a signal handler's RemoveTemps does to a write in
// progress: its temporary file goes, the destination is left as it was,
// and later writes that need a temporary file fail.
func TestRemoveTemps(t *testing.T) {
	defer func() {
		tempMu.Lock()
		interrupted = false
		tempMu.Unlock()
	}()
	dir := t.TempDir()
	p := filepath.Join(dir, "out.bin")
	os.WriteFile(p, []byte("old"), 0o644)
	removed := 0
	err := WriteFileAtomic(p, func(w io.Writer) error {
		io.WriteString(w, "new")
		removed = RemoveTemps()
		return nil
	})
	if err == nil || removed != 1 {
		t.Errorf("write across RemoveTemps: error %v, %d removed", err, removed)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("destination holds %q", b)
	}
	wantErr(t, "after RemoveTemps", WriteFileAtomic(p, writeString("x")), "interrupted")
	dirHolds(t, dir, "out.bin")
}
