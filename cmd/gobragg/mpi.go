//go:build mpi

package main

import (
	"github.com/gobragg/gobragg/cmd/gobragg/app"
	"github.com/gobragg/gobragg/graph/fit/mpi"
)

// With -tags mpi, gobragg starts MPI (a single rank when not run by
// mpirun) and `gobragg fit` spreads its images over the ranks.
func init() {
	startMPI = func() (func(), error) {
		c, err := mpi.Init()
		if err != nil {
			return nil, err
		}
		app.FitComm = c
		return mpi.Finalize, nil
	}
}
