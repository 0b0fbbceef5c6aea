// Package dials reads and writes DIALS experiment lists (.expt, the JSON
// that dxtbx serialises: beam, detector, goniometer, scan, crystal and
// image set) and converts them exactly to and from gobragg models.
//
// FromModel describes a model (one image, or a rotation series with
// Images) as a list that dials.import, dials.find_spots and dials.index
// take as it is; ReadFile, ExperimentList.Geometry and Geometry.Model go
// back, from a list gobragg or DIALS (dials.index, dials.refine) wrote, to
// a model whose image is that geometry's.
//
// # Conventions
//
//   - DIALS frame: the beam travels along −z (dxtbx's beam "direction"
//     points back to the source), the rotation axis is along +x for the
//     lists gobragg writes. A model's lab frame is turned into it by the
//     rotation that takes the model's beam to −z and its spindle to +x (a
//     signed permutation for the standard conventions: MOSFLM's x, y, z
//     become DIALS' −z, y, x, as the reference's DIALS_ORIGIN header says).
//   - Units: lists hold mm, Å, degrees and 1/mm; Geometry holds m, 1/m
//     and degrees (scan angles); models hold SI units.
//   - Panel origin: the outer corner of the first pixel, in both programs;
//     pixel (f, s) has its centre at origin + (f+½)·pixel·fast +
//     (s+½)·pixel·slow.
//   - Crystal: real-space vectors at φ = 0. The rotation at angle φ is
//     right-handed about the axis in both programs; image n of a scan
//     starts at oscillation start + (n − first)·width and spans width, as
//     gobragg's -phi and -osc (whose -phisteps samples start at -phi).
//   - Exact numbers: every number is written so that reading it back
//     gives the same float64 (see affine.number); a list written from a
//     model reads back to the same model geometry and the same image, bit
//     for bit (FrameFix and RealFix absorb the rounding of placing a
//     detector and inverting a crystal). dxtbx ignores the one field it
//     does not know, a panel's gobragg_normal.
//
// What a list cannot carry, and a model read from one takes from its base
// model: structure factors, crystal size (N) and shape, mosaic spread,
// fluence, φ steps per image, oversampling, sensor layers, the reference's
// -cell construction (a list holds the vectors it produced; for the
// -round_xtal, -gauss_xtal and -tophat_spots shapes, which also use the
// reference's slightly inconsistent reciprocal vectors of a -cell, the
// image read back differs in the last digits), several sources, and
// -nopolar.
package dials
