package physics_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/physics"
	"github.com/gobragg/gobragg/physics/internal/lanegen"
)

// goldenCommandLines returns the golden set's command lines (and the
// input files each needs) from the manifest.
func goldenCommandLines(t *testing.T) []struct {
	ID      string   `json:"id"`
	Args    []string `json:"args"`
	Inputs  []string `json:"inputs"`
	FPixels int      `json:"fpixels"`
	SPixels int      `json:"spixels"`
} {
	b, err := os.ReadFile("../testdata/golden/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []struct {
		ID      string   `json:"id"`
		Args    []string `json:"args"`
		Inputs  []string `json:"inputs"`
		FPixels int      `json:"fpixels"`
		SPixels int      `json:"spixels"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestLanesBits: on every golden case, every lane kernel this binary and
// CPU run (AvailableVectorLanes) renders the bits of the general loops,
// in float32 (as simulate stores the image) and float64, with the same
// solid angle; and the loss rows give one loss and one gradient whatever
// the lanes.
func TestLanesBits(t *testing.T) {
	cases := goldenCommandLines(t)
	inputs := inScratch(t)
	tiers := physics.AvailableVectorLanes()
	t.Logf("lane kernels: %s", strings.Join(tiers, ", "))
	defer physics.SetVectorLanes(t, physics.VectorLanes())()
	for _, gc := range cases {
		t.Run(gc.ID, func(t *testing.T) {
			n := gc.FPixels * gc.SPixels
			if testing.Short() && n > 512*512 {
				t.Skipf("%d pixels: long case, run without -short", n)
			}
			args := strings.Join(gc.Args, " ")
			for _, in := range gc.Inputs {
				// The command lines name their input files in the working
				// directory.
				args = strings.ReplaceAll(args, " "+in, " "+filepath.Join(inputs, in))
			}
			if err := os.Remove("Fdump.bin"); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			cfg, in := kernelInputs(t, args)
			want32 := make([]float32, n)
			wantSolid := physics.RenderGeneral(&cfg, in, want32)
			want64 := make([]float64, n)
			physics.RenderGeneral(&cfg, in, want64)
			for _, tier := range tiers {
				physics.SetVectorLanes(t, tier)
				got32 := make([]float32, n)
				solid := physics.RenderSolidAngle(&cfg, in, got32)
				got64 := make([]float64, n)
				physics.Render(&cfg, in, got64)
				if math.Float64bits(solid) != math.Float64bits(wantSolid) {
					t.Errorf("%s: solid angle %.17g, general loops %.17g", tier, solid, wantSolid)
				}
				for i := range want32 {
					if math.Float32bits(got32[i]) != math.Float32bits(want32[i]) || math.Float64bits(got64[i]) != math.Float64bits(want64[i]) {
						t.Fatalf("%s: pixel %d,%d = %.9g (float32), %.17g; general loops %.9g, %.17g", tier, i%gc.FPixels, i/gc.FPixels,
							got32[i], got64[i], want32[i], want64[i])
					}
				}
			}
		})
	}
}

// TestLanesGenerated: the generated lane kernels are lanes.go's copies as
// internal/lanegen writes them now (run go generate in physics after
// changing either).
func TestLanesGenerated(t *testing.T) {
	src, err := os.ReadFile("lanes.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range lanegen.Targets {
		want, err := lanegen.Generate(src, tg)
		if err != nil {
			t.Fatalf("%s: %v", tg.File, err)
		}
		got, err := os.ReadFile(tg.File)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is not lanes.go's copy: run go generate in physics", tg.File)
		}
	}
}
