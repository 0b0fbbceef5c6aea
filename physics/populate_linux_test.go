package physics

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// rusageThread is Linux's RUSAGE_THREAD, which the syscall package does
// not name.
const rusageThread = 1

// minorFaults is the calling thread's minor page faults so far
// (getrusage): the garbage collector's threads do not count.
func minorFaults(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return ru.Minflt
}

// TestMakePopulated: filling a 5 MB image from makePopulated takes almost
// no page faults, because makePopulated backed it already: without
// populate, filling it takes one per 4 kB page it has not used before
// (checked: 1,280 here, alone and in the package's run).
// Skipped where the kernel has no MADV_POPULATE_WRITE (before 5.14).
func TestMakePopulated(t *testing.T) {
	probe := make([]byte, 1<<16)
	if err := populate(unsafe.Pointer(&probe[0]), uintptr(len(probe))); err != nil {
		t.Skipf("no MADV_POPULATE_WRITE here: %v", err)
	}
	// This goroutine on one thread, whose faults are counted; the fill
	// allocates nothing, so no collection work lands on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	img := makePopulated[float32](5 << 18) // 5 MB
	before := minorFaults(t)
	for i := range img {
		img[i] = 1
	}
	if n := minorFaults(t) - before; n > 32 {
		t.Errorf("%d page faults filling a populated 5 MB image, want at most 32", n)
	}
}
