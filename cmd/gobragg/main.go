// Command gobragg simulates X-ray diffraction images of nanocrystals as
// nanoBragg does, from nanoBragg's own command lines.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/gobragg/gobragg/cmd/gobragg/app"
	"github.com/gobragg/gobragg/models"
	"github.com/urfave/cli/v2"
)

// Exit codes: 2 for command-line mistakes, 128 + the signal's number for
// a fit stopped by SIGINT or SIGTERM (130, 143), 1 for everything else.
const (
	exitFailure = 1
	exitUsage   = 2
)

// stoppedBy is the signal that stopped a fit.
var stoppedBy atomic.Value

// signalContext is a context that SIGINT or SIGTERM cancels (recording
// the signal in stoppedBy), and the function that releases it.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			stoppedBy.Store(s)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

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
			Usage:           "refine cell, orientation (and geometry) parameters against an observed image",
			ArgsUsage:       app.FitUsage,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				// SIGINT and SIGTERM stop the fit, which then writes its
				// best point so far.
				ctx, release := signalContext()
				defer release()
				return app.FitContext(ctx, c.Args().Slice(), os.Stdout, os.Stderr)
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
		if s, ok := stoppedBy.Load().(syscall.Signal); ok && errors.Is(err, app.ErrFitInterrupted) {
			os.Exit(128 + int(s))
		}
		os.Exit(exitFailure)
	}
}
