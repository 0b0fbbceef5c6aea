package formats

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// top is the repository's shared test data: inputs/ holds copies of the
// golden input files, golden/ the reference's images and manifest.json
// (copies of /work/shared/golden, see testdata/golden/README there).
const top = "../../testdata"

// ref64Dir holds outputs of the reference program made for this package
// (see its README.md).
const ref64Dir = "testdata/ref64"

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readInput(t testing.TB, name string) []byte {
	t.Helper()
	return readFile(t, filepath.Join(top, "inputs", name))
}

func readGz(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantErr checks that err is a "formats:" error mentioning msg.
func wantErr(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one containing %q", what, msg)
		return
	}
	if s := err.Error(); !strings.HasPrefix(s, "formats:") || !strings.Contains(s, msg) {
		t.Errorf("%s: error %q, want a formats: error containing %q", what, s, msg)
	}
}
