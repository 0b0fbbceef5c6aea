//go:build !go1.27

package physics_test

// thisGoIs127: TestVectorBuild builds the Go 1.27 kernels with a second
// toolchain.
const thisGoIs127 = false
