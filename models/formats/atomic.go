package formats

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic creates or replaces the file at path with what write
// produces. The output goes to a temporary file in the same directory,
// which is renamed over path only when write, the flush and the close all
// succeed; otherwise it is removed and path is left as it was. The new file
// has mode 0644.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("formats: %w", err)
	}
	done := false
	defer func() { // also runs if write panics
		if !done {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return fmt.Errorf("formats: writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("formats: writing %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("formats: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("formats: writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("formats: %w", err)
	}
	done = true
	return nil
}
