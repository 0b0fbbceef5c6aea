//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

static int gob_init(int *provided) {
	int flag = 0;
	MPI_Initialized(&flag);
	if (flag) {
		MPI_Query_thread(provided);
		return MPI_SUCCESS;
	}
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, provided);
}
static int gob_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int gob_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int gob_counts(int mine, int *counts) {
	return MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
}
static int gob_allgatherv(double *send, int n, double *recv, int *counts, int *displs) {
	return MPI_Allgatherv(send, n, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
}
static int gob_finalize(void) {
	int flag = 0;
	MPI_Finalized(&flag);
	return flag ? MPI_SUCCESS : MPI_Finalize();
}
static int gob_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// The MPI thread: every call runs there.
var (
	once  sync.Once
	calls chan func()
)

// do runs f on the MPI thread and waits for it.
func do(f func()) {
	done := make(chan struct{})
	calls <- func() { f(); close(done) }
	<-done
}

// Comm is MPI_COMM_WORLD as a fit.Comm.
type Comm struct {
	rank, size int
}

// Init starts MPI (once; later calls return the same Comm).
func Init() (*Comm, error) {
	var c *Comm
	var err error
	once.Do(func() {
		calls = make(chan func())
		started := make(chan struct{})
		go func() {
			runtime.LockOSThread() // MPI_THREAD_FUNNELED: one thread for every call
			close(started)
			for f := range calls {
				f()
			}
		}()
		<-started
	})
	do(func() {
		var provided C.int
		if rc := C.gob_init(&provided); rc != C.MPI_SUCCESS {
			err = fmt.Errorf("mpi: MPI_Init_thread failed (%d)", int(rc))
			return
		}
		var r, s C.int
		if C.gob_rank(&r) != C.MPI_SUCCESS || C.gob_size(&s) != C.MPI_SUCCESS {
			err = fmt.Errorf("mpi: no rank or size")
			return
		}
		c = &Comm{rank: int(r), size: int(s)}
	})
	return c, err
}

// Rank is this process's rank.
func (c *Comm) Rank() int { return c.rank }

// Size is the number of ranks.
func (c *Comm) Size() int { return c.size }

// Allgather concatenates every rank's data in rank order on every rank
// (MPI_Allgather of the lengths, then MPI_Allgatherv).
func (c *Comm) Allgather(data []float64) ([]float64, error) {
	var out []float64
	var err error
	do(func() {
		counts := make([]C.int, c.size)
		if rc := C.gob_counts(C.int(len(data)), (*C.int)(unsafe.Pointer(&counts[0]))); rc != C.MPI_SUCCESS {
			err = fmt.Errorf("mpi: MPI_Allgather failed (%d)", int(rc))
			return
		}
		displs := make([]C.int, c.size)
		total := 0
		for i, n := range counts {
			displs[i] = C.int(total)
			total += int(n)
		}
		// C buffers: cgo may not keep Go pointers to Go memory the C side
		// writes through for the whole call otherwise.
		send := (*C.double)(C.malloc(C.size_t(max(1, len(data)) * 8)))
		recv := (*C.double)(C.malloc(C.size_t(max(1, total) * 8)))
		defer C.free(unsafe.Pointer(send))
		defer C.free(unsafe.Pointer(recv))
		copy(unsafe.Slice((*float64)(unsafe.Pointer(send)), max(1, len(data))), data)
		if rc := C.gob_allgatherv(send, C.int(len(data)), recv, (*C.int)(unsafe.Pointer(&counts[0])),
			(*C.int)(unsafe.Pointer(&displs[0]))); rc != C.MPI_SUCCESS {
			err = fmt.Errorf("mpi: MPI_Allgatherv failed (%d)", int(rc))
			return
		}
		out = append([]float64(nil), unsafe.Slice((*float64)(unsafe.Pointer(recv)), total)...)
	})
	return out, err
}

// Finalize ends MPI.
func Finalize() {
	if calls == nil {
		return
	}
	do(func() { C.gob_finalize() })
}

// Abort ends every rank with code (one rank's failure must not leave the
// others waiting in a collective call).
func Abort(code int) {
	if calls == nil {
		return
	}
	do(func() { C.gob_abort(C.int(code)) })
}
