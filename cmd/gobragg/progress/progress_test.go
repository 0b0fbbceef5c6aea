package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestNotATerminal: nothing is drawn where the output is not a terminal,
// unless asked for (On), and then as percentage lines, in order, once
// each, from concurrent updates.
func TestNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	for _, m := range []Mode{Auto, Off} {
		if b := Start(&buf, "x", 10, m); b != nil {
			t.Errorf("mode %d: a bar on a buffer", m)
		}
	}
	var nilBar *Bar // every method of a nil bar does nothing
	nilBar.Set(3)
	nilBar.Add(1)
	nilBar.SetLabel("y")
	nilBar.SetTotal(5)
	nilBar.Finish()
	nilBar.Abort()
	if w := nilBar.Writer(&buf); w != &buf {
		t.Error("a nil bar's writer is not the writer itself")
	}
	b := Start(&buf, "rows", 400, On)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				b.Add(1)
			}
		}()
	}
	wg.Wait()
	b.Finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 21 || lines[0] != "rows: 0% done" || lines[20] != "rows: 100% done" {
		t.Fatalf("lines %q", lines)
	}
	for i, l := range lines {
		if want := "rows: " + strconv.Itoa(5*i) + "% done"; l != want {
			t.Errorf("line %d %q, want %q", i, l, want)
		}
	}
}

func TestModeOf(t *testing.T) {
	if ModeOf(-1) != Auto || ModeOf(0) != Off || ModeOf(1) != On {
		t.Error("ModeOf")
	}
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
}

// TestFinishUnfinished: a bar finished (or aborted) before its count
// reaches its total, or after its total changed, ends at once rather than
// waiting for the count (mpb completes a bar built with a total only when
// its count reaches it).
func TestFinishUnfinished(t *testing.T) {
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = IsTerminal }()
	for _, abort := range []bool{false, true} {
		var bars, lines bytes.Buffer // not terminals: mpb draws nothing there, but keeps its state
		b := Start(&bars, "x", 1000, On)
		b.Set(120)
		b.SetTotal(2000)
		b.SetLabel("y")
		fmt.Fprintln(b.Writer(&lines), "a line")
		done := make(chan struct{})
		go func() {
			if abort {
				b.Abort()
			} else {
				b.Finish()
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("abort %v: the bar did not end", abort)
		}
	}
}
