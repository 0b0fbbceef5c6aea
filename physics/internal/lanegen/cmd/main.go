// Command lanegen writes the physics package's lane kernels from lanes.go
// (go generate in physics runs it there).
package main

import (
	"log"
	"os"

	"github.com/gobragg/gobragg/physics/internal/lanegen"
)

func main() {
	src, err := os.ReadFile("lanes.go")
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range lanegen.Targets {
		out, err := lanegen.Generate(src, t)
		if err != nil {
			log.Fatalf("%s: %v", t.File, err)
		}
		if err := os.WriteFile(t.File, out, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
