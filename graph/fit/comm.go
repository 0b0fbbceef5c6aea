package fit

import "fmt"

// Comm spreads a fit's images over processes — MPI ranks (package
// graph/fit/mpi, built with -tags mpi) — that run the same fit: each
// evaluates the images it owns (image k belongs to rank k mod Size) and
// the results are gathered on every rank, then summed in image order, so
// that every rank takes the same steps, bit for bit, as one process would.
type Comm interface {
	Rank() int
	Size() int
	// Allgather returns the concatenation, in rank order, of every
	// rank's data (of any lengths). Every rank must call it.
	Allgather(data []float64) ([]float64, error)
}

// single is the Comm of one process.
type single struct{}

func (single) Rank() int                                   { return 0 }
func (single) Size() int                                   { return 1 }
func (single) Allgather(data []float64) ([]float64, error) { return data, nil }

// owns reports whether c's rank evaluates image k.
func owns(c Comm, k int) bool { return k%c.Size() == c.Rank() }

// gatherImages shares per-image blocks of width values: every rank passes
// the blocks of the images it owns, in image order (nil for an image
// nothing was computed for: all NaN); every rank gets all the images'
// blocks in image order.
func gatherImages(c Comm, images, width int, mine func(k int) []float64) ([][]float64, error) {
	var local []float64
	for k := c.Rank(); k < images; k += c.Size() {
		b := mine(k)
		if b == nil {
			b = nanSlice(width)
		}
		if len(b) != width {
			return nil, fmt.Errorf("fit: image %d: %d values, want %d", k+1, len(b), width)
		}
		local = append(local, b...)
	}
	all, err := c.Allgather(local)
	if err != nil {
		return nil, err
	}
	if len(all) != images*width {
		return nil, fmt.Errorf("fit: gathered %d values for %d images of %d", len(all), images, width)
	}
	out := make([][]float64, images)
	at := 0
	for r := 0; r < c.Size(); r++ {
		for k := r; k < images; k += c.Size() {
			out[k] = all[at : at+width]
			at += width
		}
	}
	return out, nil
}
