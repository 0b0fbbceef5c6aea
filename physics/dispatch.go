package physics

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// laneTier names a set of lane kernels: the scalar one (lanes.go as it
// is) or a vector copy of it (lanes_*_gen.go) for a CPU feature.
type laneTier int32

const (
	tierScalar laneTier = iota
	tierAVX2
	tierAVX512
)

var tierNames = [...]string{tierScalar: "scalar", tierAVX2: "avx2", tierAVX512: "avx512"}

// tier is the lane kernels new kernels take: the widest the CPU runs
// (supportedTiers' last), unless UseVectorLanes chose another.
var tier atomic.Int32

func init() {
	t := supportedTiers()
	tier.Store(int32(t[len(t)-1]))
}

func currentTier() laneTier { return laneTier(tier.Load()) }

// VectorLanes names the lane kernels that the usual structure runs
// through: "avx512" (8 float64 lanes; a binary built with
// GOEXPERIMENT=simd on a CPU with AVX-512 F, CD, BW, DQ and VL), "avx2" (4 lanes;
// such a binary on an AVX2 CPU) or "scalar". Every choice gives the
// same bits.
func VectorLanes() string { return tierNames[currentTier()] }

// AvailableVectorLanes lists the lane kernels this binary can run on this
// CPU, narrowest first.
func AvailableVectorLanes() []string {
	var names []string
	for _, t := range supportedTiers() {
		names = append(names, tierNames[t])
	}
	return names
}

// UseVectorLanes selects the lane kernels (one of AvailableVectorLanes)
// for the kernels created from now on; tests and benchmarks compare them.
func UseVectorLanes(name string) error {
	for _, t := range supportedTiers() {
		if tierNames[t] == name {
			tier.Store(int32(t))
			return nil
		}
	}
	return fmt.Errorf("physics: vector lanes %q not available here (available: %s)", name, strings.Join(AvailableVectorLanes(), ", "))
}
