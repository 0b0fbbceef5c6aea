//go:build !linux

package physics

import "unsafe"

// populate does nothing outside Linux: pages fault in on first use.
func populate(unsafe.Pointer, uintptr) error { return nil }
