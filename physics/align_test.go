package physics

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestLaneDataAligned: every vector the lane kernels load or store from
// memory they own starts at a 64-byte boundary (align.go says why):
// laneReps' repeated values, the lists of laneLists, the forward rows'
// buffers and the loss rows' records and scratch. The expected offsets
// are multiples of 64 by definition. (An array in a struct that also
// holds pointers, as the forward rows' geometry and the loss rows' ∂L/∂I
// were, sits 8 bytes past where the allocator placed the struct: this
// fails then.)
func TestLaneDataAligned(t *testing.T) {
	laneValType := reflect.TypeOf(laneVal{})
	rt := reflect.TypeOf(laneReps{})
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Type == laneValType || (f.Type.Kind() == reflect.Array && f.Type.Elem() == laneValType) {
			if f.Offset%lineBytes != 0 {
				t.Errorf("laneReps.%s at offset %d: not a multiple of %d", f.Name, f.Offset, lineBytes)
			}
		}
	}
	for _, sz := range []uintptr{unsafe.Sizeof(laneVal{}), unsafe.Sizeof(laneSrc{}), unsafe.Sizeof(lossFront{}), unsafe.Sizeof(termLanes{}), unsafe.Sizeof(shapeSums{})} {
		if sz%lineBytes != 0 {
			t.Errorf("a lane record of %d bytes: a list of them would leave the boundary", sz)
		}
	}

	c := &Config{FPixels: 37, SPixels: 5, Oversample: 3, PhiSteps: 3, Domains: 1, Sources: 2, ThickSteps: 2, Thick: true,
		Beam: [3]float64{1, 0, 0}, PolarAxis: [3]float64{0, 0, 1}, Spindle: [3]float64{0, 0, 1},
		ROIFMax: 36, ROISMax: 4, Interpolate: true, HasHKL: true, HMin: -2, HMax: 2, KMin: -2, KMax: 2, LMin: -2, LMax: 2}
	p := smallParams(20)
	p[PThickStep], p[PMu] = 100e-6, 1/500e-6
	in := &Inputs{P: p, Fhkl: make([]float64, c.TableLen()), Sources: []float64{1, 0, 0, 1, 1, 0, 0, 1},
		Mosaic: []float64{1, 0, 0, 0}, Mask: []float64{0}}
	k := newKernel(c, in)
	if k.ll.orient == nil {
		t.Fatal("no repeated orientations: the check below would see none")
	}
	rb := k.newRowBuf()
	var w gradWork
	r := w.recs(c.Oversample, c.ThickSteps)
	w.orientScratch(len(k.orient))
	checks := map[string]unsafe.Pointer{
		"laneReps": unsafe.Pointer(k.lr),
		"subF":     unsafe.Pointer(&k.ll.subF[0]), "odet": unsafe.Pointer(&k.ll.odet[0]),
		"orient": unsafe.Pointer(&k.ll.orient[0]), "src": unsafe.Pointer(&k.ll.src[0]),
		"rowBuf.f": unsafe.Pointer(&rb.f[0]), "rowBuf.v": unsafe.Pointer(&rb.v[0]), "rowBuf.w": unsafe.Pointer(&rb.w[0]),
		"rowBuf.polar": unsafe.Pointer(&rb.polar[0]), "rowBuf.par": unsafe.Pointer(&rb.par[0]),
		"rowBuf.sdet": unsafe.Pointer(&rb.sdet[0]), "rowBuf.geo": unsafe.Pointer(rb.geo), "rowBuf.cube": unsafe.Pointer(&rb.cube[0]),
		"lossRecs.g": unsafe.Pointer(r.g), "lossRecs.capture": unsafe.Pointer(r.capture),
		"lossRecs.subs": unsafe.Pointer(&r.subs[0]), "lossRecs.sdetRep": unsafe.Pointer(&r.sdetRep[0]),
		"gradWork.oinc": unsafe.Pointer(&w.oinc[0]),
	}
	// The loss rows' scratch, for a row with a spot shape that
	// interpolates (whatever this kernel's structure takes).
	k.shapeLanes, w.interp = true, true
	J, S := c.ThickSteps*c.Oversample*c.Oversample, len(k.src)
	w.rowScratch(k, r, J, 37, c.ThickSteps*c.Oversample, S, S*len(k.orient))
	checks["gradWork.hkl"], checks["gradWork.dsq"], checks["gradWork.back"] = unsafe.Pointer(&w.hkl[0]), unsafe.Pointer(&w.dsq[0]), unsafe.Pointer(&w.back[0])
	checks["gradWork.cube"], checks["lossRecs.shape"] = unsafe.Pointer(&w.cube[0]), unsafe.Pointer(r.shape)
	for name, ptr := range checks {
		if uintptr(ptr)%lineBytes != 0 {
			t.Errorf("%s at %d past a 64-byte boundary", name, uintptr(ptr)%lineBytes)
		}
	}
}

// TestAlignedMake: alignedMake's values start at a 64-byte boundary, are
// as many as asked for and are zero and writable, for lengths 0–299 of
// three element sizes (8, 12 and 64 bytes), among them lengths at which
// plain make starts off the boundary (the test counts them: without
// such, it would show nothing); and a type that holds pointers is
// refused.
func TestAlignedMake(t *testing.T) {
	offMake := 0
	check := func(name string, n int, p unsafe.Pointer, length int, plain unsafe.Pointer) {
		if n > 0 && uintptr(p)%lineBytes != 0 {
			t.Errorf("%s n=%d: at %d past a boundary", name, n, uintptr(p)%lineBytes)
		}
		if length != n {
			t.Errorf("%s n=%d: %d values", name, n, length)
		}
		if n > 0 && uintptr(plain)%lineBytes != 0 {
			offMake++
		}
	}
	for n := range 300 {
		a := alignedMake[float64](n)
		b := alignedMake[[3]int32](n)
		c := alignedMake[laneVal](n)
		var pa, pb, pc unsafe.Pointer
		pm, qm, rm := make([]float64, n), make([][3]int32, n), make([]laneVal, n)
		var ppm, pqm, prm unsafe.Pointer
		if n > 0 {
			for i := range a {
				if a[i] != 0 || b[i] != [3]int32{} || c[i] != (laneVal{}) {
					t.Fatalf("n=%d: value %d not zero", n, i)
				}
				a[i], b[i][2], c[i][7] = 1, 2, 3
			}
			pa, pb, pc = unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&c[0])
			ppm, pqm, prm = unsafe.Pointer(&pm[0]), unsafe.Pointer(&qm[0]), unsafe.Pointer(&rm[0])
		}
		check("float64", n, pa, len(a), ppm)
		check("[3]int32", n, pb, len(b), pqm)
		check("laneVal", n, pc, len(c), prm)
	}
	if offMake == 0 {
		t.Error("plain make started every slice on a boundary: the lengths show nothing")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("alignedMake of a struct with a slice in it: no panic")
			}
		}()
		alignedMake[struct {
			x [8]float64
			s []int
		}](1)
	}()
	for _, typ := range []reflect.Type{reflect.TypeFor[laneReps](), reflect.TypeFor[laneSrc](), reflect.TypeFor[lossSub](), reflect.TypeFor[shapeSums]()} {
		if !pointerFree(typ) {
			t.Errorf("%v holds pointers", typ)
		}
	}
}
