package graph

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gobragg/gobragg/models"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestPackedBits: the forward program evaluates the parameter maths on
// numbers (Packed, paramsOp), the gradient programs on a tape (packRev),
// and as primitive gorgonia ops (emit) they are what autograd can take;
// all three give the same packed vector bit for bit, on
// every golden command line and on structures that reach the folds with
// signed zeros (−0 angles, the Float algebra would give +0 where the graph
// gives −0), matrix orientations, rotated and two-theta detectors.
func TestPackedBits(t *testing.T) {
	b, err := os.ReadFile("../testdata/golden/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		ID     string   `json:"id"`
		Args   []string `json:"args"`
		Inputs []string `json:"inputs"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	argvs := map[string][]string{
		"-0 angles": triclinic("-misset", "-0", "0", "-0", "-detector_rotx", "-0", "-detector_roty", "-0",
			"-detector_rotz", "-0", "-twotheta", "-0", "-phi", "-0"),
		"rotated, two-theta": triclinic("-detector_rotx", "3", "-detector_roty", "-4", "-detector_rotz", "5",
			"-twotheta", "10", "-pivot", "sample"),
		"matrix": {"-hkl", filepath.Join(inputs, "P1.hkl"), "-matrix", filepath.Join(inputs, "A.mat"),
			"-lambda", "6.2", "-N", "5", "-distance", "100", "-detpixels", "40", "-pixel", "0.4"},
		"matrix, cell": {"-hkl", filepath.Join(inputs, "P1.hkl"), "-matrix", filepath.Join(inputs, "A.mat"),
			"-cell", "70", "80", "90", "75", "85", "95", "-lambda", "6.2", "-N", "5", "-distance", "100",
			"-detpixels", "40", "-pixel", "0.4", "-xds", "-twotheta", "-0"},
	}
	for _, c := range cases {
		argv := append([]string(nil), c.Args...)
		for i, a := range argv {
			for _, in := range c.Inputs {
				if a == in {
					argv[i] = filepath.Join(inputs, in)
				}
			}
		}
		argvs[c.ID] = argv
	}
	for id, argv := range argvs {
		m := model(t, argv...)
		s, err := New(m)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		g := G.NewGraph()
		in, tables, pv, err := emit(g, KeyOf(m), m)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		var v G.Value
		G.Read(pv, &v)
		vm := G.NewTapeMachine(g)
		if err := s.let(in, tables); err != nil {
			t.Fatal(err)
		}
		if err := vm.RunAll(); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		vm.Close()
		graph := v.(tensor.Tensor).Data().([]float64)
		got := Packed(m)
		if len(got) != len(graph) {
			t.Fatalf("%s: %d packed values, graph %d", id, len(got), len(graph))
		}
		var r models.Rev
		rev, _ := packRev(&r, m, s.values)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(graph[i]) {
				t.Errorf("%s: packed[%d] = %g, graph %g", id, i, got[i], graph[i])
			}
			if math.Float64bits(rev[i].V) != math.Float64bits(graph[i]) {
				t.Errorf("%s: packed[%d] on the tape (gradient programs) = %g, graph %g", id, i, rev[i].V, graph[i])
			}
		}
	}
}
