//go:build unix

package interrupt

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestIntercept: with a function intercepting, the first signal goes to
// it and the process keeps running; the second ends the process with
// 128 + the signal's number and one line on stderr.
func TestIntercept(t *testing.T) {
	codes := make(chan int, 1)
	var msg strings.Builder
	exit, stderr = func(c int) { codes <- c }, &msg
	defer func() { exit, stderr = os.Exit, os.Stderr }()
	stop := Install()
	defer stop()

	got := make(chan os.Signal, 1)
	release := Intercept(func(s os.Signal) { got <- s })
	defer release()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case s := <-got:
		if s != syscall.SIGINT {
			t.Errorf("intercepted %v", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the intercepting function did not get the signal")
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case c := <-codes:
		if c != 143 || msg.String() != "gobragg: interrupted by SIGTERM\n" {
			t.Errorf("exit %d, stderr %q", c, msg.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second signal did not end the process")
	}
}
