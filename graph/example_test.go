package graph_test

import (
	"fmt"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/models"
)

// tiny is a small triclinic model: 64² pixels of 0.4 mm.
func tiny() *models.Model {
	s := models.Setup{
		Cell:      [6]float64{70, 80, 90, 75, 85, 95},
		MissetDeg: [3]float64{10, 20, 30},
		N:         [3]int{5, 5, 5},
		DefaultF:  100,
		PixelMM:   0.4,
		Pixels:    [2]int{64, 64},
	}
	m, err := s.Model(nil)
	if err != nil {
		panic(err)
	}
	return m
}

// Simulate an image: photons per pixel, slow-major.
func ExampleNew() {
	m := tiny()
	sim, err := graph.New(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	img, err := sim.Image()
	if err != nil {
		fmt.Println(err)
		return
	}
	best := 0
	for i, v := range img {
		if v > img[best] {
			best = i
		}
	}
	fp := m.Detector.FPixels
	fmt.Printf("%d pixels; the brightest, %.4g photons, at fast %d, slow %d\n", len(img), img[best], best%fp, best/fp)
	// Output:
	// 4096 pixels; the brightest, 774 photons, at fast 0, slow 22
}

// The gradient of a loss with respect to named parameters (in their
// units: Å, mm): here the total photon count against the cell edge a and
// the detector distance.
func ExampleObjective_Gradient() {
	obj, err := graph.NewObjective(tiny(), []string{"a", "distance"}, graph.Loss{Kind: graph.LossSum})
	if err != nil {
		fmt.Println(err)
		return
	}
	loss, grad, err := obj.Gradient(obj.Start())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("photons %.6g; d/da %.4g per Å; d/ddistance %.4g per mm\n", loss, grad[0], grad[1])
	// Output:
	// photons 89347.6; d/da -1303 per Å; d/ddistance -1984 per mm
}
