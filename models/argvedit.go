package models

import (
	"math"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/models/formats"
)

// valueCount is how many of the arguments after argv[i] belong to flag
// spec sp there, as ParseArgs reads them.
func valueCount(argv []string, i int, sp flagSpec) int {
	if sp.n < 0 {
		n := 0
		for j := i + 1; j < len(argv) && j <= i+6; j++ {
			if _, err := strconv.ParseFloat(argv[j], 64); err != nil {
				break
			}
			n++
		}
		return n
	}
	if argv[i] == "-misset" && i+1 < len(argv) && strings.HasPrefix(argv[i+1], "rand") {
		return 1
	}
	return min(sp.n, len(argv)-i-1)
}

// ReplaceFlag returns a copy of argv without any occurrence of flag (or an
// alias of it) and its values, with flag and values appended; drop lists
// further flags to remove (with their values) without replacement.
func ReplaceFlag(argv []string, flag string, values []string, drop ...string) []string {
	byName := map[string]flagSpec{}
	for _, sp := range specs {
		for _, n := range sp.names {
			byName[n] = sp
		}
	}
	remove := map[string]bool{}
	for _, f := range append([]string{flag}, drop...) {
		if sp, ok := byName[f]; ok {
			for _, n := range sp.names {
				remove[n] = true
			}
		}
	}
	var out []string
	for i := 0; i < len(argv); i++ {
		sp, ok := byName[argv[i]]
		if !ok {
			out = append(out, argv[i])
			continue
		}
		n := valueCount(argv, i, sp)
		if !remove[argv[i]] {
			out = append(out, argv[i:i+1+n]...)
		}
		i += n
	}
	return append(append(out, flag), values...)
}

// Argv returns argv (the command line m was built from) rewritten to set
// the user parameters names to m's values: a ready-to-run command line for
// m. An orientation correction is folded into -misset (the command line
// has no flag of its own for it). N is written rounded (the reference reads whole numbers); rounded lists
// the parameters that were.
func (m *Model) Argv(argv []string, names []string) (out []string, rounded []string) {
	g := func(name string) string {
		v, _ := m.Get(name)
		return strconv.FormatFloat(v, 'g', 12, 64)
	}
	out = append([]string(nil), argv...)
	done := map[string]bool{}
	for _, n := range names {
		switch n {
		case "a", "b", "c", "alpha", "beta", "gamma":
			if !done["cell"] {
				out = ReplaceFlag(out, "-cell", []string{g("a"), g("b"), g("c"), g("alpha"), g("beta"), g("gamma")})
				done["cell"] = true
			}
		case "misset_x", "misset_y", "misset_z", "orient_x", "orient_y", "orient_z":
			if !done["misset"] {
				ms := m.Crystal.TotalMisset()
				f := func(v float64) string { return strconv.FormatFloat(v*180/math.Pi, 'g', 12, 64) }
				out = ReplaceFlag(out, "-misset", []string{f(ms[0]), f(ms[1]), f(ms[2])}, "-misset_seed")
				done["misset"] = true
			}
		case "Na", "Nb", "Nc":
			v, _ := m.Get(n)
			r := math.Max(1, math.Round(v))
			if r != v {
				rounded = append(rounded, n)
			}
			out = ReplaceFlag(out, "-"+n, []string{formats.G(r)})
		default:
			flag := map[string]string{"phi": "-phi", "mosaic_spread": "-mosaic", "distance": "-distance",
				"close_distance": "-close_distance", "xbeam": "-Xbeam", "ybeam": "-Ybeam", "rotx": "-detector_rotx",
				"roty": "-detector_roty", "rotz": "-detector_rotz", "twotheta": "-twotheta", "lambda": "-lambda",
				"fluence": "-fluence", "polar": "-polar", "default_F": "-default_F"}[n]
			var drop []string
			switch n {
			case "lambda":
				drop = []string{"-energy"}
			case "fluence":
				drop = []string{"-flux", "-exposure", "-beamsize"}
			}
			if flag != "" {
				out = ReplaceFlag(out, flag, []string{g(n)}, drop...)
			}
		}
	}
	return out, rounded
}
