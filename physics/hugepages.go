package physics

import "unsafe"

// makeHuge is make([]T, n) for a buffer the caller fills whole at once
// (an image): where the OS has transparent huge pages on request, the
// buffer's whole 2 MB pages are backed by them (adviseHuge), and the
// whole buffer is backed before it returns (populate) rather than page
// by page as it is filled; unless it is hugeMost bytes or more, when it
// is left to plain make.
func makeHuge[T float32 | float64](n int) []T {
	s := make([]T, n)
	if n > 0 {
		if size := uintptr(n) * unsafe.Sizeof(s[0]); size < hugeMost {
			backHuge(unsafe.Pointer(&s[0]), size)
		}
	}
	return s
}

// backHuge advises the n bytes at p onto huge pages and backs them
// (makeHuge; a variable so that a test can see which buffers get it).
var backHuge = func(p unsafe.Pointer, n uintptr) {
	adviseHuge(p, n)
	_ = populate(p, n)
}

// hugeMost is the size from which makeHuge leaves a buffer on small
// pages. On the AMD EPYC virtual machine of the twentieth session
// (Linux 6.18, THP and its defrag "madvise"), in whole simulate processes
// run right after the reference's (as gobragg bench runs them), the
// 64 MB image of cubic 4096² on huge pages took 0.29–0.32 s in all and
// 0.15–0.18 s in the kernel (zeroing them was 39 % of the samples), on
// small pages 0.21–0.25 s and 0.06–0.08 s (time/ref 0.11 → 0.07–0.09):
// the small pages reuse memory the other process had just freed. The
// 16 MB image of cubic 2048² took 0.05 s on huge pages, 0.06–0.07 s on
// small ones, and in one process rendering again and again (series,
// graph's turns harness) huge pages keep a freed image's memory backed
// for the next: the cubic 1024² forward took 1.06–1.19× as long on small
// pages (turns, 30–40 rounds), cubic 4096²'s 1.03×.
const hugeMost = 32 << 20
