package fit_test

import (
	"fmt"

	"github.com/gobragg/gobragg/graph"
	"github.com/gobragg/gobragg/graph/fit"
	"github.com/gobragg/gobragg/models"
)

// A small fast fit: the cell of a crystal, started 1 % off, refined
// against a noise-free image of the truth with the Poisson loss on every
// pixel.
func ExampleRun() {
	setup := models.Setup{
		Cell:      [6]float64{70, 80, 90, 75, 85, 95},
		MissetDeg: [3]float64{10, 20, 30},
		N:         [3]int{5, 5, 5},
		DefaultF:  100,
		PixelMM:   0.4,
		Pixels:    [2]int{64, 64},
	}
	truth, err := setup.Model(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	sim, err := graph.New(truth)
	if err != nil {
		fmt.Println(err)
		return
	}
	observed, err := sim.Image()
	if err != nil {
		fmt.Println(err)
		return
	}
	setup.Cell = [6]float64{70.7, 79.2, 90.9, 75, 85, 95}
	start, err := setup.Model(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	obj, err := graph.NewObjective(start, []string{"a", "b", "c"}, graph.Loss{Kind: graph.LossPoisson, Observed: observed})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := fit.Run(obj, fit.Settings{Starts: 1, Coarse: -1})
	fmt.Println(res.Status)
	for i, n := range res.Names {
		fmt.Printf("%s = %.4f Å\n", n, res.X[i])
	}
	// Output:
	// converged
	// a = 70.0000 Å
	// b = 80.0000 Å
	// c = 90.0000 Å
}
