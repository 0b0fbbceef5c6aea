package formats

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Output says where WriteFile sends the path "-" and its warnings. The
// zero value writes "-" to os.Stdout and warnings to os.Stderr.
type Output struct {
	Stdout io.Writer // the path "-"; nil: os.Stdout
	Log    io.Writer // warnings, one line each; nil: os.Stderr
}

// WriteFileAtomic is Output{}.WriteFile.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	return Output{}.WriteFile(path, write)
}

// WriteFile writes what write produces to path, as safely as the kind of
// destination allows:
//
//   - "-" is standard output (o.Stdout), written in place;
//   - a symbolic link is followed (through chains of links) and its target
//     written; the link stays a link;
//   - a character or block device, a FIFO or a socket is opened and
//     written in place, never replaced (so "-floatfile /dev/null" works
//     even as root);
//   - a regular file, or a new one, is written to a temporary file in the
//     same directory that is renamed over it only when write, the flush
//     and the close all succeed; otherwise the temporary file is removed
//     and the old file is left as it was. An existing file keeps its
//     permission bits (and, for root, its owner); a new one gets 0644.
//
// A file that exists but may not be written (its permissions, as a shell
// redirection would judge them) is an error, not silently replaced. Where
// no temporary file can be made next to an existing writable file (a
// read-only directory, a name at the length limit), the file is written in
// place, with a warning on o.Log: an error in the middle then leaves it
// partly written.
//
// Temporary files are named ".NAME.tmpNNNN" (shortened when NAME is long)
// and are registered until renamed or removed, so that RemoveTemps (called
// on SIGINT/SIGTERM) can delete them.
func (o Output) WriteFile(path string, write func(io.Writer) error) error {
	if std := stdStream(path); std != 0 {
		w := o.Stdout
		if w == nil || std == 2 {
			w = [3]io.Writer{nil, os.Stdout, os.Stderr}[std]
		}
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := write(bw); err != nil {
			return fmt.Errorf("formats: writing standard output: %w", err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("formats: writing standard output: %w", err)
		}
		return nil
	}
	target, st, err := resolve(path)
	if err != nil {
		return err
	}
	switch {
	case target == "" && st.Mode().IsRegular():
		// Through a process-relative link (/proc/self/fd/N): the kernel
		// knows the file, its path may not be usable.
		return writeInPlace(path, os.O_TRUNC, write)
	case target == "":
		return writeInPlace(path, 0, write)
	case st == nil:
		// A new file: only the directory matters.
	case st.IsDir():
		return fmt.Errorf("formats: %s is a directory", path)
	case !st.Mode().IsRegular():
		return writeInPlace(target, 0, write)
	default:
		if err := writable(target); err != nil {
			return err
		}
	}
	f, err := makeTemp(target)
	if err != nil {
		if errors.Is(err, errInterrupted) {
			return fmt.Errorf("formats: writing %s: %w", path, err)
		}
		if st == nil {
			return fmt.Errorf("formats: %w", err)
		}
		// An existing file we may write but cannot replace atomically.
		o.warn("WARNING: cannot make a temporary file beside %s (%v); writing it in place", path, unwrapPath(err))
		return writeInPlace(target, os.O_TRUNC, write)
	}
	done := false
	defer func() { // also runs if write panics
		if !done {
			f.Close()
			removeTemp(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return fmt.Errorf("formats: writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("formats: writing %s: %w", path, err)
	}
	mode := fs.FileMode(0o644)
	if st != nil {
		mode = st.Mode().Perm() | st.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
		keepOwner(f, st)
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("formats: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("formats: writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), target); err != nil {
		return fmt.Errorf("formats: %w", err)
	}
	done = true
	untrackTemp(f.Name())
	return nil
}

// CheckWritable reports, without creating or changing anything, whether
// WriteFile could write path: "-", an existing device or FIFO, an existing
// writable regular file, or a new file in an existing directory that this
// process may write. Commands call it before long work so that a mistyped
// output path fails at once.
func CheckWritable(path string) error {
	if stdStream(path) != 0 {
		return nil
	}
	target, st, err := resolve(path)
	if err != nil {
		return err
	}
	if target == "" {
		return access(path, accessWrite)
	}
	switch {
	case st == nil:
		dir := filepath.Dir(target)
		ds, err := os.Stat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("formats: %s: no such file or directory %s", path, dir)
		}
		if err != nil {
			return fmt.Errorf("formats: %s: %w", path, err)
		}
		if !ds.IsDir() {
			return fmt.Errorf("formats: %s: %s is not a directory", path, dir)
		}
		if err := access(dir, accessWrite|accessSearch); err != nil {
			return fmt.Errorf("formats: %s: cannot create files in %s: %w", path, dir, err)
		}
		return nil
	case st.IsDir():
		return fmt.Errorf("formats: %s is a directory", path)
	case !st.Mode().IsRegular():
		return nil
	}
	return writable(target)
}

// maxLinks bounds the symbolic links followed (Linux's MAXSYMLINKS is 40).
const maxLinks = 40

// IsStdout reports whether WriteFile sends path to standard output: "-",
// /dev/stdout and its aliases.
func IsStdout(path string) bool { return stdStream(path) == 1 }

// stdStream is 1 for the names of standard output, 2 for those of
// standard error (written through the process's own streams, never
// reopened: reopening a redirected file would truncate what is already
// in it), 0 otherwise.
func stdStream(path string) int {
	switch path {
	case "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return 1
	case "/dev/stderr", "/dev/fd/2", "/proc/self/fd/2":
		return 2
	}
	return 0
}

// resolve follows symbolic links from path to the file they finally name
// and returns that path and its information (nil if it does not exist: a
// dangling link is written by creating its target, as a shell does). A
// path that is or passes through a process-relative link (/proc/…,
// /dev/fd/…), whose targets ("pipe:[1234]") are not paths, gives target ""
// and the information of what the kernel finds there.
func resolve(path string) (string, fs.FileInfo, error) {
	magic := func(p string) bool {
		return strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/")
	}
	p := path
	for i := 0; ; i++ {
		if magic(p) {
			st, err := os.Stat(path)
			if err != nil {
				return "", nil, fmt.Errorf("formats: %w", err)
			}
			return "", st, nil
		}
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil, nil
		}
		if err != nil {
			return "", nil, fmt.Errorf("formats: %w", err)
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return p, st, nil
		}
		if i == maxLinks {
			return "", nil, fmt.Errorf("formats: %s: too many levels of symbolic links", path)
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", nil, fmt.Errorf("formats: %w", err)
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
}

// writable reports whether this process may open the existing file at
// path for writing (access(2) with W_OK: root may write read-only files,
// as a shell redirection would).
func writable(path string) error {
	if err := access(path, accessWrite); err != nil {
		return fmt.Errorf("formats: %s: %w", path, err)
	}
	return nil
}

// writeInPlace opens an existing file (device, FIFO or, with O_TRUNC, a
// regular file) and writes to it directly.
func writeInPlace(path string, flag int, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|flag, 0)
	if err != nil {
		return fmt.Errorf("formats: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("formats: writing %s: %w", path, err)
	}
	return nil
}

func (o Output) warn(format string, a ...any) {
	w := o.Log
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, format+"\n", a...)
}

// unwrapPath drops the operation and path of a *fs.PathError, for messages
// that name the path themselves.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Temporary files in progress, for RemoveTemps.
var (
	tempMu      sync.Mutex
	temps       = map[string]bool{}
	interrupted bool
	tempSeq     uint32
)

// errInterrupted refuses new temporary files once RemoveTemps has run.
var errInterrupted = errors.New("interrupted")

// nameMax is the longest file name (bytes) that common file systems take.
const nameMax = 255

// tempName returns ".BASE.tmpNNNNNNNNNN", with BASE cut (at a character
// boundary) so that the name fits in nameMax bytes.
func tempName(base string, n uint32) string {
	suffix := ".tmp" + strconv.FormatUint(uint64(n), 10)
	if room := nameMax - 1 - len(suffix); len(base) > room {
		base = base[:room]
		for len(base) > 0 && !utf8.ValidString(base) {
			base = base[:len(base)-1]
		}
	}
	return "." + base + suffix
}

// makeTemp is createTemp; tests replace it to make it fail.
var makeTemp = createTemp

// createTemp creates and registers a new temporary file beside target.
// The file is created under the registry's lock, so RemoveTemps never
// misses one.
func createTemp(target string) (*os.File, error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tempMu.Lock()
	defer tempMu.Unlock()
	if interrupted {
		return nil, errInterrupted
	}
	for try := 0; try < 100; try++ {
		tempSeq++
		n := uint32(time.Now().UnixNano())*2654435761 + tempSeq*40503 + uint32(os.Getpid())
		name := filepath.Join(dir, tempName(base, n))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		temps[name] = true
		return f, nil
	}
	return nil, fmt.Errorf("cannot find an unused temporary name in %s", dir)
}

func untrackTemp(name string) {
	tempMu.Lock()
	delete(temps, name)
	tempMu.Unlock()
}

func removeTemp(name string) {
	tempMu.Lock()
	os.Remove(name)
	delete(temps, name)
	tempMu.Unlock()
}

// RemoveTemps deletes the temporary files of every write in progress and
// makes later writes that would need one fail, so that nothing is left
// behind when the process is about to end on a signal. Writes in place
// (devices, standard output, the fallback) are not undone. It returns how
// many files it removed.
func RemoveTemps() int {
	tempMu.Lock()
	defer tempMu.Unlock()
	interrupted = true
	n := 0
	for name := range temps {
		if os.Remove(name) == nil {
			n++
		}
		delete(temps, name)
	}
	return n
}
