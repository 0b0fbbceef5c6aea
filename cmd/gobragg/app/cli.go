package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/models"
	"github.com/urfave/cli/v2"
)

// Command lines mix two kinds of options: a subcommand's own double-dash
// options (--observed FILE), which are urfave/cli flags with usage text
// and defaults, and nanoBragg's single-dash flags (-cell 70 80 90 …),
// which are the reference's and go verbatim to models.ParseArgs. Go's
// flag package, under urfave/cli, would take -cell for a flag of its own,
// so Arrange puts the double-dash options first and the rest after "--";
// urfave/cli then parses the options and hands the rest over as the
// command's arguments.

// Arrange rewrites the arguments of a command with flags (after the
// command's name) as urfave/cli should see them: the double-dash options
// first, each as --name=value, then "--" and every other argument in its
// order. "-h" and "-help" ask for the help as "--help" does. Options are
// checked as they are taken: an unknown one, one without its value and a
// malformed number are usage errors naming the option (with the nearest
// names for an unknown one). A value may be given as "--name value" or
// "--name=value"; a value that starts with "-" must start as a number
// does ("-5", "-.5", "-5,10,0,10": no nanoBragg flag does).
func Arrange(flags []cli.Flag, args []string) ([]string, error) {
	byName := map[string]cli.Flag{}
	var names []string
	for _, f := range flags {
		for _, n := range f.Names() {
			byName[n] = f
			if len(n) > 1 {
				names = append(names, "--"+n)
			}
		}
	}
	var opts, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
			continue
		case a == "-h" || a == "-help" || a == "--help":
			opts = append(opts, "--help")
			continue
		case !strings.HasPrefix(a, "--") || len(a) == 2:
			rest = append(rest, a)
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		f, ok := byName[name]
		if !ok {
			if near := nearest("--"+name, names); len(near) > 0 {
				return nil, usagef("unknown option --%s (did you mean %s?)", name, strings.Join(near, ", "))
			}
			return nil, usagef("unknown option --%s (options: %s)", name, strings.Join(names, ", "))
		}
		if _, isBool := f.(*cli.BoolFlag); isBool {
			opts = append(opts, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "-") && !numberLed(args[i+1])) {
				return nil, usagef("--%s needs a value", name)
			}
			i++
			val = args[i]
		}
		if err := checkValue(f, name, val); err != nil {
			return nil, err
		}
		opts = append(opts, "--"+name+"="+val)
	}
	return append(append(opts, "--"), rest...), nil
}

// checkValue refuses a malformed number for a numeric flag, naming it.
func checkValue(f cli.Flag, name, val string) error {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag:
		if _, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64); err != nil {
			return usagef("--%s %q: want a whole number", name, val)
		}
	case *cli.Float64Flag:
		if _, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err != nil {
			return usagef("--%s %q: want a number", name, val)
		}
	}
	return nil
}

// nearest returns up to three of names within a small edit distance of s.
func nearest(s string, names []string) []string {
	var out []string
	best := 1 << 30
	for _, n := range names {
		d := models.EditDistance(s, n)
		if d > min(3, max(1, len(s)/3)) {
			continue
		}
		switch {
		case d < best:
			best, out = d, []string{n}
		case d == best && len(out) < 3:
			out = append(out, n)
		}
	}
	return out
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// numberLed reports whether s, which starts with "-", is a value rather
// than a flag: a number, or text that starts as a negative number does
// (a list such as --roi's "-5,10,0,10", which its option then judges).
func numberLed(s string) bool {
	return isNumber(s) || len(s) > 1 && (s[1] == '.' || s[1] >= '0' && s[1] <= '9')
}

func usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", models.ErrUsage, fmt.Sprintf(format, a...))
}

// usageError is every command's OnUsageError: a flag urfave/cli could not
// parse is a usage error, one line, without the help text.
func usageError(_ *cli.Context, err error, _ bool) error {
	return usagef("%v", err)
}

// runCommand runs one command on its arguments (without its name) as the
// gobragg program would: arranged, parsed by urfave/cli, then its action;
// help goes to stdout.
func runCommand(ctx context.Context, cmd *cli.Command, args []string, stdout, stderr io.Writer) error {
	arranged, err := Arrange(cmd.Flags, args)
	if err != nil {
		return err
	}
	a := &cli.App{Name: "gobragg", Writer: stdout, ErrWriter: stderr, Commands: []*cli.Command{cmd},
		HideHelpCommand: true, HideVersion: true}
	return a.RunContext(ctx, append([]string{"gobragg", cmd.Name}, arranged...))
}

// Commands returns gobragg's subcommands, in the order of the help,
// writing to stdout and stderr.
func Commands(stdout, stderr io.Writer) []*cli.Command {
	return []*cli.Command{SimulateCommand(stdout, stderr), SeriesCommand(stdout, stderr), GradcheckCommand(stdout, stderr),
		FitCommand(stdout, stderr), BenchCommand(stdout)}
}

// completeFlags is the shell completion of commands that take nanoBragg
// flags: a word that starts with a single dash completes to a nanoBragg
// flag, one with two dashes to the command's own options.
func completeFlags(c *cli.Context) {
	last := ""
	if n := len(os.Args); n >= 2 && os.Args[n-1] == "--generate-bash-completion" {
		last = os.Args[n-2]
	}
	w := c.App.Writer
	if !strings.HasPrefix(last, "--") {
		for _, f := range models.Flags() {
			for _, n := range f.Names {
				if strings.HasPrefix(n, last) {
					fmt.Fprintln(w, n)
				}
			}
		}
	}
	if last == "" || strings.HasPrefix(last, "--") {
		for _, f := range c.Command.Flags {
			if n := f.Names()[0]; strings.HasPrefix("--"+n, last) {
				fmt.Fprintln(w, "--"+n)
			}
		}
	}
}
