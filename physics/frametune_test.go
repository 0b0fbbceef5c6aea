//go:build goexperiment.simd && amd64

package physics

import (
	"testing"
	"time"
	"unsafe"
)

// frameAt is where the calling function's frame sits, in 8-byte steps
// modulo 64 bytes (as frameTune.run measures its own).
//
//go:noinline
func frameAt() int {
	var probe byte
	return int(uintptr(unsafe.Pointer(&probe)) / 8 % frameSlots)
}

// deeper calls f one frame further down the stack (pad's, holding 32
// bytes).
func deeper(f func()) { pad[[4]uint64](f) }

// TestFrameTune: framePad's paddings put a called function at every
// offset modulo 64 bytes, one 8-byte step apart; a frameTune whose
// "kernel" is slow at all offsets but one keeps that one after its
// trials, and calls the kernel there from callers at other depths too;
// every call runs the kernel once.
func TestFrameTune(t *testing.T) {
	// The "kernel": slow (200 µs) unless its frame is at the offset fast
	// (10 µs but the first time); with probe set it only notes its offset.
	var ft frameTune
	probe, last, fast := true, 0, 0
	calls, fastCalls := 0, 0
	kernel := func() {
		here := frameAt()
		if probe {
			last = here
			return
		}
		calls++
		d := 200 * time.Microsecond
		if here == fast {
			// (The first call there is the slowest of all: the least
			// time of an offset's calls counts, not the most or the
			// last.)
			d, fastCalls = 10*time.Microsecond, fastCalls+1
			if fastCalls == 1 {
				d = 400 * time.Microsecond
			}
		}
		for start := time.Now(); time.Since(start) < d; {
		}
	}
	var at [frameSlots]int
	for q := range frameSlots {
		framePad(q, kernel)
		at[q] = last
	}
	for q := range frameSlots {
		if (at[q]+q)%frameSlots != at[0] {
			t.Fatalf("framePad's offsets %v: not one 8-byte step apart", at)
		}
	}
	fast, probe = at[5], false
	n := frameSlots * frameTries
	for range n {
		ft.run(64, kernel)
	}
	if calls != n || ft.pick.Load() == 0 {
		t.Fatalf("%d calls: the kernel ran %d times, offset kept %d", n, calls, ft.pick.Load()-1)
	}
	if fastCalls != frameTries {
		t.Errorf("the trials ran the kernel at the fast offset %d times, want %d", fastCalls, frameTries)
	}
	before := fastCalls
	ft.run(64, kernel)
	deeper(func() { ft.run(64, kernel) })
	deeper(func() { deeper(func() { ft.run(64, kernel) }) })
	if fastCalls != before+3 || calls != n+3 {
		t.Errorf("after the trials: %d of 3 calls at the fast offset (%d calls)", fastCalls-before, calls-n)
	}
}
