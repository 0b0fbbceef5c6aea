package app

import (
	"os"
	"syscall"
)

// peakRSSMB is a finished process's peak resident memory in MB (Linux
// reports ru_maxrss in KiB).
func peakRSSMB(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / 1024
	}
	return 0
}
