package dials_test

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/dials"
)

// A model written as an experiment list, read back, and image 5 of its
// scan made a model again.
func Example() {
	args, err := models.ParseArgs(strings.Fields("-cell 57 66 79 83 95 102 -default_F 100 -N 5 -distance 120 " +
		"-detpixels_f 1024 -detpixels_s 768 -Xbeam 40 -Ybeam 60 -phi 10 -osc 0.5"))
	if err != nil {
		panic(err)
	}
	m, err := args.Model(nil)
	if err != nil {
		panic(err)
	}
	el, err := dials.FromModel(m, dials.Images{Template: "image_###.cbf", First: 1, Count: 10})
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := el.Write(&buf); err != nil {
		panic(err)
	}
	back, err := dials.Read(&buf)
	if err != nil {
		panic(err)
	}
	g, err := back.Geometry(0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("panel origin %.2f %.2f %.2f mm, beam along %v\n", g.Pix0[0]*1e3, g.Pix0[1]*1e3, g.Pix0[2]*1e3, g.Beam)
	fmt.Printf("images %d…%d of %s, from %g° in steps of %g°\n", g.First, g.Last, g.Template, g.PhiStartDeg, g.OscDeg)
	m5, err := g.Model(m, 5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("image 5: φ = %.4g°, detector %v\n", m5.Crystal.Phi*180/math.Pi, m5.Detector.Convention)
	// Output:
	// panel origin -60.05 40.05 -120.00 mm, beam along [0 0 -1]
	// images 1…10 of image_###.cbf, from 10° in steps of 0.5°
	// image 5: φ = 12°, detector custom
}
