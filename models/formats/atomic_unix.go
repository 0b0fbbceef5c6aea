//go:build unix

package formats

import (
	"io/fs"
	"os"
	"syscall"
)

// access(2) modes.
const (
	accessWrite  = 2 // W_OK
	accessSearch = 1 // X_OK
)

// access reports whether this process may use path in the given modes,
// as the kernel judges it (root may write read-only files).
func access(path string, mode uint32) error { return syscall.Access(path, mode) }

// keepOwner gives the new file the old one's owner and group where this
// process may (root); elsewhere the new file stays ours.
func keepOwner(f *os.File, st fs.FileInfo) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		f.Chown(int(s.Uid), int(s.Gid))
	}
}
