//go:build !unix

package formats

import (
	"io/fs"
	"os"
)

const (
	accessWrite  = 2
	accessSearch = 1
)

// access checks only the permission bits where access(2) is missing.
func access(path string, mode uint32) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if mode&accessWrite != 0 && st.Mode().Perm()&0o200 == 0 {
		return fs.ErrPermission
	}
	return nil
}

func keepOwner(*os.File, fs.FileInfo) {}
