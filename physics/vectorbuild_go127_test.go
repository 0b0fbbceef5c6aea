//go:build go1.27

package physics_test

// thisGoIs127: this Go builds the Go 1.27 kernels itself (TestVectorBuild
// needs no second toolchain).
const thisGoIs127 = true
