package physics

import (
	"fmt"
	"reflect"
	"unsafe"
)

// The lane kernels' data sits at 64-byte boundaries. A vector of eight
// float64 values that crosses a cache line is two loads (or stores) for
// the processor, and Go places its heap objects only at multiples of
// 8 bytes: an object that holds pointers even starts 8 bytes into its
// slot (the allocator's header), so that every 64-byte vector in such a
// struct crossed a line. So it was for laneReps (8 bytes past a line;
// a load of it in every group of terms), the forward rows' geometry
// scratch (56: four stores and four loads per vector of pixels) and the
// loss rows' ∂L/∂I (8). Plain float64 slices of a kilobyte or more
// happen to start on a line (the allocator's size classes); alignedMake
// makes sure of it for all. On an Intel Xeon (AVX-512, graph/internal/turns,
// one CPU): forward 0.97× at cubic 1024² and 0.99× with 10 domains, the
// gradient 0.97–1.00×, within the machine's noise; TestLaneDataAligned
// checks the kernels' data.

// lineBytes is the alignment of the lane kernels' data: a cache line,
// one 512-bit vector.
const lineBytes = 64

// alignedMake returns n zeroed values of T from a 64-byte boundary. T
// must hold no pointers: the memory is allocated as float64 values, which
// the garbage collector does not scan, so what a pointer there pointed
// to could be freed while in use. It panics for a T that does (a
// programming error, found by the first run of the code that asks).
func alignedMake[T any](n int) []T {
	if t := reflect.TypeFor[T](); !pointerFree(t) {
		panic(fmt.Sprintf("physics: alignedMake of %v, which holds pointers", t))
	}
	var z T
	size := int(unsafe.Sizeof(z))
	b := make([]float64, (n*size+7)/8+lineBytes/8-1)
	off := (lineBytes - int(uintptr(unsafe.Pointer(&b[0]))%lineBytes)) % lineBytes / 8
	return unsafe.Slice((*T)(unsafe.Pointer(&b[off])), n)
}

// pointerFree reports whether values of t hold no pointers (slices,
// strings, maps, channels, functions, interfaces and pointers of any
// kind are pointers to the garbage collector).
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() == 0 || pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	}
	return false
}
