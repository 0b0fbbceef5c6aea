package physics

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page with 4 kB pages
// (amd64, and arm64's usual kernels; with other page sizes the advice
// below covers no page or changes nothing).
const hugePage = 2 << 20

// adviseHuge asks Linux to back the whole huge pages inside the n bytes
// at p with transparent huge pages (madvise MADV_HUGEPAGE: for systems
// whose THP setting is "madvise", the usual default), before anything
// touches them. Fresh heap memory is not yet backed: each 4 kB page
// costs a page fault on its first write, and in the virtual machine this
// was measured on a fault costs ~20 µs, so a 4096² float32 image took
// 16,000 faults (~0.1–0.2 s, a third of the render) where it now takes a
// few dozen. The advice only covers memory the caller is about to fill;
// failure (another OS setting, a kernel without THP) changes nothing but
// speed.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	a := uintptr(p)
	lo := (a + hugePage - 1) &^ (hugePage - 1)
	hi := (a + n) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, lo-a)), hi-lo), syscall.MADV_HUGEPAGE)
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which the
// syscall package does not name.
const madvPopulateWrite = 23

// populate backs the n bytes at p with memory now, in one system call,
// as a write to each page would (madvise MADV_POPULATE_WRITE; huge pages
// where adviseHuge asked for them). In the virtual machine this was
// measured on, a page fault costs ~11 µs and populating ~0.8 µs a page:
// the parts of a 4 MB image outside its one whole huge page took ~500
// faults, 6 ms of a 56 ms cubic 1024² simulate process. Pages already
// backed are left as they are, the bytes are unchanged; older kernels
// answer EINVAL, and the pages then fault in as before.
func populate(p unsafe.Pointer, n uintptr) error {
	a := uintptr(p)
	lo := a &^ (pageSize - 1)
	return syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, lo-a)), a+n-lo), madvPopulateWrite)
}

// pageSize is the base page (the populate range is rounded to it).
var pageSize = uintptr(syscall.Getpagesize())
