package app

import (
	"fmt"
	"io"
	"math"

	"github.com/gobragg/gobragg/models/formats"
	"github.com/gobragg/gobragg/physics"
)

// writePrintout prints the reference's -printout block for every
// rendered pixel in scan order, or with -printout_pixel F S for that pixel
// only (nothing when it is not rendered, as the reference).
func writePrintout(w io.Writer, r *Result, lambda0 float64) {
	if r.tracer == nil {
		return
	}
	px := r.printPixel
	if px[0] >= 0 {
		if tr, ok := r.tracer.Pixel(px[0], px[1]); ok {
			writeTrace(w, &tr, lambda0)
		}
		return
	}
	d := r.Model.Detector
	for s := 0; s < d.SPixels; s++ {
		for f := 0; f < d.FPixels; f++ {
			if tr, ok := r.tracer.Pixel(f, s); ok {
				writeTrace(w, &tr, lambda0)
			}
		}
	}
}

// writeTrace writes one pixel's block in the reference's format
// (nanoBragg.c, the printout branch after each pixel): sin(θ)/λ (1/m, and
// from the pixel's direction in Å⁻¹), the last sub-pixel's position (m),
// the last fractional and rounded hkl, F_cell, F_latt and the running sum
// I, I/steps, the cached polarization, solid angle and capture fraction,
// the pixel's photons (as stored, float32) and the last orientation's
// real-space cell (Å).
func writeTrace(w io.Writer, tr *physics.Trace, lambda0 float64) {
	p := tr.Position
	twotheta := math.Atan2(math.Sqrt(p[1]*p[1]+p[2]*p[2]), p[0])
	test := math.Sin(twotheta/2) / (lambda0 * 1e10)
	g10 := func(x float64) string { return fmt.Sprintf("%15s", formats.GPrec(x, 10)) }
	round := func(x float64) int { return int(math.Ceil(x - 0.5)) }
	h := tr.HKL
	fmt.Fprintf(w, "%4d %4d : stol = %s or %s\n", tr.F, tr.S, formats.G(tr.Stol), formats.G(test))
	fmt.Fprintf(w, "at %s %s %s\n", formats.G(p[0]), formats.G(p[1]), formats.G(p[2]))
	fmt.Fprintf(w, "hkl= %f %f %f  hkl0= %d %d %d\n", h[0], h[1], h[2], round(h[0]), round(h[1]), round(h[2]))
	fmt.Fprintf(w, " F_cell=%s  F_latt=%s   I = %s\n", formats.G(tr.FCell), formats.G(tr.FLatt), formats.G(tr.Sum))
	fmt.Fprintf(w, "I/steps %s\n", g10(tr.Sum/float64(tr.Steps)))
	fmt.Fprintf(w, "polar   %s\n", g10(tr.Polar))
	fmt.Fprintf(w, "omega   %s\n", g10(tr.Omega))
	fmt.Fprintf(w, "capfrac %s\n", g10(tr.Capture))
	fmt.Fprintf(w, "pixel   %s\n", g10(float64(float32(tr.Pixel))))
	fmt.Fprintln(w, "real-space cell vectors (Angstrom):")
	fmt.Fprintf(w, "     %-10s  %-10s  %-10s\n", "a", "b", "c")
	for i, axis := range []string{"X", "Y", "Z"} {
		fmt.Fprintf(w, "%s: %11.8f %11.8f %11.8f\n", axis, tr.Cell[0][i]*1e10, tr.Cell[1][i]*1e10, tr.Cell[2][i]*1e10)
	}
}
