//go:build !linux && !darwin

package app

import "os"

// peakRSSMB is 0 where the process's peak memory is not reported.
func peakRSSMB(*os.ProcessState) float64 { return 0 }
