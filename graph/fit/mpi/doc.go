// Package mpi spreads a fit's images over MPI ranks: Comm is a fit.Comm
// over MPI_COMM_WORLD, through a small cgo layer over Open MPI (Debian's
// libopenmpi-dev). It is built only with the mpi build tag
// (go build -tags mpi); without it the package is empty and gobragg stays
// pure Go.
//
// # Conventions
//
//   - Init starts MPI once per process and Finalize ends it; every rank
//     runs the same program on the same inputs (mpirun -np K gobragg fit …).
//   - All MPI calls run on one locked OS thread (MPI_THREAD_FUNNELED), so
//     the caller's goroutines may call Comm from anywhere, one at a time.
package mpi
