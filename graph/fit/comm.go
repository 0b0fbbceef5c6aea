package fit

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

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

// gatherImages shares per-image blocks of width values: mine computes
// the block of each image this rank owns (several at once; a block that
// failed is all NaN on every rank, and its error is in errs, on this
// rank); every rank gets all the images' blocks in image order. err is a
// failure of the exchange itself.
func gatherImages(c Comm, images, width int, mine func(k int) ([]float64, error)) (blocks [][]float64, errs []error, err error) {
	errs = make([]error, images)
	own := make([][]float64, images)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for k := c.Rank(); k < images; k += c.Size() {
		wg.Add(1)
		sem <- struct{}{}
		go func(k int) {
			defer func() { <-sem; wg.Done() }()
			b, err := mine(k)
			if err == nil && b != nil && len(b) != width {
				err = fmt.Errorf("fit: image %d: %d values, want %d", k+1, len(b), width)
			}
			if err != nil || b == nil {
				errs[k], b = err, nanSlice(width)
			}
			own[k] = b
		}(k)
	}
	wg.Wait()
	var local []float64
	for k := c.Rank(); k < images; k += c.Size() {
		local = append(local, own[k]...)
	}
	all, err := c.Allgather(local)
	if err != nil {
		return nil, errs, err
	}
	if len(all) != images*width {
		return nil, errs, fmt.Errorf("fit: gathered %d values for %d images of %d", len(all), images, width)
	}
	blocks = make([][]float64, images)
	at := 0
	for r := 0; r < c.Size(); r++ {
		for k := r; k < images; k += c.Size() {
			blocks[k] = all[at : at+width]
			at += width
		}
	}
	return blocks, errs, nil
}

// blockErr is the error of image k's block: its own, or, for an image
// another rank owns, that it failed there.
func blockErr(images, k int, errs []error) error {
	if errs[k] != nil {
		return imageErr(images, k, errs[k])
	}
	return imageErr(images, k, errors.New("it failed on another rank"))
}
