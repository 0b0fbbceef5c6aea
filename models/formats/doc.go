// Package formats reads and writes the files of nanoBragg (James Holton's
// X-ray diffraction simulator) byte for byte as the reference C program
// does: HKL structure-factor tables, the Fdump.bin cache, MOSFLM
// orientation matrices, multi-column text tables (source and stol files),
// SMV detector images, raw float images and PGM previews, plus a PNG
// preview, miniCBF images (WriteCBF, ReadCBF: the Pilatus-style header
// dxtbx reads, byte-offset compression, the MIME header with its MD5
// digest), a writer of output files that is atomic for regular files and
// correct for links, devices and standard output (Output.WriteFile), and
// size-capped opening of input files (OpenInput).
//
// # Conventions
//
// Binary data is little-endian. Images are stored fast index first: the
// pixel at (slow, fast) is data[slow*fpixels+fast], fpixels being the
// width (SMV SIZE1) and spixels the height (SIZE2).
//
// Units are those of each file:
//   - HKL and Fdump: integer Miller indices h k l and structure-factor
//     amplitudes F (electrons, unitless here); Fdump stores float64.
//   - Matrix: the nine components of a*, b*, c* in Å⁻¹ multiplied by the
//     wavelength in Å (so unitless), as MOSFLM writes them.
//   - Source files: columns X Y Z (m, a direction/position), weight, and
//     wavelength (m); ReadColumns itself is unit-agnostic.
//   - Float images: float32 photons per pixel, no header.
//   - SMV: unsigned 16-bit counts; header lengths in mm, wavelength in Å,
//     angles in degrees, XDS_ORGX/ORGY in pixels.
//   - PGM: one byte per pixel, photons times the given scale.
//   - miniCBF: signed 32-bit counts; header lengths in m, wavelength in
//     Å, angles in degrees, the beam position in pixels from the outer
//     corner of the first pixel (fast, slow).
//
// Reference behaviours reproduced: numbers are read with C's fscanf("%lg")
// or atof rules, including "nan", "inf" and hex floats; the HKL reader stops
// silently at the first token that is not a number; the HKL grid has one
// zero padding plane per axis and default_F fills only the unpadded block;
// later duplicate HKL records win; Fdump.bin's text header
// "%d %d %d %d %d %d\n\f" and padded float64 grid; the text-table reader's
// delimiters (space, tab , ; : !), skipped blank lines, NaN for missing
// columns and 0 for non-numeric words (see ReadColumns for its quirks);
// the SMV header keys, order, %g formatting, missing ';' after
// DIALS_ORIGIN, "}\f" and space padding to 512 bytes; ValueOf's
// last-occurrence, substring key lookup; the integer image's
// floorf(x*scale+adc+0.5) rounding in float32 and the PGM's truncation.
// Numbers in headers are printed by G, which matches glibc's printf("%g")
// (checked on 200,000 values, "-nan" included). The number readers were
// likewise checked against glibc's fscanf and the reference's own
// read_text_file on random inputs.
//
// Where the reference would silently produce garbage (empty or truncated
// input, non-integer Miller indices, short matrices, headers that do not fit
// in 512 bytes, truncated images) the functions return an error instead;
// each function's comment says which cases. Errors start with "formats:".
// No function panics on malformed input, and the readers take time linear
// in their input and memory bounded by it (the grid readers also by the
// caller's cell limit, checked before allocating).
package formats
