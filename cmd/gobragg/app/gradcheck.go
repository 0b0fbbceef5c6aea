package app

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/gobragg/gobragg/gradcheck"
	"github.com/gobragg/gobragg/graph/fit"
	"github.com/gobragg/gobragg/models"
	"github.com/urfave/cli/v2"
)

// GradcheckUsage describes the gradcheck arguments.
const GradcheckUsage = `nanoBragg flags...`

// gradcheckFlags are gradcheck's options.
func gradcheckFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "params", Value: "all", Usage: "parameters to check: all, or a comma `LIST` of names (a b c alpha beta gamma misset_x … " +
			"distance xbeam ybeam lambda fluence …) and groups (cell misset orientation beam rot N scale)"},
	}, append(lossFlags("sum", "the loss: `sum|sse|poisson|gauss` (Σμ, Σ(μ−obs)², Σ(μ−obs·ln μ), ½Σ(ln 2πV + (μ−obs)²/V))", "none"),
		&cli.StringFlag{Name: "step", Usage: "finite-difference steps `name=value,...` (default about 1e-7 of each parameter's scale)"},
		&cli.Float64Flag{Name: "tol", Value: 1e-6, Usage: "relative tolerance `TOL` of analytic against numeric"},
		&cli.BoolFlag{Name: "json", Usage: "print a JSON array of rows instead of the table"},
	)...)
}

// GradcheckCommand is `gobragg gradcheck`.
func GradcheckCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "gradcheck",
		Usage:     "compare the analytic gradient of a loss with central differences, per parameter",
		ArgsUsage: GradcheckUsage,
		Description: "The model is the simulate command line (nanoBragg flags, see gobragg simulate --help); each parameter's\n" +
			"gradient through the compiled program is compared with a fourth-order central difference of the whole model.\n" +
			"Exit status 1 when a row fails.",
		Flags:        gradcheckFlags(),
		OnUsageError: usageError,
		BashComplete: completeFlags,
		Action: func(c *cli.Context) error {
			return runGradcheck(c, c.Args().Slice(), stdout, stderr)
		},
	}
}

// Gradcheck compares the analytic gradient of a loss on the image of the
// model that argv (nanoBragg flags plus gradcheck's options) describes
// with central differences, one row per parameter, written to out as a
// table or, with --json, a JSON array. Messages from reading the model go
// to log. It returns an error when a row fails.
func Gradcheck(argv []string, out, log io.Writer) error {
	return runCommand(context.Background(), GradcheckCommand(out, log), argv, out, log)
}

func runGradcheck(c *cli.Context, rest []string, out, log io.Writer) error {
	lo := lossOptionsFrom(c)
	if strings.Contains(lo.Observed, ",") {
		return usagef("--observed: gradcheck takes one image")
	}
	if lo.Background == "auto" {
		return usagef("--background auto is fit's: give gradcheck a background image")
	}
	tol := c.Float64("tol")
	if !(tol > 0) {
		return usagef("--tol %g: want a positive number", tol)
	}
	obj, discrete, args, err := objectiveArgs(&lo, rest, c.String("params"), log)
	if err != nil {
		return err
	}
	if err := refuseSimulateOutputs(args, "gradcheck", "it writes no file", "--json prints its rows as JSON"); err != nil {
		return err
	}
	names, loss := obj.Names, obj.Loss
	x := obj.Start()
	st, err := steps(c.String("step"), names, x)
	if err != nil {
		return err
	}
	for i, n := range names {
		// A step below gradcheck.MinRelStep of the parameter's value or
		// scale (fit.Scale: a parameter at 0 still moves spots by its
		// scale) is lost in the rounding of x ± step, and the rounding
		// floor, which grows as the step shrinks, would pass the row
		// whatever the difference gave.
		if least := gradcheck.MinRelStep * math.Max(math.Abs(x[i]), fit.Scale(n, x[i])); st[n] < least {
			return usagef("--step %s=%g: too small to resolve: want at least %.2g (%g of the value or scale)", n, st[n], least, gradcheck.MinRelStep)
		}
	}
	p := &gradcheck.Problem{Func: obj.Value, Grad: obj.Gradient}
	for _, n := range names {
		up, _ := models.LookupParam(n)
		p.Params = append(p.Params, gradcheck.Param{Name: n, Unit: up.Unit, Step: st[n], NotDifferentiable: obj.NotDifferentiable(n)})
	}
	r, err := gradcheck.Check(p, x, &gradcheck.Settings{Tol: tol})
	if err != nil {
		return err
	}
	for _, n := range discrete {
		r.Rows = append(r.Rows, gradcheck.Row{Name: n, OK: true, Note: models.DiscreteParams[n]})
	}
	if c.Bool("json") {
		err = r.WriteJSON(out)
	} else {
		fmt.Fprintf(out, "%s loss %.10g; gradient per parameter unit, relative tolerance %g\n", loss.Kind, r.Value, tol)
		err = r.WriteTable(out)
	}
	if err != nil {
		return err
	}
	var failed []string
	for _, row := range r.Rows {
		if !row.OK {
			failed = append(failed, row.Name)
		}
	}
	if failed != nil {
		return fmt.Errorf("gradient check failed for %s", strings.Join(failed, ", "))
	}
	return nil
}
