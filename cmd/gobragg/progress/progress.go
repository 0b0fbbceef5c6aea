// Package progress draws progress bars on a terminal (with
// github.com/vbauerster/mpb) for gobragg's long commands, behind an API
// small enough for any of them: Start a bar with a label and a total,
// Set or Add what is done, Finish.
//
// # Conventions
//
// A bar is drawn only where it can be seen: on a terminal, and, in the
// automatic mode, only once the work has lasted Delay, so that short runs
// print nothing. Where the output is not a terminal nothing is drawn; in
// the On mode (the reference's -progress) plain "label: N% done" lines
// take its place there, one per 5 %. Every method of a nil *Bar does
// nothing, and the methods are safe for concurrent use.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/cwriter"
	"github.com/vbauerster/mpb/v8/decor"
)

// Mode says when bars are drawn.
type Mode int

// The modes.
const (
	Auto Mode = iota // on a terminal, for work lasting more than Delay
	On               // on a terminal at once; elsewhere, percentage lines
	Off              // never
)

// ModeOf maps a command line's choice (-1 automatic, 0 -noprogress, 1
// -progress) to a Mode.
func ModeOf(flag int) Mode {
	switch {
	case flag == 0:
		return Off
	case flag > 0:
		return On
	}
	return Auto
}

// Delay is how long work runs before the automatic mode draws its bar.
var Delay = time.Second

// isTerminal is IsTerminal (tests replace it).
var isTerminal = IsTerminal

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && cwriter.IsTerminal(int(f.Fd()))
}

// Bar is one progress bar.
type Bar struct {
	p       *mpb.Progress
	bar     *mpb.Bar
	out     io.Writer
	label   atomic.Value // string
	timer   *time.Timer
	shown   atomic.Bool
	once    sync.Once
	lines   io.Writer // percentage lines (On mode, not a terminal)
	total   atomic.Int64
	done    atomic.Int64
	percent atomic.Int64 // the last percentage line printed
	mu      sync.Mutex   // orders the percentage lines
}

// Start starts a bar for total units of work labelled label, on w
// (usually os.Stderr). It returns nil, a bar that does nothing, when
// there is nothing to draw (mode Off, or not a terminal unless mode is On).
// A total ≤ 0 is unknown: the bar then shows the count only.
func Start(w io.Writer, label string, total int64, mode Mode) *Bar {
	if mode == Off || w == nil {
		return nil
	}
	b := &Bar{out: w}
	b.label.Store(label)
	b.total.Store(total)
	if !isTerminal(w) {
		if mode != On {
			return nil
		}
		b.lines = w
		b.percent.Store(-1)
		return b
	}
	delay := make(chan struct{})
	b.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(72), mpb.WithRefreshRate(120*time.Millisecond), mpb.WithRenderDelay(delay))
	show := func() { b.shown.Store(true); close(delay) }
	if mode == On {
		show()
	} else {
		b.timer = time.AfterFunc(Delay, show)
	}
	name := decor.Any(func(decor.Statistics) string { return b.label.Load().(string) + " " }, decor.WCSyncSpaceR)
	count := decor.Any(func(s decor.Statistics) string {
		if s.Total <= 0 {
			return fmt.Sprintf(" %d", s.Current)
		}
		return fmt.Sprintf(" %d/%d %3d%%", s.Current, s.Total, 100*s.Current/max(s.Total, 1))
	})
	// Built with no total, so that mpb lets SetTotal change it later and
	// complete the bar at Finish whatever was done (a bar built with a
	// total completes only when its count reaches it).
	b.bar = b.p.AddBar(0, mpb.PrependDecorators(name), mpb.AppendDecorators(count, decor.Name(" "),
		decor.Elapsed(decor.ET_STYLE_GO)), mpb.BarRemoveOnComplete())
	if total > 0 {
		b.bar.SetTotal(total, false)
	}
	return b
}

// SetLabel changes the bar's label (what is being done now).
func (b *Bar) SetLabel(label string) {
	if b != nil {
		b.label.Store(label)
	}
}

// SetTotal changes the amount of work (≤ 0: unknown).
func (b *Bar) SetTotal(total int64) {
	if b == nil {
		return
	}
	b.total.Store(total)
	if b.bar != nil {
		b.bar.SetTotal(max(total, 0), false)
	}
}

// Set records that done units of work are done.
func (b *Bar) Set(done int64) {
	if b == nil {
		return
	}
	b.done.Store(done)
	if b.bar != nil {
		b.bar.SetCurrent(done)
		return
	}
	b.line(done)
}

// Add records n more units done.
func (b *Bar) Add(n int64) {
	if b != nil {
		b.Set(b.done.Add(n))
	}
}

// line prints a percentage line at each multiple of 5 % reached.
func (b *Bar) line(done int64) {
	total := b.total.Load()
	if total <= 0 {
		return
	}
	pc := min(100, 100*done/total) / 5 * 5
	if pc <= b.percent.Load() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if pc > b.percent.Load() {
		b.percent.Store(pc)
		fmt.Fprintf(b.lines, "%s: %d%% done\n", b.label.Load().(string), pc)
	}
}

// Writer returns a writer for lines that share the terminal with the
// bar: while the bar is drawn they are printed above it (at its next
// refresh), otherwise straight to w. Lines for another destination (w not
// the bar's terminal) go straight to w.
func (b *Bar) Writer(w io.Writer) io.Writer {
	if b == nil || b.p == nil || !sameTerminal(w, b.out) {
		return w
	}
	return writerFunc(func(p []byte) (int, error) {
		if b.shown.Load() {
			if n, err := b.p.Write(p); err == nil {
				return n, nil
			}
		}
		return w.Write(p)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// sameTerminal reports whether a and b are both terminals (a bar and
// lines on two terminals of one session are the usual case: stdout and
// stderr of an interactive shell).
func sameTerminal(a, b io.Writer) bool { return isTerminal(a) && isTerminal(b) }

// Finish ends the bar: it is removed from the terminal (a bar never drawn
// leaves nothing), and in the percentage mode a last line says 100 %.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.once.Do(func() {
		if b.timer != nil {
			b.timer.Stop()
		}
		if b.bar == nil {
			if b.total.Load() > 0 {
				b.line(b.total.Load())
			}
			return
		}
		b.bar.SetTotal(-1, true)
		b.p.Wait()
	})
}

// Abort ends the bar without completing it (a failed or interrupted
// run): it is removed from the terminal.
func (b *Bar) Abort() {
	if b == nil {
		return
	}
	b.once.Do(func() {
		if b.timer != nil {
			b.timer.Stop()
		}
		if b.bar != nil {
			b.bar.Abort(true)
			b.p.Wait()
		}
	})
}
