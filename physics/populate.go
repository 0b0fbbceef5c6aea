package physics

import "unsafe"

// makePopulated is make([]T, n) for a buffer the caller fills whole at
// once (an image): the whole buffer is backed by memory before it returns
// (populate, one system call) rather than page by page, a fault each, as
// it is filled.
//
// It used to ask for transparent huge pages as well (madvise
// MADV_HUGEPAGE), which on an earlier virtual machine, where a page fault
// cost ~20 µs, took a 4096² float32 image from 17,500 faults to ~1,700.
// On the AMD EPYC virtual machine of the twentieth session (Linux 6.18,
// THP and its defrag both "madvise") the huge pages cost more than they
// saved wherever another process had just run, as in gobragg bench,
// whose runs take turns with the reference's: zeroing them was 39 % of
// the cubic 4096² simulate's samples, its system time 0.15–0.18 s. On
// small pages it fills the image from memory that process had just freed:
// 0.06–0.08 s of system time, 0.21–0.25 s in all against 0.29–0.32 s
// (time/ref 0.11 → 0.07–0.09, cubic 1024² unchanged within its noise).
// After 3 s idle the huge pages were ~0.02 s faster.
func makePopulated[T float32 | float64](n int) []T {
	s := make([]T, n)
	if n > 0 {
		_ = populate(unsafe.Pointer(&s[0]), uintptr(n)*unsafe.Sizeof(s[0]))
	}
	return s
}
