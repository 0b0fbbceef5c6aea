// Package models holds gobragg's validated configuration — crystal, beam
// and detector — and the parameter maths that turns user parameters into
// what the pixel physics reads: real-space cell vectors and a placed
// detector frame.
//
// The maths is written once, generically, against the small algebra Alg:
// Float evaluates it on numbers (validation, headers, the automatic
// oversampling choice), Graph emits gorgonia scalar nodes, so autograd
// carries gradients from the fused pixel op back to the user's parameters,
// and Folded evaluates it on numbers with Graph's constant folds, giving
// the graph's bits (signed zeros included) for the forward program.
//
// ParseArgs reads nanoBragg's own command lines; Args.Model converts them
// once into SI units and reproduces the reference program's decisions
// (beam-centre bookkeeping per convention, the pivot that the convention
// forces after parsing, φ step rules, the crystal size, reading the
// structure-factor cache). Setup describes a model with Go values instead
// and builds it by the same rules. Building a model writes no file: the
// reference's Fdump.bin cache is written by Args.WriteDump, which only the
// gobragg simulate command calls. Flags lists every flag ParseArgs
// accepts, with its help text; Model.SMVHeader is the header the reference
// writes for a model's SMV images.
//
// # Conventions
//
//   - Units: SI inside (metres, radians, photons/m²); user-facing names
//     carry their unit (DistanceMM, LambdaA, PhiDeg). Cell lengths in
//     CrystalParams are Å and the A matrix is as read (Å⁻¹·λ); both are
//     converted inside Reciprocal/RealVectors.
//   - Frame: the lab frame of the convention. MOSFLM/DENZO: beam along +x,
//     fast axis +z, slow axis −y. XDS/DIALS: beam +z, fast +x, slow +y.
//     ADXV: beam +z, fast +x, slow −y. CUSTOM: the user's vectors.
//   - Rotations: RotateXYZ applies x, then y, then z (right-handed);
//     misset rotates the reciprocal vectors, detector_rot the detector
//     axes; the two-theta swing follows about TwoThetaAxis.
//   - Pixels: fast index varies fastest; pixel (f, s) has its centre at
//     Pix0 + (f+½)·pixel·F + (s+½)·pixel·S.
//
// Where gobragg departs from the reference on purpose: flags are matched by
// exact spelling (the reference's substring matching makes -twotheta_axis
// also set -twotheta and -misset_seed also set -misset); -pix0_vector places
// the detector (the reference parses it and then overwrites it); malformed
// numbers are errors rather than atof's zero; values no experiment has or
// whose arithmetic would overflow are refused (non-finite numbers, bounds
// in the Validate methods and NewDetector, MinVolumeFraction, MaxF, a
// detector that does not face the forward beam); and Args.Model checks
// the work and memory the model implies against Limits (-max_work,
// -max_memory) before reading structure factors or allocating their grid.
package models
