//go:build unix

package app

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// runAsNobody runs the test t in a copy of this test binary as the user
// nobody (uid and gid 65534) and fails t if it does not pass there: for a
// check of what an unprivileged user may not do, which root, bypassing
// file permissions, cannot see. It returns false, having done nothing,
// when this process is not root (run the test in place then).
func runAsNobody(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	if os.Getenv("GOBRAGG_AS_NOBODY") != "" {
		t.Fatal("still root in the child meant to run as nobody")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	// The copy and nobody's temporary directory must be reachable by
	// nobody: t.TempDir's directories are root's, mode 0700.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o777) // (past the umask)
	bin := filepath.Join(dir, "app.test")
	b, err := os.ReadFile(exe)
	if err == nil {
		err = os.WriteFile(bin, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBRAGG_AS_NOBODY=1", "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		// The child never ran: this root may not switch users (a user
		// namespace without uid 65534, a rootless container).
		t.Skipf("cannot run the test as nobody here: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	return true
}
