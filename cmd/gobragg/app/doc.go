// Package app holds the gobragg subcommands as library functions that
// write to an io.Writer, so that cmd/gobragg/main.go stays a thin shell and
// tests can run a command line in-process.
//
// # Conventions
//
// Command lines are nanoBragg's own (single-dash flags, the reference's
// units: mm, degrees, Å). Images are float32 photons per pixel, slow-major
// (value(slow, fast) = img[slow*fpixels+fast]). Errors wrapping
// models.ErrUsage are the user's command-line mistakes.
package app
