package app

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

// bashCompletion asks gobragg itself for the words that may follow (the
// --generate-bash-completion protocol of urfave/cli): commands, a
// command's double-dash options, or nanoBragg's single-dash flags; file
// names where it offers none.
const bashCompletion = `# gobragg shell completion: eval "$(gobragg completion bash)"
_gobragg_complete() {
	local cur="${COMP_WORDS[COMP_CWORD]}" words
	if [[ "$cur" == -* ]]; then
		words=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
	else
		words=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
	fi
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -o bashdefault -F _gobragg_complete gobragg
`

// CompletionCommand is `gobragg completion bash|zsh|fish`: it prints a
// script that makes the shell complete gobragg's commands, options and
// nanoBragg flags.
func CompletionCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: eval \"$(gobragg completion bash)\" (or zsh, fish)",
		ArgsUsage: "bash|zsh|fish",
		Action: func(c *cli.Context) error {
			switch shell := c.Args().First(); shell {
			case "bash", "":
				_, err := io.WriteString(stdout, bashCompletion)
				return err
			case "zsh":
				_, err := io.WriteString(stdout, "autoload -U +X bashcompinit && bashcompinit\n"+bashCompletion)
				return err
			case "fish":
				s, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(stdout, s)
				return err
			default:
				return usagef("completion %q: want bash, zsh or fish", shell)
			}
		},
	}
}

// NearestNames returns up to three of names nearest to s in edit
// distance, when near enough to be a misspelling of one.
func NearestNames(s string, names []string) []string { return nearest(s, names) }
