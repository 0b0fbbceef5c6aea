package app

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/gradcheck"
	"github.com/gobragg/gobragg/models"
)

// GradcheckUsage describes the gradcheck options.
const GradcheckUsage = `[--params all|LIST] [--loss sum|sse|poisson|gauss] [--observed FILE] [--background FILE] [--read-noise SIGMA]
   [--mask FILE] [--roi fmin,fmax,smin,smax] [--step name=value,...] [--tol 1e-6] [--json] nanoBragg flags...`

// Gradcheck compares the analytic gradient of a loss on the image of the
// model that argv (nanoBragg flags plus the options of GradcheckUsage)
// describes with central differences, one row per parameter, written to
// out as a table or, with --json, a JSON array. Messages from reading the
// model go to log. It returns an error when a row fails.
func Gradcheck(argv []string, out, log io.Writer) error {
	o, rest, err := splitOptions(argv, []string{"params", "loss", "observed", "background", "read-noise", "mask", "roi", "step", "tol"}, []string{"json"})
	if err != nil {
		return err
	}
	if o.values["background"] == "auto" {
		return usagef("--background auto is fit's: give gradcheck a background image")
	}
	tol := 1e-6
	if s := o.values["tol"]; s != "" {
		if tol, err = strconv.ParseFloat(s, 64); err != nil || !(tol > 0) {
			return usagef("--tol %q: want a positive number", s)
		}
	}
	obj, discrete, err := objective(o, rest, o.values["params"], log)
	if err != nil {
		return err
	}
	names, loss := obj.Names, obj.Loss
	x := obj.Start()
	st, err := steps(o.values["step"], names, x)
	if err != nil {
		return err
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
	if o.flags["json"] {
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
