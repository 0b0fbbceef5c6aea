package physics

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// anonHuge is this process's memory in transparent huge pages, in kB
// (/proc/self/smaps_rollup), or -1 where it cannot be read.
func anonHuge(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return -1
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) >= 2 && string(f[0]) == "AnonHugePages:" {
			kb, err := strconv.Atoi(string(f[1]))
			if err != nil {
				t.Fatalf("smaps_rollup: %q", line)
			}
			return kb
		}
	}
	return -1
}

// TestMakeHuge: an image buffer of 16 MB, filled, is backed by huge pages
// where the kernel gives them on request (THP "always" or "madvise"): it
// holds 7 or 8 whole 2 MB pages; at least one of them must be huge.
// Without the advice, on this machine (THP "madvise"), none is. How many
// more the kernel gives depends on its free memory: with the other
// packages' tests running beside this one (go test ./...), a run got 3
// where it had asked 4, and failed CI.
func TestMakeHuge(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !(bytes.Contains(mode, []byte("[madvise]")) || bytes.Contains(mode, []byte("[always]"))) {
		t.Skipf("no transparent huge pages on request here (%q)", bytes.TrimSpace(mode))
	}
	// The advice is for memory not yet backed (adviseHuge): the earlier
	// tests' freed heap, reused, is backed by small pages already (after
	// TestPixelSimple's 70,000 orientations the image got none). Their
	// pages go back to the OS first.
	debug.FreeOSMemory()
	before := anonHuge(t)
	if before < 0 {
		t.Skip("no AnonHugePages in /proc/self/smaps_rollup")
	}
	// Up to three images, each kept while the next is made (so each is
	// another part of the heap): the heap may hand the first one memory
	// that is backed by small pages already, in spite of the release
	// above (CI on an AMD machine got none once, in the whole suite's
	// run, and 14–16 MB in each of ten runs of this test alone). Advice
	// that does not work gets none for any of them.
	var imgs [][]float64
	var after int
	for range 3 {
		img := makeHuge[float64](2 << 20) // 16 MB
		for i := range img {
			img[i] = 1
		}
		imgs = append(imgs, img)
		after = anonHuge(t)
		t.Logf("AnonHugePages %d → %d kB", before, after)
		if after-before >= 2<<10 {
			return
		}
	}
	runtime.KeepAlive(imgs)
	// None: the kernel may have had none to give just then (a run here
	// got none twice in a row, and one a minute later). A control: a
	// fresh mapping of its own, with the same advice, filled.
	if got := controlHuge(t); got < 2<<10 {
		t.Skipf("the kernel gave no huge page to a fresh mapping with the advice either (%d kB)", got)
	}
	t.Errorf("AnonHugePages grew by %d kB for three 16 MB images, want at least 2048 (one huge page); a fresh mapping got them", after-before)
}

// controlHuge is how many kB of huge pages a fresh 8 MB anonymous mapping
// advised MADV_HUGEPAGE and filled gets.
func controlHuge(t *testing.T) int {
	m, err := syscall.Mmap(-1, 0, 8<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	defer syscall.Munmap(m)
	before := anonHuge(t)
	if err := syscall.Madvise(m, syscall.MADV_HUGEPAGE); err != nil {
		t.Fatalf("madvise: %v", err)
	}
	for i := range m {
		m[i] = 1
	}
	return anonHuge(t) - before
}

// TestMakeHugeThreshold: makeHuge backs buffers below 32 MB with huge
// pages (the 4 MB float32 image of cubic 1024², one just under 32 MB)
// and leaves those of 32 MB or more (a 2048² float64 image; 64 MB, cubic
// 4096² in float32) to plain make: hugeMost's measurements.
func TestMakeHugeThreshold(t *testing.T) {
	var got []uintptr
	defer func(f func(unsafe.Pointer, uintptr)) { backHuge = f }(backHuge)
	backHuge = func(_ unsafe.Pointer, n uintptr) { got = append(got, n) }
	makeHuge[float32](1 << 20)
	makeHuge[float32](8<<20 - 1)
	makeHuge[float64](4 << 20)
	makeHuge[float32](16 << 20)
	if want := []uintptr{4 << 20, 32<<20 - 4}; !slices.Equal(got, want) {
		t.Errorf("buffers put on huge pages: %v bytes, want %v", got, want)
	}
}

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

// TestMakeHugePopulated: filling a 5 MB image from makeHuge takes almost
// no page faults, because makeHuge backed it already. 5 MB holds at most
// two whole huge pages, so at least 1 MB of it is in 4 kB pages: without
// populate, filling it takes 256 faults or more (checked: 450 here).
// Skipped where the kernel has no MADV_POPULATE_WRITE (before 5.14).
func TestMakeHugePopulated(t *testing.T) {
	probe := make([]byte, 1<<16)
	if err := populate(unsafe.Pointer(&probe[0]), uintptr(len(probe))); err != nil {
		t.Skipf("no MADV_POPULATE_WRITE here: %v", err)
	}
	// This goroutine on one thread, whose faults are counted; the fill
	// allocates nothing, so no collection work lands on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	img := makeHuge[float32](5 << 18) // 5 MB
	before := minorFaults(t)
	for i := range img {
		img[i] = 1
	}
	if n := minorFaults(t) - before; n > 32 {
		t.Errorf("%d page faults filling a populated 5 MB image, want at most 32", n)
	}
}
