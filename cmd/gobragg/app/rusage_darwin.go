package app

import (
	"os"
	"syscall"
)

// peakRSSMB is a finished process's peak resident memory in MB (macOS
// reports ru_maxrss in bytes).
func peakRSSMB(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / (1 << 20)
	}
	return 0
}
