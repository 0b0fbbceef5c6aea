// Command gobragg simulates X-ray diffraction images of nanocrystals as
// nanoBragg does, from nanoBragg's own command lines.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/gobragg/gobragg/cmd/gobragg/app"
	"github.com/gobragg/gobragg/models"
	"github.com/urfave/cli/v2"
)

// Exit codes: 2 for command-line mistakes, 1 for everything else.
const (
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	cliApp := &cli.App{
		Name:  "gobragg",
		Usage: "differentiable nanoBragg-compatible diffraction image simulator",
		Commands: []*cli.Command{{
			Name:            "simulate",
			Usage:           "render an image from a nanoBragg command line (no arguments: a demo)",
			ArgsUsage:       "[nanoBragg flags...]",
			SkipFlagParsing: true, // the arguments are nanoBragg's, parsed by models.ParseArgs
			Action: func(c *cli.Context) error {
				return app.Simulate(c.Args().Slice(), os.Stdout)
			},
		}, {
			Name:            "gradcheck",
			Usage:           "compare the analytic gradient of a loss with central differences, per parameter",
			ArgsUsage:       app.GradcheckUsage,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				return app.Gradcheck(c.Args().Slice(), os.Stdout, os.Stderr)
			},
		}, {
			Name:            "fit",
			Usage:           "refine cell (and geometry) parameters against an observed image",
			ArgsUsage:       app.FitUsage,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				return app.Fit(c.Args().Slice(), os.Stdout, os.Stderr)
			},
		}, {
			Name:            "bench",
			Usage:           "time the standard performance cases as whole simulate processes (optionally beside the reference)",
			ArgsUsage:       app.BenchUsage,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				return app.Bench(c.Args().Slice(), os.Stdout)
			},
		}},
	}
	if err := cliApp.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "gobragg:", err)
		if errors.Is(err, models.ErrUsage) {
			os.Exit(exitUsage)
		}
		os.Exit(exitFailure)
	}
}
