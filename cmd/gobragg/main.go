// Command gobragg simulates X-ray diffraction images of nanocrystals as
// nanoBragg does, from nanoBragg's own command lines.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"github.com/gobragg/gobragg/cmd/gobragg/app"
	"github.com/gobragg/gobragg/cmd/gobragg/interrupt"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
	"github.com/gobragg/gobragg/physics"
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
	cmds := app.Commands(stdout, stderr)
	for _, c := range cmds {
		if c.Name == "fit" {
			interruptible(c)
		}
	}
	cmds = append(cmds, oneArg(app.CompletionCommand(stdout)))
	return &cli.App{
		Name:                 "gobragg",
		Usage:                "differentiable nanoBragg-compatible diffraction image simulator",
		Version:              version(),
		Writer:               stdout,
		ErrWriter:            stderr,
		Suggest:              true,
		EnableBashCompletion: true,
		Commands:             cmds,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%w: %v", models.ErrUsage, err)
		},
		// Without a command: the help. With an unknown one: a usage error
		// with the nearest command names.
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowAppHelp(c)
			}
			var names []string
			for _, cmd := range c.App.Commands {
				names = append(names, cmd.Names()...)
			}
			name := c.Args().First()
			if near := app.NearestNames(name, names); len(near) > 0 {
				return fmt.Errorf("%w: unknown command %q (did you mean %s?)", models.ErrUsage, name, strings.Join(near, ", "))
			}
			return fmt.Errorf("%w: unknown command %q (commands: %s)", models.ErrUsage, name, strings.Join(names, ", "))
		},
	}
}

// interruptible makes the first SIGINT or SIGTERM stop a fit, which then
// writes its best point so far and exits 128 + the signal's number.
func interruptible(c *cli.Command) {
	action := c.Action
	c.Action = func(cc *cli.Context) error {
		ctx, cancel := context.WithCancel(cc.Context)
		defer cancel()
		var sig atomic.Value
		release := interrupt.Intercept(func(s os.Signal) { sig.Store(s); cancel() })
		defer release()
		cc.Context = ctx
		err := action(cc)
		if s, ok := sig.Load().(os.Signal); ok && errors.Is(err, app.ErrFitInterrupted) {
			return fmt.Errorf("%w (%v)", &interrupt.Error{Signal: s}, err)
		}
		return err
	}
}

// oneArg refuses more than one argument to c (completion names one
// shell), rather than ignoring the rest.
func oneArg(c *cli.Command) *cli.Command {
	action := c.Action
	c.Action = func(cc *cli.Context) error {
		if cc.NArg() > 1 {
			return fmt.Errorf("%w: %s %s: takes one argument (%s)", models.ErrUsage, c.Name, strings.Join(cc.Args().Slice(), " "), c.ArgsUsage)
		}
		return action(cc)
	}
	return c
}

// version is the module's version and the VCS revision it was built
// from (runtime/debug.ReadBuildInfo): "(devel) 1a2b3c4d5e6f+modified
// 2025-01-02T03:04:05Z go1.22.1" for a build from a work tree.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += "+modified"
		}
		v += " " + rev
		if when != "" {
			v += " " + when
		}
	}
	return v + " " + bi.GoVersion
}

// arrange rewrites a command line for urfave/cli: a command's double-dash
// options first, its nanoBragg flags after "--" (app.Arrange); a
// shell-completion request goes to the command as it is.
func arrange(a *cli.App, argv []string) ([]string, error) {
	if len(argv) < 2 {
		return argv, nil
	}
	cmd := a.Command(argv[1])
	if cmd == nil || len(cmd.Flags) == 0 {
		return argv, nil
	}
	if argv[len(argv)-1] == "--generate-bash-completion" {
		// The command's completer reads the word being completed from
		// os.Args; urfave/cli completes nothing after a "--".
		return []string{argv[0], argv[1], "--generate-bash-completion"}, nil
	}
	out, err := app.Arrange(cmd.Flags, argv[2:])
	if err != nil {
		return nil, err
	}
	return append([]string{argv[0], argv[1]}, out...), nil
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
	err := useLanes(os.Getenv("GOBRAGG_LANES"))
	if err == nil {
		argv, err = arrange(a, argv)
	}
	if err == nil {
		err = a.Run(argv)
	}
	if err == nil {
		return 0
	}
	if interrupt.Exiting() {
		// A signal is ending the process, and this error may be its doing
		// (a temporary file removed under a write): Exit says what
		// happened and sets the status.
		interrupt.WaitExit()
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

// useLanes picks the lane kernels named by GOBRAGG_LANES (physics.
// UseVectorLanes; "" keeps the widest the CPU runs): a usage error names
// the ones available.
func useLanes(name string) error {
	if name == "" {
		return nil
	}
	if err := physics.UseVectorLanes(name); err != nil {
		return fmt.Errorf("%w: GOBRAGG_LANES=%s: not available here (available: %s)", models.ErrUsage, name, strings.Join(physics.AvailableVectorLanes(), ", "))
	}
	return nil
}

// startMPI, set by the mpi build (mpi.go), starts MPI and gives the
// fit command its ranks; it returns the function that ends MPI.
var startMPI func() (stop func(), err error)

func main() {
	interrupt.Install()
	stop := func() {}
	if startMPI != nil {
		var err error
		if stop, err = startMPI(); err != nil {
			fmt.Fprintln(os.Stderr, "gobragg:", err)
			os.Exit(exitFailure)
		}
	}
	code := runApp(newApp(os.Stdout, os.Stderr), os.Args, os.Stderr)
	stop()
	os.Exit(code)
}
