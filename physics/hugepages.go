package physics

import "unsafe"

// makeHuge is make([]T, n) for a buffer the caller fills whole at once
// (an image): where the OS has transparent huge pages on request, the
// buffer's whole 2 MB pages are backed by them (adviseHuge), and the
// whole buffer is backed before it returns (populate) rather than page
// by page as it is filled.
func makeHuge[T float32 | float64](n int) []T {
	s := make([]T, n)
	if n > 0 {
		p, size := unsafe.Pointer(&s[0]), uintptr(n)*unsafe.Sizeof(s[0])
		adviseHuge(p, size)
		_ = populate(p, size)
	}
	return s
}
