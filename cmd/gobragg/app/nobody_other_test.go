//go:build !unix

package app

import "testing"

// runAsNobody is the Unix files' (there: root runs the test as nobody);
// elsewhere the test runs in place.
func runAsNobody(t *testing.T) bool { return false }
