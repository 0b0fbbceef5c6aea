// Package interrupt ends gobragg cleanly on SIGINT, SIGTERM and SIGHUP:
// the temporary files of writes in progress are removed
// (formats.RemoveTemps), one line goes to stderr and the process exits
// with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), the
// shell's convention.
//
// A command with work worth saving takes the first signal itself with
// Intercept: its function should make the command stop soon (cancel a
// context, say); the command then writes what it has — its writes still
// work — and returns an *Error, which main turns into the same exit
// status. A second signal ends the process at once.
package interrupt

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gobragg/gobragg/models/formats"
)

// Signals are the signals handled.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

var (
	mu   sync.Mutex
	hook func(os.Signal)
	// exit and stderr are replaced by tests.
	exit             = os.Exit
	stderr io.Writer = os.Stderr
)

// Install starts handling the signals; stop undoes it.
func Install() (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, Signals...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				mu.Lock()
				h := hook
				hook = nil // a second signal ends the process
				mu.Unlock()
				if h != nil {
					h(s)
					continue
				}
				Exit(s)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// exiting is set while Exit runs.
var exiting atomic.Bool

// Exiting reports whether Exit is ending the process. A write that fails
// meanwhile may have failed because Exit removed its temporary file:
// main waits for Exit (WaitExit) instead of reporting that as the
// failure.
func Exiting() bool { return exiting.Load() }

// WaitExit waits while Exit runs (it ends the process; under tests, which
// replace the exit, it returns).
func WaitExit() {
	for exiting.Load() {
		time.Sleep(time.Millisecond)
	}
}

// Exit removes the temporary files of writes in progress, says so on
// stderr and ends the process with Code(s).
func Exit(s os.Signal) {
	exiting.Store(true)
	defer exiting.Store(false)
	n := formats.RemoveTemps()
	msg := ""
	if n > 0 {
		msg = fmt.Sprintf("; removed %d temporary file(s)", n)
	}
	fmt.Fprintf(stderr, "gobragg: interrupted by %s%s\n", name(s), msg)
	exit(Code(s))
}

// Intercept makes f receive the next signal instead of the process
// ending. release undoes it (call it when the work worth saving is over).
func Intercept(f func(os.Signal)) (release func()) {
	mu.Lock()
	hook = f
	mu.Unlock()
	return func() {
		mu.Lock()
		hook = nil
		mu.Unlock()
	}
}

// Error is what a command that stopped on a signal returns.
type Error struct{ Signal os.Signal }

func (e *Error) Error() string { return "interrupted by " + name(e.Signal) }

// Code is the exit status for signal s: 128 + its number.
func Code(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

// name is the signal's usual name (SIGINT, SIGTERM, …).
func name(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}
