// Command gobragg simulates X-ray diffraction images of nanocrystals as
// nanoBragg does, from nanoBragg's own command lines.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/gobragg/gobragg/cmd/gobragg/app"
	"github.com/gobragg/gobragg/cmd/gobragg/interrupt"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
	"github.com/urfave/cli/v2"
)

// Exit codes: 1 for ordinary failures (bad files, impossible models), 2
// for command-line mistakes, 3 for an internal error (a recovered panic:
// a bug), 128 + the signal's number when interrupted (130 for SIGINT,
// 143 for SIGTERM).
const (
	exitFailure  = 1
	exitUsage    = 2
	exitInternal = 3
)

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "gobragg",
		Usage:     "differentiable nanoBragg-compatible diffraction image simulator",
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: []*cli.Command{{
			Name:            "simulate",
			Usage:           "render an image from a nanoBragg command line (no arguments: a demo)",
			ArgsUsage:       "[nanoBragg flags...]",
			SkipFlagParsing: true, // the arguments are nanoBragg's, parsed by models.ParseArgs
			Action: func(c *cli.Context) error {
				return app.SimulateStreams(c.Args().Slice(), stdout, stderr)
			},
		}, {
			Name:            "gradcheck",
			Usage:           "compare the analytic gradient of a loss with central differences, per parameter",
			ArgsUsage:       app.GradcheckUsage,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				return app.Gradcheck(c.Args().Slice(), stdout, stderr)
			},
		}, {
			Name:            "fit",
			Usage:           "refine cell, orientation (and geometry) parameters against an observed image",
			ArgsUsage:       app.FitUsage,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				// The first SIGINT or SIGTERM stops the fit, which then
				// writes its best point so far.
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var sig atomic.Value
				release := interrupt.Intercept(func(s os.Signal) { sig.Store(s); cancel() })
				defer release()
				err := app.FitContext(ctx, c.Args().Slice(), stdout, stderr)
				if s, ok := sig.Load().(os.Signal); ok && errors.Is(err, app.ErrFitInterrupted) {
					return fmt.Errorf("%w (%v)", &interrupt.Error{Signal: s}, err)
				}
				return err
			},
		}, {
			Name:            "series",
			Usage:           "render a rotation series (numbered SMV or miniCBF images and a DIALS experiment list) in one process",
			ArgsUsage:       app.SeriesUsage,
			Flags:           app.SeriesFlags(),
			SkipFlagParsing: true, // nanoBragg flags mixed in: app.Series parses its own options
			Action: func(c *cli.Context) error {
				return app.Series(c.Args().Slice(), stdout, stderr)
			},
		}, {
			Name:            "bench",
			Usage:           "time the standard performance cases as whole simulate processes (optionally beside the reference)",
			ArgsUsage:       app.BenchUsage,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				return app.Bench(c.Args().Slice(), stdout)
			},
		}},
	}
}

// runApp runs the app on argv (program name first) and returns the exit
// status, printing one line on stderr for any failure: a panic anywhere
// on this goroutine (the pixel kernels pass theirs back to it) becomes an
// internal error rather than a stack trace.
func runApp(a *cli.App, argv []string, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			formats.RemoveTemps()
			msg := strings.Join(strings.Fields(fmt.Sprint(r)), " ")
			fmt.Fprintf(stderr, "gobragg: internal error: %s (a bug in gobragg; please report it with the command line)\n", msg)
			code = exitInternal
		}
	}()
	err := a.Run(argv)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "gobragg:", err)
	var ie *interrupt.Error
	switch {
	case errors.As(err, &ie):
		return interrupt.Code(ie.Signal)
	case errors.Is(err, models.ErrUsage):
		return exitUsage
	}
	return exitFailure
}

func main() {
	interrupt.Install()
	os.Exit(runApp(newApp(os.Stdout, os.Stderr), os.Args, os.Stderr))
}
