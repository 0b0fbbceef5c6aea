package formats

import (
	"fmt"
	"io"
)

// ReadMatrix reads the first 9 numbers of a MOSFLM-style orientation matrix
// file, in file order: a*x b*x c*x a*y b*y c*y a*z b*z c*z. That is, row i
// holds the x, y or z component and the columns are the reciprocal vectors
// a*, b*, c*. The values are as in the file, i.e. multiplied by the
// wavelength (in Å); the caller divides by λ. Numbers are read as
// fscanf("%lg") reads them and anything after the ninth is ignored, as in
// the reference. Fewer than 9 numbers is an error (the reference would only
// print a warning and keep stale values).
func ReadMatrix(r io.Reader) ([9]float64, error) {
	var m [9]float64
	s := newReaderScanner(r)
	for i := range m {
		v, ok := s.next()
		if err := s.failure(); err != nil {
			return m, fmt.Errorf("formats: matrix: %w", err)
		}
		if !ok {
			if s.skipSpace() {
				return m, fmt.Errorf("formats: matrix line %d: found %d of 9 numbers, then %s", s.line, i, s.token())
			}
			return m, fmt.Errorf("formats: matrix: found %d of 9 numbers before end of input", i)
		}
		m[i] = v
	}
	return m, nil
}
