package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// inputs is the absolute path of the repository's test input files.
var inputs string

// TestMain runs the package's tests in a scratch directory: a model read
// from -hkl writes the reference's Fdump.bin cache into the working
// directory, and every later model without -hkl would read it.
func TestMain(m *testing.M) {
	wd, err := os.Getwd()
	if err == nil {
		inputs = filepath.Join(wd, "..", "testdata", "inputs")
	}
	dir, err2 := os.MkdirTemp("", "gobragg-graph-test")
	if err != nil || err2 != nil || os.Chdir(dir) != nil {
		fmt.Fprintln(os.Stderr, "graph tests: cannot set up a scratch directory:", err, err2)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
