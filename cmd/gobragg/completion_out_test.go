package main

import (
	"strings"
	"testing"
)

// TestCompletionOneShell: completion names one shell; more is a usage
// error, not the first shell's script.
func TestCompletionOneShell(t *testing.T) {
	out, stderr, code := runCmd(t, "completion", "bash", "zsh")
	if code != exitUsage || out != "" || !strings.Contains(stderr, "completion bash zsh") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("completion bash zsh: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if out, _, code := runCmd(t, "completion", "zsh"); code != 0 || !strings.Contains(out, "bashcompinit") {
		t.Errorf("completion zsh: exit %d, %q", code, out)
	}
}
