package models_test

import (
	"fmt"

	"github.com/gobragg/gobragg/models"
)

// A model from Go values: a 100 Å cubic crystal 0.8 µm on each edge, at
// 6.2 Å, on 256² pixels of 0.1 mm at 100 mm (the golden case
// size__xtal_size_cubic). Model applies the reference's rules: the crystal
// size sets N, N sets the automatic oversampling.
func ExampleSetup() {
	s := models.Setup{
		Cell:     [6]float64{100, 100, 100, 90, 90, 90},
		SizeMM:   [3]float64{0.0008, 0.0008, 0.0008},
		DefaultF: 100,
		LambdaA:  6.2,
		Pixels:   [2]int{256, 256},
	}
	m, err := s.Model(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cells:", m.Crystal.Na, m.Crystal.Nb, m.Crystal.Nc)
	fmt.Println("oversampling:", m.Detector.Oversample)
	fmt.Printf("beam centre: %.2f %.2f mm\n", m.Detector.Xbeam*1000, m.Detector.Ybeam*1000)
	// Output:
	// cells: 80 80 80
	// oversampling: 4
	// beam centre: 12.85 12.85 mm
}

// The same model from nanoBragg's own command line.
func ExampleParseArgs() {
	a, err := models.ParseArgs([]string{"-cell", "100", "100", "100", "90", "90", "90", "-xtal_size", "0.0008",
		"-default_F", "100", "-lambda", "6.2", "-detpixels", "256"})
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := a.Model(nil) // reads any input files; writes none
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cells:", m.Crystal.Na, "pixels:", m.Detector.FPixels, "x", m.Detector.SPixels)
	// Output:
	// cells: 80 pixels: 256 x 256
}
