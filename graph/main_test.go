package graph

import (
	"os"
	"path/filepath"
	"testing"
)

// inputs is the absolute path of the repository's test input files (the
// model helper changes directory).
var inputs string

func TestMain(m *testing.M) {
	if wd, err := os.Getwd(); err == nil {
		inputs = filepath.Join(wd, "..", "testdata", "inputs")
	}
	os.Exit(m.Run())
}
