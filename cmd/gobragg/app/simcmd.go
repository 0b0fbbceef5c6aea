package app

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gobragg/gobragg/models"
	"github.com/urfave/cli/v2"
)

// simulateFlags are simulate's own options; everything else on its
// command line is nanoBragg's.
func simulateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print the statistics as one JSON object on stdout (the other lines go to stderr); also -json"},
	}
}

// SimulateCommand is `gobragg simulate`.
func SimulateCommand(stdout, stderr io.Writer) *cli.Command {
	lazyHelp()
	return &cli.Command{
		Name:               "simulate",
		Usage:              "render an image from a nanoBragg command line (no arguments: a demo)",
		ArgsUsage:          "[--json] [nanoBragg flags...]",
		Flags:              simulateFlags(),
		OnUsageError:       usageError,
		BashComplete:       completeFlags,
		CustomHelpTemplate: simulateHelpMark,
		Action: func(c *cli.Context) error {
			defer debug.SetGCPercent(debug.SetGCPercent(simulateGCPercent))
			return simulate(c.Args().Slice(), c.Bool("json"), stdout, stderr)
		},
	}
}

// simulateGCPercent is the garbage collector's GOGC while simulate runs:
// what it allocates (the image, its copies for the output files) lives to
// the end, so a collection only walks it, and the first one, when the
// image takes the heap past 4 MB, cost a cubic 1024² process ~4 of its
// ~46 ms here (page faults on the collector's first use of its own
// memory). At 400 the heap may grow to five times what is live before a
// collection, which the garbage here (small) does not reach.
const simulateGCPercent = 400

// simulateHelpMark stands in simulate's help template for the text
// simulateHelpTemplate builds, which lists every nanoBragg flag: urfave/cli
// reads a template only to print the help, and the printer lazyHelp
// installs builds the text then. Built at every start, it took ~0.5–0.8
// ms of each gobragg process (perf: 6 % of `gobragg --version`, most of
// it formatting and its first use of the heap).
const simulateHelpMark = "{{/* gobragg simulate's help: simulateHelpTemplate */}}"

// lazyHelp makes urfave/cli's help printer build simulate's help text
// where its template is simulateHelpMark (installed once per process).
var lazyHelp = sync.OnceFunc(func() {
	next := cli.HelpPrinter
	cli.HelpPrinter = func(w io.Writer, templ string, data any) {
		if templ == simulateHelpMark {
			templ = simulateHelpTemplate()
		}
		next(w, templ, data)
	}
})

// simulateHelpTemplate is urfave/cli's command help followed by the
// nanoBragg flags, generated from the flag table (models.Flags).
func simulateHelpTemplate() string {
	var b strings.Builder
	b.WriteString(`NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   gobragg simulate [--json] [nanoBragg flags...]

   The arguments are nanoBragg's own, verbatim: single-dash flags in the reference's units (mm, µm where
   said, degrees, Å, mrad for divergence). With none, the embedded demo is rendered. Statistics lines go
   to stdout (to stderr when an output file is "-" or with --json).

OPTIONS:{{template "visibleFlagTemplate" .}}

`)
	WriteFlagsHelp(&b)
	return strings.ReplaceAll(b.String(), "{{{", "{ {{")
}

// WriteFlagsHelp writes every nanoBragg flag that models.ParseArgs
// accepts, by group, with its values, units and default: the flag and its
// values in a column of helpColumn characters, then the text (on the next
// line when the flag's column is too long).
func WriteFlagsHelp(w io.Writer) {
	const helpColumn = 30
	fmt.Fprintln(w, "NANOBRAGG FLAGS:")
	last := ""
	for _, f := range models.Flags() {
		if f.Group != last {
			if last != "" {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "   %s:\n", f.Group)
			last = f.Group
		}
		use := strings.Join(f.Names, ", ")
		if f.Args != "" {
			use += " " + f.Args
		}
		pad := strings.Repeat(" ", helpColumn)
		doc := wrap(f.Doc, helpWidth-5-helpColumn)
		if n := utf8.RuneCountInString(use); n < helpColumn-1 {
			fmt.Fprintf(w, "     %s%s%s\n", use, pad[n:], strings.Join(doc, "\n     "+pad))
		} else {
			fmt.Fprintf(w, "     %s\n     %s%s\n", use, pad, strings.Join(doc, "\n     "+pad))
		}
	}
}

// helpWidth is the width the flag help is wrapped to.
const helpWidth = 110

// wrap breaks text into lines of at most width characters, between words.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}
