package app

import (
	"testing"

	"github.com/gobragg/gobragg/models"
)

// TestIntCountsROI: intCounts leaves the pixels inside the region of
// interest as formats.IntImage converts them and 0 elsewhere, for regions
// inside the image, touching its edges, beyond them (the default's
// {0, FPixels, 0, SPixels}) and empty (roi[1] < roi[0]); the expected pixels by the rule itself, pixel by pixel (f, s
// from the index).
func TestIntCountsROI(t *testing.T) {
	const fp, sp = 7, 5
	img := make([]float32, fp*sp)
	for i := range img {
		img[i] = float32(i + 1)
	}
	for _, roi := range [][4]int{{0, fp - 1, 0, sp - 1}, {0, fp, 0, sp}, {2, 4, 1, 3}, {0, 0, 4, 4}, {-3, 99, -1, 2}, {5, 2, 0, sp - 1}, {6, 6, 0, 0}} {
		m := &models.Model{Detector: &models.Detector{FPixels: fp, SPixels: sp, ROI: roi}}
		got := intCounts(img, m, 1, 0)
		for i, v := range got {
			f, s := i%fp, i/fp
			want := uint16(i + 1)
			if f < roi[0] || f > roi[1] || s < roi[2] || s > roi[3] {
				want = 0
			}
			if v != want {
				t.Errorf("ROI %v: pixel (%d, %d) = %d, want %d", roi, f, s, v, want)
			}
		}
	}
}
