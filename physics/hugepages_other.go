//go:build !linux

package physics

import "unsafe"

// adviseHuge is a no-op outside Linux (see hugepages_linux.go).
func adviseHuge(unsafe.Pointer, uintptr) {}

// populate does nothing outside Linux: pages fault in on first use.
func populate(unsafe.Pointer, uintptr) error { return nil }
