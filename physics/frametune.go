//go:build goexperiment.simd && amd64

package physics

import (
	"math"
	"sync/atomic"
	"time"
	"unsafe"
)

// frameTune runs a vector kernel with its stack frame at the
// offset, modulo 64 bytes, where it runs fastest, which it finds by
// trying them all on the kernel's first calls.
//
// Go spills a 512-bit value to an 8-byte-aligned stack slot, so where a
// kernel's frame sits decides which of its spill slots split across
// cache lines (64 bytes on the Intel machine; on an AMD EPYC, Zen 4,
// which moves a 512-bit value as two 256-bit halves, 32 bytes). That
// position follows from every frame between a worker goroutine's start
// and the kernel, so any change to them moved it, and the same kernel
// code took up to 1.3× as long at one offset as at another (turns, the
// issue's mosaic case; physics/doc.go has the measurements). The results
// are the same at every offset: only their time differs.
//
// A frameTune's kernel is called through framePad, which puts 0–56 bytes
// between the caller's frame and the kernel's; run measures where its
// own frame sits, so that the kernel's offset is the same for every
// caller. The first frameSlots·frameTries calls try the offsets in turn
// (each call's time per pixel; the least of each offset's calls counts,
// which the machine's other work can only make longer); when the last of
// them has ended, the fastest is kept for the rest of the process.
type frameTune struct {
	pick  atomic.Int32 // 1 + the offset kept; 0 while trying
	calls atomic.Int64 // trials begun
	done  atomic.Int64 // trials ended
	best  [frameSlots]atomic.Int64
}

const (
	frameSlots = 8  // offsets, in 8-byte steps over 64 bytes
	frameTries = 24 // calls of each offset before one is kept
)

// The vector gradient kernels' tuners (the terms').
var (
	tuneTermsGrad512, tuneTermsGradAxes512, tuneTermsGradInterp512 frameTune
	tuneTermsGradCrystal512, tuneTermsGradAxesCrystal512           frameTune
	tuneTermsGrad2, tuneTermsGradAxes2, tuneTermsGradInterp2       frameTune
	tuneTermsGradCrystal2, tuneTermsGradAxesCrystal2               frameTune
	tuneTermsGradNoN512, tuneTermsGradAxesNoN512                   frameTune
	tuneTermsGradNoN2, tuneTermsGradAxesNoN2                       frameTune
	tuneTermsGradNoSigma512, tuneTermsGradAxesNoSigma512           frameTune
	tuneTermsGradNoSigma2, tuneTermsGradAxesNoSigma2               frameTune
	tuneTermsGradShape512, tuneTermsGradShape2                     frameTune
	tuneTermsGradDmin512, tuneTermsGradDmin2                       frameTune
)

// The vector forward kernels' tuners.
var (
	tunePixelsAxesInterp512, tunePixelsAxesInterp2 frameTune
	tunePixelsAxesMany512, tunePixelsMany512       frameTune
	tunePixelsAxesMany2, tunePixelsMany2           frameTune
	tunePixelsShape512, tunePixelsShape2           frameTune
	tunePixelsAxesDmin512, tunePixelsAxesDmin2     frameTune
	tunePixelsAxesCurved512, tunePixelsAxesCurved2 frameTune
	tunePixelsAxesRules512, tunePixelsAxesRules2   frameTune
	tunePixelsAxes512, tunePixels512               frameTune
	tunePixelsAxes2, tunePixels2                   frameTune
)

// run calls f, a kernel call over np pixels, through framePad at the
// tuned offset (while trying, at the next offset to try).
//
//go:noinline
func (ft *frameTune) run(np int, f func()) {
	var probe byte
	// Where this frame sits, in 8-byte steps modulo 64 bytes: framePad's
	// padding q puts the kernel at the offset a = here − q (modulo
	// frameSlots, up to a constant of this build's frame sizes).
	here := int(uintptr(unsafe.Pointer(&probe)) / 8 % frameSlots)
	if p := ft.pick.Load(); p != 0 {
		framePad((here-int(p-1)+frameSlots)%frameSlots, f)
		return
	}
	c := ft.calls.Add(1) - 1
	if c >= frameSlots*frameTries {
		// The trials are ending on other goroutines: the offset 0
		// meanwhile.
		framePad(here, f)
		return
	}
	// The offsets in turn, each round of them starting one further on,
	// so that no offset always meets the same one of a repeating pattern
	// of calls (a row's chunks of 256 pixels and then fewer, say).
	a := int((c + c/frameSlots) % frameSlots)
	start := time.Now()
	framePad((here-a+frameSlots)%frameSlots, f)
	per := int64(time.Since(start)) * 1024 / int64(max(np, 1))
	for {
		old := ft.best[a].Load()
		if old != 0 && old <= per || ft.best[a].CompareAndSwap(old, max(per, 1)) {
			break
		}
	}
	if ft.done.Add(1) == frameSlots*frameTries {
		ft.choose()
	}
}

// choose keeps the offset whose fastest call took the least time per
// pixel.
func (ft *frameTune) choose() {
	best, at := int64(math.MaxInt64), 0
	for a := range ft.best {
		if v := ft.best[a].Load(); v != 0 && v < best {
			best, at = v, a
		}
	}
	ft.pick.Store(int32(at + 1))
}

// framePad calls f with q·8 bytes more stack between this frame and f's
// than with q = 0 (pad's frame holds an array of q + 1 words:
// TestFrameTune checks that the q put f at every offset).
func framePad(q int, f func()) {
	switch q {
	case 0:
		pad[[1]uint64](f)
	case 1:
		pad[[2]uint64](f)
	case 2:
		pad[[3]uint64](f)
	case 3:
		pad[[4]uint64](f)
	case 4:
		pad[[5]uint64](f)
	case 5:
		pad[[6]uint64](f)
	case 6:
		pad[[7]uint64](f)
	default:
		pad[[8]uint64](f)
	}
}

// pad calls f below a frame that holds an A: each array size is a shape
// of its own, so each instantiation has its own frame size.
//
//go:noinline
func pad[A any](f func()) {
	var a A
	keepPad(unsafe.Pointer(&a))
	f()
}

// keepPad writes to a pad's array, which keeps it (and the frame's size)
// from being optimised away.
//
//go:noinline
func keepPad(p unsafe.Pointer) { *(*byte)(p) = 0 }
