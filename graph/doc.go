// Package graph compiles a model into a gorgonia program and runs it.
//
// A Program is an expression graph — named scalar input nodes for every
// continuous parameter (crystal.a … beam.kahn, see Program.Names), a
// parameter op (the parameter maths of package models evaluated on
// numbers, in the Folded algebra) and the fused pixel op of package
// physics — compiled once into a TapeMachine. Programs are cached by Key,
// the model's structure (image shape, oversampling, flags, convention
// axes, table bounds). A Simulator binds a model's values to the cached
// program, so new instances that differ only in parameter values cost
// microseconds (G.Let at run time) instead of a build and compile (about
// half a millisecond); Compiles counts the builds.
//
// Gradients: a Program also holds, built on first use per loss structure
// (kind, weighted or not), a gradient program: the packed parameter
// vector as an input, the fused loss op (image, loss and ∂loss/∂P in one
// pass) and G.Grad of its scalar loss by that vector: 16 nodes.
// Simulator.Gradient evaluates the parameter maths on a tape (the
// models.Rev algebra: Folded's values, bit for bit, TestPackedBits) to
// fill that vector, and after the run carries ∂loss/∂P back through the
// tape to every input. The maths as ~340 primitive gorgonia ops with
// their autograd (until this was changed) cost 53 ms of compile per
// gradient program (gorgonia's register allocation grows with the square
// of the node count) and ~0.5 ms of every run; the tape costs microseconds,
// and TestGraphLoss checks it against gorgonia's autograd through the
// primitive ops. Losses written with ordinary gorgonia ops on PixelOp's
// image differentiate through PixelOp's own backward op.
// Objective turns it into a function of the user's parameters
// (models.UserParams: Å, degrees, mm) for gradient checks and fits.
//
// # Conventions
//
//   - Inputs are float64 scalars in SI units (metres, radians); cell
//     lengths in Å, as models.CrystalParams. Structure factors are one
//     float64 vector node, crystal.Fhkl.
//   - One TapeMachine per program; runs of one program are serialised by a
//     lock, different programs run concurrently.
//   - Images are float64, slow-major, FPixels·SPixels values.
package graph
