package physics

import (
	"bytes"
	"os"
	"strconv"
	"testing"
)

// anonHuge is this process's memory in transparent huge pages, in kB
// (/proc/self/smaps_rollup), or -1 where it cannot be read.
func anonHuge(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return -1
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) >= 2 && string(f[0]) == "AnonHugePages:" {
			kb, err := strconv.Atoi(string(f[1]))
			if err != nil {
				t.Fatalf("smaps_rollup: %q", line)
			}
			return kb
		}
	}
	return -1
}

// TestMakeHuge: an image buffer of 16 MB, filled, is backed by huge pages
// where the kernel gives them on request (THP "always" or "madvise"): it
// holds 7 or 8 whole 2 MB pages; at least 4 of them must be huge (the
// kernel may lack free huge pages for the rest). Without the advice, on
// this machine (THP "madvise"), none is.
func TestMakeHuge(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !(bytes.Contains(mode, []byte("[madvise]")) || bytes.Contains(mode, []byte("[always]"))) {
		t.Skipf("no transparent huge pages on request here (%q)", bytes.TrimSpace(mode))
	}
	before := anonHuge(t)
	if before < 0 {
		t.Skip("no AnonHugePages in /proc/self/smaps_rollup")
	}
	img := makeHuge[float64](2 << 20) // 16 MB
	for i := range img {
		img[i] = 1
	}
	after := anonHuge(t)
	if after-before < 8<<10 {
		t.Errorf("AnonHugePages grew by %d kB for a 16 MB image, want at least 8192", after-before)
	}
	t.Logf("AnonHugePages %d → %d kB", before, after)
}
