// Package lanegen writes the physics package's lane kernels from their one
// source, lanes.go.
//
// lanes.go is ordinary Go, written against a small lane vocabulary: the
// vector type vf (lanes float64 values), its mask vm and bit pattern vu,
// the constant lanes and a few functions (vbc, vload, …), with vector
// methods named as simd/archsimd's (Add, Mul, Merge, …). Each target
// (Targets) spells the vocabulary out: the scalar one as float64
// operators and the few helpers of lanes_scalar.go, the AVX2 one as
// simd/archsimd's Float64x4 types, functions and methods, the AVX-512
// one as its Float64x8 ones.
//
// Generate makes one copy of lanes.go per target (Targets): the scalar
// kernel (lanes_gen.go, names as written), the AVX2 kernel
// (lanes_avx2_gen.go) and the AVX-512 kernel (lanes_avx512_gen.go), each
// vector kernel again for Go 1.27 (lanes_avx2_go127_gen.go,
// lanes_avx512_go127_gen.go: simd/archsimd's new names), in
// the vector copies every name that lanes.go declares and every name of
// the vocabulary suffixed. In both, the calls of the functions marked
// //lanegen:inline are replaced by their bodies: Go's inliner leaves
// functions of this size as calls, and a call in a hot loop makes the
// compiler spill every live vector around it. Names lanes.go uses without
// declaring (the kernel's fields, scalar helpers) are left alone, so that
// the copies share them.
//
// An inlined function must end in its only return statement; a call of
// one may stand anywhere in an assignment, expression or return
// statement, not in the condition or header of an if, for or switch (the
// body is inserted before the statement that holds the call).
//
// The one-lane copy reads and writes a lane of a slice as x[i] (oneLane):
// its vocabulary would spell it x[i:][0], a slice formed and checked
// twice.
package lanegen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"strings"
)

// Vocabulary lists the names of the lane vocabulary (lanes_scalar.go),
// which the vector targets declare again with their suffix.
var Vocabulary = []string{
	"lanes", "vf", "vm", "vu", "vbc", "vbcp", "vk", "vload", "vloadSlice", "vrep", "vbits", "vfloat", "vint32",
	"vxor", "vand", "vor", "vshl", "vshrv", "vany", "vzeroupper", "vaddseq", "vs", "vslotadd", "vloadF32Slice", "vstoreF32Slice",
	"vgather", "vgatherCube", "vgatherIn",
}

// Targets are the generated copies: file name, name suffix, build
// constraint ("" for none).
var Targets = []Target{
	{File: "lanes_gen.go", Lanes: 1, Import: "math", Words: map[string]string{
		"vf":         "float64",
		"vm":         "bool",
		"vu":         "uint64",
		"lanes":      "1",
		"vbc":        "$1",
		"vbcp":       "$1[0]",
		"vk":         "float64($1)",
		"vload":      "$1[0]",
		"vloadSlice": "$1[0]",
		"vrep":       "$1[0]",
		// vloadF32Slice: float32 values, each exactly as float64.
		"vloadF32Slice": "float64($1[0])",
		// vstoreF32Slice: values rounded to float32 (as Go converts).
		"vstoreF32Slice": "storeF32($1, $2)",
		"vbits":          "math.Float64bits($1)",
		"vfloat":         "math.Float64frombits($1)",
		"vint32":         "storeInt32($1, $2)",
		"vxor":           "($1 ^ $2)",
		"vand":           "($1 & $2)",
		"vor":            "($1 | $2)",
		"vshl":           "($1 << $2)",
		"vshrv":          "($1 >> $2)",
		"vany":           "$1",
		"vzeroupper":     "nop",
		"vaddseq":        "($1 + $2)",
		"vs":             "float64",
		"vslotadd":       "($1 + $2)",
		// vgather(table, ia): table[ia[i]] in lane i (vector targets:
		// a hand-written function each; simd/archsimd has no gather).
		"vgather": "$1[$2[0]]",
		// vgatherIn: vgather, written out in place in the vector
		// targets (gatherExpr; the forward kernels' lookup: a gradient
		// kernel holding the written-out gather was slower than with
		// the call).
		"vgatherIn": "$1[$2[0]]",
		// vgatherCube(table, ia, hs, ks, cube): the 4×4×4 values from
		// cell ia[i] in lane i (interpFLanes; a hand-written function
		// each, lanes_scalar.go's gatherCube here).
		"vgatherCube": "gatherCube($1, $2, $3, $4, $5)",
	}, Methods: map[string]string{
		"Add":          "($0 + $1)",
		"Sub":          "($0 - $1)",
		"Mul":          "($0 * $1)",
		"Div":          "($0 / $1)",
		"Sqrt":         "math.Sqrt($0)",
		"Ceil":         "math.Ceil($0)",
		"Floor":        "math.Floor($0)",
		"Equal":        "($0 == $1)",
		"NotEqual":     "($0 != $1)",
		"Less":         "($0 < $1)",
		"LessEqual":    "($0 <= $1)",
		"Greater":      "($0 > $1)",
		"GreaterEqual": "($0 >= $1)",
		"And":          "($0 && $1)",
		"Or":           "($0 || $1)",
		"Merge":        "merge($0, $1, $2)",
		"StoreSlice":   "store($0, $1)",
	}},
	avx2("lanes_avx2_gen.go", go126), avx512("lanes_avx512_gen.go", go126),
	avx2("lanes_avx2_go127_gen.go", go127), avx512("lanes_avx512_go127_gen.go", go127),
}

// The vector targets come in two copies: simd/archsimd names its loads
// and stores differently in Go 1.26 and 1.27 (and Go 1.27 allocates
// AVX-512 values to X16–X31 as well as X0–X14, so its kernels spill
// less).
// Each copy calls its Go's names directly: small functions that called
// the one or the other (inlined) cost the Go 1.26 kernels a no-op
// instruction per call and moved their stack frames, which this
// machine's AVX-512 gradient is sensitive to (physics docs).
const (
	go126 = "!go1.27"
	go127 = "go1.27"
)

func avx2(file, goVersion string) Target {
	return Target{File: file, Suffix: "AVX2", Tag: "goexperiment.simd && amd64 && " + goVersion, Lanes: 4,
		Import: "simd/archsimd", Words: archsimdWords(4, goVersion),
		Methods: archsimdMethods(goVersion, nil)}
}

func avx512(file, goVersion string) Target {
	return Target{File: file, Suffix: "AVX512", Tag: "goexperiment.simd && amd64 && " + goVersion, Lanes: 8,
		Import: "simd/archsimd", Words: archsimdWords(8, goVersion), Methods: archsimdMethods(goVersion, map[string]string{
			// AVX-512 rounds with VRNDSCALEPD: at scale 2⁰ its ceiling
			// and floor are VROUNDPD's.
			"Ceil":  "$0.CeilScaled(0)",
			"Floor": "$0.FloorScaled(0)",
		})}
}

// archsimdMethods is the methods replaced for Go goVersion, with more
// added.
func archsimdMethods(goVersion string, more map[string]string) map[string]string {
	m := map[string]string{}
	if goVersion == go127 {
		m["StoreSlice"] = "$0.Store($1)"
	}
	for k, v := range more {
		m[k] = v
	}
	return m
}

// archsimdWords spells the vocabulary in simd/archsimd's types of n
// float64 lanes for Go goVersion: vaddseq, and for Go 1.26's n > 4
// vslotadd, are left out (suffixed: a hand-written file of the target
// declares them).
func archsimdWords(n int, goVersion string) map[string]string {
	w := map[string]string{
		"vf":    "archsimd.Float64xN",
		"vm":    "archsimd.Mask64xN",
		"vu":    "archsimd.Uint64xN",
		"lanes": "N",
		"vbc":   "archsimd.BroadcastFloat64xN($1)",
		// vbcp(p): p[0] in every lane, from a two-value load (VEX; vbc's
		// float64 argument would come through a legacy SSE register).
		"vbcp":           "archsimd.LoadFloat64x2($1).Broadcast1ToN()",
		"vload":          "archsimd.LoadFloat64xN($1)",
		"vloadSlice":     "archsimd.LoadFloat64xNSlice($1)",
		"vloadF32Slice":  "archsimd.LoadFloat32xNSlice($1).ConvertToFloat64()",
		"vstoreF32Slice": "$1.ConvertToFloat32().StoreSlice($2)",
		"vbits":          "$1.AsUint64xN()",
		"vfloat":         "$1.AsFloat64xN()",
		"vint32":         "$1.ConvertToInt32().Store($2)",
		"vxor":           "$1.Xor($2)",
		"vand":           "$1.And($2)",
		"vor":            "$1.Or($2)",
		"vshl":           "$1.ShiftAllLeft($2)",
		// vshrv: each lane shifted right by the count in that lane of
		// its second argument (VPSRLVQ). ShiftAllRight by a constant is
		// no immediate in Go 1.26: it moves the count into a vector
		// register with a legacy SSE MOVQ, whose switch from AVX costs
		// more than the whole logarithm around it.
		"vshrv":      "$1.ShiftRight($2)",
		"vany":       "($1.ToBits() != 0)",
		"vzeroupper": "archsimd.ClearAVXUpperBits",
	}
	w["vgatherIn"] = gatherExpr(n)
	if goVersion == go127 {
		// Loads from an array pointer are LoadArray, from a slice
		// Load; stores to a slice Store. A broadcast from a vector's
		// first lane is not exported: the float64 broadcast is
		// VEX-encoded in Go 1.27 (VMOVSD, VBROADCASTSD).
		w["vbcp"] = "archsimd.BroadcastFloat64xN($1[0])"
		w["vload"] = "archsimd.LoadFloat64xNArray($1)"
		w["vloadSlice"] = "archsimd.LoadFloat64xN($1)"
		w["vloadF32Slice"] = "archsimd.LoadFloat32xN($1).ConvertToFloat64()"
		w["vstoreF32Slice"] = "$1.ConvertToFloat32().Store($2)"
		w["vint32"] = "$1.ConvertToInt32().StoreArray($2)"
	}
	for k, v := range w {
		w[k] = strings.ReplaceAll(v, "N", fmt.Sprint(n))
	}
	// vrep(p): a laneVal's first n values, loaded as vload loads an
	// array (laneVal holds 8 values: for n = 8 its pointer converts as
	// it is).
	rep := fmt.Sprintf("(*[%d]float64)($1[:%d])", n, n)
	if n == 8 {
		rep = "(*[8]float64)($1)"
	}
	w["vrep"] = strings.ReplaceAll(w["vload"], "$1", rep)
	// Slot vectors: with Go 1.27 the widest lanes' vectors (eight
	// slots, slots8.go); with Go 1.26 four lanes (slots4.go), which the
	// AVX-512 kernels add a vector's halves to (vslotaddAVX512, hand-written).
	w["vs"] = "archsimd.Float64x4"
	if n == 4 {
		w["vslotadd"] = "$1.Add($2)"
	}
	if goVersion == go127 {
		w["vs"] = w["vf"]
		w["vslotadd"] = "$1.Add($2)"
	}
	return w
}

// gatherExpr is vgather(table, ia) for n lanes written out as one
// expression, as the hand-written vgatherAVX2 and vgatherAVX512 build it:
// table[ia[i]] in lane i, pairs of lanes broadcast and set, the pairs
// put together. The forward kernels take it (vgatherIn): Go's inliner
// leaves the call in kernels it considers big, and with the call the
// mosaic case's forward took 1.04–1.06× as long (Go 1.27 and 1.26,
// AVX-512, on an AMD EPYC, Zen 4).
func gatherExpr(n int) string {
	pair := func(i int) string {
		return fmt.Sprintf("archsimd.BroadcastUint64x2($1[$2[%d]]).SetElem(1, $1[$2[%d]])", i, i+1)
	}
	quad := func(i int) string {
		return fmt.Sprintf("archsimd.Uint64x4{}.SetLo(%s).SetHi(%s)", pair(i), pair(i+2))
	}
	if n == 4 {
		return quad(0)
	}
	return fmt.Sprintf("archsimd.Uint64x8{}.SetLo(%s).SetHi(%s)", quad(0), quad(4))
}

// Target is one generated copy of lanes.go.
type Target struct {
	File   string // the file written
	Suffix string // appended to every name lanes.go declares ("" for none)
	Tag    string // build constraint ("" for none)
	Lanes  int    // float64 values per vector
	Import string // the package the vector types come from
	// Words replaces the vocabulary: types and constants by the name or
	// expression given, calls by the expression with $1, $2, … standing
	// for the arguments. Vocabulary names not listed are suffixed (and
	// declared by a hand-written file for the target).
	Words map[string]string
	// Methods replaces calls of the vector types' methods (by name) by the
	// expression with $0 standing for the receiver: the scalar copy's
	// operators, a vector type's spelling where it differs.
	Methods map[string]string
}

// Template is the build constraint that keeps lanes.go itself out of
// builds: only its copies are compiled.
const Template = "lanegen"

// Generate returns the copy of the template src (the contents of
// lanes.go) for target t.
func Generate(src []byte, t Target) ([]byte, error) {
	suffix, tag, lanesN := t.Suffix, t.Tag, t.Lanes
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "lanes.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	in := &inliner{fset: fset, funcs: map[string]*ast.FuncDecl{}}
	variants, err := variantsOf(fset, f)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && hasLine(fd, "//lanegen:inline") {
			in.funcs[fd.Name.Name] = fd
			for _, v := range variants[fd.Name.Name] {
				in.funcs[v.Name.Name] = v
			}
		}
	}
	// The copies after the functions, in the order of the originals.
	var copies []ast.Decl
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			for _, v := range variants[fd.Name.Name] {
				copies = append(copies, v)
			}
		}
	}
	f.Decls = append(f.Decls, copies...)
	// Inline into every function (each body is rewritten on a copy, so
	// that the inlined functions' own bodies stay as written).
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			body, err := in.block(clone(fset, fd.Body).(*ast.BlockStmt), 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", fd.Name.Name, err)
			}
			fd.Body = body
		}
	}
	if t.Import != "" && t.Suffix == "" {
		f.Decls = append([]ast.Decl{&ast.GenDecl{Tok: token.IMPORT, Specs: []ast.Spec{
			&ast.ImportSpec{Path: &ast.BasicLit{Kind: token.STRING, Value: fmt.Sprintf("%q", t.Import)}}}}}, f.Decls...)
	}
	if suffix == "" {
		if err := words(f, t.Words, t.Methods); err != nil {
			return nil, err
		}
		if lanesN == 1 {
			oneLane(f)
		}
	} else {
		// Constants vk(c): loads from a table of them repeated.
		var table []ast.Expr
		index := map[string]int{}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) != 1 {
				return true
			}
			if id, ok := c.Fun.(*ast.Ident); !ok || id.Name != "vk" {
				return true
			}
			var b bytes.Buffer
			printer.Fprint(&b, fset, c.Args[0])
			key := b.String()
			i, ok := index[key]
			if !ok {
				i = len(table)
				index[key] = i
				var elts []ast.Expr
				for j := 0; j < lanesN; j++ {
					elts = append(elts, ast.NewIdent(key))
				}
				table = append(table, &ast.CompositeLit{Elts: elts})
			}
			c.Fun = ast.NewIdent("vload")
			c.Args = []ast.Expr{&ast.UnaryExpr{Op: token.AND, X: &ast.IndexExpr{X: ast.NewIdent("vkTable"), Index: &ast.BasicLit{Kind: token.INT, Value: fmt.Sprint(i)}}}}
			return false
		})
		if len(table) > 0 {
			f.Decls = append(f.Decls, &ast.GenDecl{Tok: token.VAR, Specs: []ast.Spec{&ast.ValueSpec{
				Names:  []*ast.Ident{ast.NewIdent("vkTable")},
				Values: []ast.Expr{&ast.CompositeLit{Type: &ast.ArrayType{Len: &ast.Ellipsis{}, Elt: &ast.ArrayType{Len: ast.NewIdent("lanes"), Elt: ast.NewIdent("float64")}}, Elts: table}},
			}}})
		}
		rename := map[string]bool{}
		for _, n := range Vocabulary {
			rename[n] = true
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.Name != "init" {
					rename[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						rename[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							rename[n.Name] = true
						}
					}
				}
			}
		}
		delete(rename, "_")
		if err := words(f, t.Words, t.Methods); err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && rename[id.Name] && t.Words[id.Name] == "" {
				id.Name += suffix
			}
			return true
		})
		if t.Import != "" {
			f.Decls = append([]ast.Decl{&ast.GenDecl{Tok: token.IMPORT, Specs: []ast.Spec{
				&ast.ImportSpec{Path: &ast.BasicLit{Kind: token.STRING, Value: fmt.Sprintf("%q", t.Import)}}}}}, f.Decls...)
		}
	}
	// The copy keeps only the code: lanes.go is what people read.
	f.Comments, f.Doc = nil, nil
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Field:
			x.Doc, x.Comment = nil, nil
		case *ast.ValueSpec:
			x.Doc, x.Comment = nil, nil
		case *ast.TypeSpec:
			x.Doc, x.Comment = nil, nil
		}
		return true
	})
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			d.Doc = nil
		case *ast.GenDecl:
			d.Doc = nil
		}
	}
	var body bytes.Buffer
	if err := printer.Fprint(&body, fset, f); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by physics/internal/lanegen from lanes.go; DO NOT EDIT.\n\n")
	if tag != "" {
		fmt.Fprintf(&out, "//go:build %s\n\n", tag)
	}
	out.Write(body.Bytes())
	return format.Source(out.Bytes())
}

// words replaces the vocabulary in f by the target's words and methods.
func words(f *ast.File, w, methods map[string]string) error {
	var err error
	var walk func(n ast.Node) bool
	var replace func(e ast.Expr) ast.Expr
	done := map[ast.Node]bool{} // what a replacement produced: not words any more
	replace = func(e ast.Expr) ast.Expr {
		if done[e] {
			return e
		}
		switch x := e.(type) {
		case *ast.Ident:
			if r, ok := w[x.Name]; ok && !strings.Contains(r, "$") {
				if y, e := parser.ParseExpr(r); e == nil {
					return y
				} else if err == nil {
					err = e
				}
			}
		case *ast.CallExpr:
			var r, name string
			var recv ast.Expr
			switch fn := x.Fun.(type) {
			case *ast.Ident:
				r, name = w[fn.Name], fn.Name
				if !strings.Contains(r, "$") {
					r = ""
				}
			case *ast.SelectorExpr:
				if m, ok := methods[fn.Sel.Name]; ok {
					r, name, recv = m, fn.Sel.Name, fn.X
				}
			}
			if r == "" {
				break
			}
			// The receiver and arguments first (they may hold words).
			args := x.Args
			if recv != nil {
				args = append([]ast.Expr{recv}, args...)
			}
			for i, a := range args {
				args[i] = replace(a)
				ast.Inspect(args[i], walk)
			}
			src := r
			first := 1
			if recv != nil {
				first = 0
			}
			for i := len(args) - 1; i >= 0; i-- {
				var b bytes.Buffer
				printer.Fprint(&b, token.NewFileSet(), args[i])
				a := b.String()
				switch args[i].(type) {
				case *ast.Ident, *ast.BasicLit, *ast.SelectorExpr, *ast.IndexExpr, *ast.CallExpr, *ast.ParenExpr:
				default:
					a = "(" + a + ")"
				}
				src = strings.ReplaceAll(src, fmt.Sprintf("$%d", i+first), a)
			}
			y, e := parser.ParseExpr(src)
			if e != nil {
				if err == nil {
					err = fmt.Errorf("word %s: %v", name, e)
				}
				return x
			}
			ast.Inspect(y, func(n ast.Node) bool {
				done[n] = true
				return true
			})
			return stripPos(y).(ast.Expr)
		}
		return e
	}
	// Replace in every field of expression type that may hold a word.
	walk = func(n ast.Node) bool {
		if done[n] {
			return false
		}
		switch x := n.(type) {
		case *ast.CallExpr:
			x.Fun = replace(x.Fun)
			for i, a := range x.Args {
				x.Args[i] = replace(a)
			}
		case *ast.SelectorExpr:
			x.X = replace(x.X)
		case *ast.BinaryExpr:
			x.X, x.Y = replace(x.X), replace(x.Y)
		case *ast.UnaryExpr:
			x.X = replace(x.X)
		case *ast.ParenExpr:
			x.X = replace(x.X)
		case *ast.StarExpr:
			x.X = replace(x.X)
		case *ast.IndexExpr:
			x.X, x.Index = replace(x.X), replace(x.Index)
		case *ast.SliceExpr:
			x.X = replace(x.X)
			for _, b := range []*ast.Expr{&x.Low, &x.High, &x.Max} {
				if *b != nil {
					*b = replace(*b)
				}
			}
		case *ast.CompositeLit:
			x.Type = replace(x.Type)
			for i, e := range x.Elts {
				x.Elts[i] = replace(e)
			}
		case *ast.KeyValueExpr:
			x.Value = replace(x.Value)
		case *ast.ArrayType:
			x.Len, x.Elt = replace(x.Len), replace(x.Elt)
		case *ast.Field:
			x.Type = replace(x.Type)
		case *ast.ValueSpec:
			x.Type = replace(x.Type)
			for i, e := range x.Values {
				x.Values[i] = replace(e)
			}
		case *ast.AssignStmt:
			for i, e := range x.Rhs {
				x.Rhs[i] = replace(e)
			}
		case *ast.ExprStmt:
			x.X = replace(x.X)
		case *ast.ReturnStmt:
			for i, e := range x.Results {
				x.Results[i] = replace(e)
			}
		case *ast.TypeSpec:
			x.Type = replace(x.Type)
		case *ast.MapType:
			x.Key, x.Value = replace(x.Key), replace(x.Value)
		case *ast.IfStmt:
			x.Cond = replace(x.Cond)
		case *ast.ForStmt:
			x.Cond = replace(x.Cond)
		case *ast.RangeStmt:
			x.X = replace(x.X)
		case *ast.SwitchStmt:
			x.Tag = replace(x.Tag)
		case *ast.CaseClause:
			for i, e := range x.List {
				x.List[i] = replace(e)
			}
		case *ast.IncDecStmt:
			x.X = replace(x.X)
		}
		return true
	}
	ast.Inspect(f, walk)
	return err
}

// hasLine says whether fd's doc comment has the line text.
func hasLine(fd *ast.FuncDecl, text string) bool {
	if fd.Doc != nil {
		for _, c := range fd.Doc.List {
			if c.Text == text {
				return true
			}
		}
	}
	return false
}

// variantsOf returns, by the name of the function they copy, the copies
// that //lanegen:variant lines in functions' doc comments ask for:
//
//	//lanegen:variant name old=new …
//
// declares name, the function with every identifier old in its body
// renamed new (a function called in its place, say). A variant of an
// inlined function is inlined too. The copies are made before anything
// is inlined, so that a renamed call is inlined as the function it names.
func variantsOf(fset *token.FileSet, f *ast.File) (map[string][]*ast.FuncDecl, error) {
	out := map[string][]*ast.FuncDecl{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Doc == nil || fd.Body == nil {
			continue
		}
		for _, c := range fd.Doc.List {
			words := strings.Fields(c.Text)
			if len(words) == 0 || words[0] != "//lanegen:variant" {
				continue
			}
			if len(words) < 3 {
				return nil, fmt.Errorf("%s: %q: want //lanegen:variant name old=new …", fset.Position(c.Pos()), c.Text)
			}
			renames := map[string]string{}
			for _, w := range words[2:] {
				old, new, ok := strings.Cut(w, "=")
				if !ok || old == "" || new == "" {
					return nil, fmt.Errorf("%s: %q: want old=new", fset.Position(c.Pos()), w)
				}
				renames[old] = new
			}
			v := clone(fset, fd).(*ast.FuncDecl)
			v.Doc, v.Name = nil, ast.NewIdent(words[1])
			used := map[string]bool{}
			ast.Inspect(v.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					if new, ok := renames[id.Name]; ok {
						id.Name, used[new] = new, true
					}
				}
				return true
			})
			for old, new := range renames {
				if !used[new] {
					return nil, fmt.Errorf("%s: variant %s: %s does not occur in %s", fset.Position(c.Pos()), words[1], old, fd.Name.Name)
				}
			}
			out[fd.Name.Name] = append(out[fd.Name.Name], v)
		}
	}
	return out, nil
}

// inliner replaces calls of the marked functions by their bodies.
type inliner struct {
	fset  *token.FileSet
	funcs map[string]*ast.FuncDecl
	n     int // inlined calls so far: the suffix of their local names
}

// maxDepth bounds nested inlining (an inlined function that calls itself
// would never end).
const maxDepth = 8

// block rewrites the statements of b (and of the blocks inside them).
func (in *inliner) block(b *ast.BlockStmt, depth int) (*ast.BlockStmt, error) {
	var out []ast.Stmt
	for _, s := range b.List {
		pre, err := in.stmt(s, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, pre...)
	}
	b.List = out
	return b, nil
}

// stmt returns s with the inlined calls in it replaced by the statements
// that compute them, followed by s itself reading their results.
func (in *inliner) stmt(s ast.Stmt, depth int) ([]ast.Stmt, error) {
	var pre []ast.Stmt
	expr := func(e ast.Expr) (ast.Expr, error) { return in.expr(e, &pre, depth) }
	switch s := s.(type) {
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 && len(s.Lhs) > 1 {
			// A call with several results: its temporaries in order.
			call, ok := s.Rhs[0].(*ast.CallExpr)
			if fd := in.target(call); ok && fd != nil {
				res, err := in.inline(call, fd, &pre, depth)
				if err != nil {
					return nil, err
				}
				s.Rhs = res
				return append(pre, s), nil
			}
		}
		for i, e := range s.Rhs {
			r, err := expr(e)
			if err != nil {
				return nil, err
			}
			s.Rhs[i] = r
		}
		for i, e := range s.Lhs {
			r, err := expr(e)
			if err != nil {
				return nil, err
			}
			s.Lhs[i] = r
		}
	case *ast.ExprStmt:
		if call, ok := s.X.(*ast.CallExpr); ok {
			if fd := in.target(call); fd != nil {
				if fd.Type.Results.NumFields() != 0 {
					return nil, fmt.Errorf("%s: %s's results are not used", in.where(call, fd), fd.Name.Name)
				}
				// A function without results, called as a statement:
				// its body in a block.
				if _, err := in.inline(call, fd, &pre, depth); err != nil {
					return nil, err
				}
				return pre, nil
			}
		}
		r, err := expr(s.X)
		if err != nil {
			return nil, err
		}
		s.X = r
	case *ast.ReturnStmt:
		for i, e := range s.Results {
			r, err := expr(e)
			if err != nil {
				return nil, err
			}
			s.Results[i] = r
		}
	case *ast.DeclStmt:
		if g, ok := s.Decl.(*ast.GenDecl); ok {
			for _, sp := range g.Specs {
				if v, ok := sp.(*ast.ValueSpec); ok {
					for i, e := range v.Values {
						r, err := expr(e)
						if err != nil {
							return nil, err
						}
						v.Values[i] = r
					}
				}
			}
		}
	case *ast.BlockStmt:
		if _, err := in.block(s, depth); err != nil {
			return nil, err
		}
	case *ast.IfStmt:
		if err := in.noCalls(s.Init, s.Cond); err != nil {
			return nil, err
		}
		if _, err := in.block(s.Body, depth); err != nil {
			return nil, err
		}
		if s.Else != nil {
			els, err := in.stmt(s.Else, depth)
			if err != nil {
				return nil, err
			}
			if len(els) != 1 {
				s.Else = &ast.BlockStmt{List: els}
			} else {
				s.Else = els[0]
			}
		}
	case *ast.ForStmt:
		if err := in.noCalls(s.Init, s.Cond, s.Post); err != nil {
			return nil, err
		}
		if _, err := in.block(s.Body, depth); err != nil {
			return nil, err
		}
	case *ast.RangeStmt:
		if err := in.noCalls(s.X); err != nil {
			return nil, err
		}
		if _, err := in.block(s.Body, depth); err != nil {
			return nil, err
		}
	case *ast.SwitchStmt:
		if err := in.noCalls(s.Init, s.Tag); err != nil {
			return nil, err
		}
		for _, c := range s.Body.List {
			cc := c.(*ast.CaseClause)
			if err := in.noCalls(exprNodes(cc.List)...); err != nil {
				return nil, err
			}
			var body []ast.Stmt
			for _, st := range cc.Body {
				r, err := in.stmt(st, depth)
				if err != nil {
					return nil, err
				}
				body = append(body, r...)
			}
			cc.Body = body
		}
	default:
		if err := in.noCalls(s); err != nil {
			return nil, err
		}
	}
	return append(pre, s), nil
}

func exprNodes(es []ast.Expr) []ast.Node {
	var ns []ast.Node
	for _, e := range es {
		ns = append(ns, e)
	}
	return ns
}

// noCalls reports an inlined call inside nodes, where the body could not
// be inserted before.
func (in *inliner) noCalls(nodes ...ast.Node) error {
	var err error
	for _, n := range nodes {
		if n == nil || isNilNode(n) {
			continue
		}
		ast.Inspect(n, func(x ast.Node) bool {
			if c, ok := x.(*ast.CallExpr); ok && in.target(c) != nil && err == nil {
				err = fmt.Errorf("%s: call of an inlined function where its body cannot go", in.fset.Position(c.Pos()))
			}
			return err == nil
		})
	}
	return err
}

func isNilNode(n ast.Node) bool {
	switch n := n.(type) {
	case ast.Stmt:
		return n == nil
	case ast.Expr:
		return n == nil
	}
	return false
}

// target returns the marked function c calls, or nil.
func (in *inliner) target(c *ast.CallExpr) *ast.FuncDecl {
	if c == nil {
		return nil
	}
	switch f := c.Fun.(type) {
	case *ast.Ident:
		if fd := in.funcs[f.Name]; fd != nil && fd.Recv == nil {
			return fd
		}
	case *ast.SelectorExpr:
		if fd := in.funcs[f.Sel.Name]; fd != nil && fd.Recv != nil {
			return fd
		}
	}
	return nil
}

// expr returns e with its inlined calls (innermost first, left to right)
// replaced by their results, appending the statements that compute them
// to pre.
func (in *inliner) expr(e ast.Expr, pre *[]ast.Stmt, depth int) (ast.Expr, error) {
	var err error
	sub := func(x ast.Expr) ast.Expr {
		if err != nil || x == nil {
			return x
		}
		var r ast.Expr
		r, err = in.expr(x, pre, depth)
		return r
	}
	switch x := e.(type) {
	case *ast.CallExpr:
		x.Fun = sub(x.Fun)
		for i, a := range x.Args {
			x.Args[i] = sub(a)
		}
		if err != nil {
			return nil, err
		}
		if fd := in.target(x); fd != nil {
			switch fd.Type.Results.NumFields() {
			case 1:
			case 0:
				return nil, fmt.Errorf("%s: %s has no result: call it as a statement", in.where(x, fd), fd.Name.Name)
			default:
				return nil, fmt.Errorf("%s: %s has not one result: call it as the right-hand side of an assignment",
					in.fset.Position(x.Pos()), fd.Name.Name)
			}
			res, err := in.inline(x, fd, pre, depth)
			if err != nil {
				return nil, err
			}
			return res[0], nil
		}
	case *ast.SelectorExpr:
		x.X = sub(x.X)
	case *ast.BinaryExpr:
		if x.Op == token.LAND || x.Op == token.LOR {
			if e := in.noCalls(x.Y); e != nil {
				return nil, e
			}
		}
		x.X, x.Y = sub(x.X), sub(x.Y)
	case *ast.UnaryExpr:
		x.X = sub(x.X)
	case *ast.ParenExpr:
		x.X = sub(x.X)
	case *ast.StarExpr:
		x.X = sub(x.X)
	case *ast.IndexExpr:
		x.X, x.Index = sub(x.X), sub(x.Index)
	case *ast.SliceExpr:
		x.X, x.Low, x.High, x.Max = sub(x.X), sub(x.Low), sub(x.High), sub(x.Max)
	case *ast.CompositeLit:
		for i, el := range x.Elts {
			x.Elts[i] = sub(el)
		}
	case *ast.KeyValueExpr:
		x.Value = sub(x.Value)
	case *ast.Ident, *ast.BasicLit, *ast.ArrayType, *ast.FuncLit:
		if err := in.noCalls(x); err != nil {
			return nil, err
		}
	default:
		if err := in.noCalls(x); err != nil {
			return nil, err
		}
	}
	return e, err
}

// where is the position of call c of fd for an error: c's own, or, for
// a call inside a function body copied for inlining (whose positions are
// gone), fd's.
func (in *inliner) where(c ast.Node, fd *ast.FuncDecl) string {
	if p := in.fset.Position(c.Pos()); p.IsValid() {
		return p.String()
	}
	return in.fset.Position(fd.Pos()).String() + " (a call of it)"
}

// inline appends to pre the statements that compute the call c of fd
// into fresh variables and returns those variables (none for a function
// without results, whose body is then all it appends).
func (in *inliner) inline(c *ast.CallExpr, fd *ast.FuncDecl, pre *[]ast.Stmt, depth int) ([]ast.Expr, error) {
	if depth >= maxDepth {
		return nil, fmt.Errorf("%s: inlining nested deeper than %d", in.fset.Position(c.Pos()), maxDepth)
	}
	in.n++
	id := in.n
	// A fresh copy of the function, its parameters, results and locals
	// renamed apart from everything else.
	fn := clone(in.fset, fd).(*ast.FuncDecl)
	locals := map[string]bool{}
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				locals[n.Name] = true
			}
		}
	}
	fields(fn.Recv)
	fields(fn.Type.Params)
	fields(fn.Type.Results)
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if i, ok := l.(*ast.Ident); ok {
						locals[i.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, i := range n.Names {
				locals[i.Name] = true
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if i, ok := e.(*ast.Ident); ok {
						locals[i.Name] = true
					}
				}
			}
		case *ast.FuncLit:
			fields(n.Type.Params)
			fields(n.Type.Results)
		}
		return true
	})
	delete(locals, "_")
	suffix := fmt.Sprintf("_%d", id)
	renameLocals(fn, locals, suffix)
	// The body must end in its only return (a function without results:
	// have none).
	list := fn.Body.List
	noResults := fd.Type.Results.NumFields() == 0
	var ret *ast.ReturnStmt
	if noResults && len(list) > 0 {
		if r, ok := list[len(list)-1].(*ast.ReturnStmt); ok && len(r.Results) == 0 {
			list = list[:len(list)-1] // (a bare return at the end)
		}
	} else if !noResults {
		var ok bool
		ret, ok = list[len(list)-1].(*ast.ReturnStmt)
		if !ok {
			return nil, fmt.Errorf("%s: %s does not end in a return statement", in.fset.Position(fd.Pos()), fd.Name.Name)
		}
		list = list[:len(list)-1]
	}
	bad := false
	ast.Inspect(&ast.BlockStmt{List: list}, func(n ast.Node) bool {
		if _, ok := n.(*ast.ReturnStmt); ok {
			bad = true
		}
		_, lit := n.(*ast.FuncLit)
		return !lit
	})
	if bad {
		return nil, fmt.Errorf("%s: %s returns before its end", in.fset.Position(fd.Pos()), fd.Name.Name)
	}
	// Results: named or fresh, declared before the block.
	var results []ast.Expr
	var resDecl []ast.Spec
	if !noResults {
		for i, f := range fd.Type.Results.List {
			names := f.Names
			if len(names) == 0 {
				names = []*ast.Ident{nil}
			}
			for j := range names {
				n := fmt.Sprintf("r%d_%d_%d", i, j, id)
				results = append(results, ast.NewIdent(n))
				resDecl = append(resDecl, &ast.ValueSpec{Names: []*ast.Ident{ast.NewIdent(n)}, Type: clone(in.fset, f.Type).(ast.Expr)})
			}
		}
		*pre = append(*pre, &ast.DeclStmt{Decl: &ast.GenDecl{Tok: token.VAR, Specs: resDecl}})
	}
	var body []ast.Stmt
	// Bind the receiver and the parameters.
	var lhs []ast.Expr
	var rhs []ast.Expr
	if fn.Recv != nil {
		sel := c.Fun.(*ast.SelectorExpr)
		for _, n := range fn.Recv.List[0].Names {
			lhs, rhs = append(lhs, ast.NewIdent(n.Name)), append(rhs, sel.X)
		}
	}
	var args []ast.Expr
	args = append(args, c.Args...)
	k := 0
	for _, f := range fn.Type.Params.List {
		for _, n := range f.Names {
			if k >= len(args) {
				return nil, fmt.Errorf("%s: too few arguments", in.fset.Position(c.Pos()))
			}
			lhs, rhs = append(lhs, ast.NewIdent(n.Name)), append(rhs, args[k])
			k++
		}
	}
	if k < len(args) {
		return nil, fmt.Errorf("%s: too many arguments", in.fset.Position(c.Pos()))
	}
	if len(lhs) > 0 {
		body = append(body, &ast.AssignStmt{Lhs: lhs, Tok: token.DEFINE, Rhs: rhs})
		// A parameter the body does not read would not compile.
		used := map[string]bool{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if i, ok := n.(*ast.Ident); ok {
				used[i.Name] = true
			}
			return true
		})
		for _, l := range lhs {
			if n := l.(*ast.Ident).Name; !used[n] {
				body = append(body, &ast.AssignStmt{Lhs: []ast.Expr{ast.NewIdent("_")}, Tok: token.ASSIGN, Rhs: []ast.Expr{ast.NewIdent(n)}})
			}
		}
	}
	if !noResults && fn.Type.Results.List[0].Names != nil {
		var named []ast.Spec
		for _, f := range fn.Type.Results.List {
			named = append(named, &ast.ValueSpec{Names: f.Names, Type: f.Type})
		}
		body = append(body, &ast.DeclStmt{Decl: &ast.GenDecl{Tok: token.VAR, Specs: named}})
	}
	body = append(body, list...)
	if !noResults {
		vals := ret.Results
		if len(vals) == 0 { // a bare return of named results
			for _, f := range fn.Type.Results.List {
				for _, n := range f.Names {
					vals = append(vals, ast.NewIdent(n.Name))
				}
			}
		}
		var assignTo []ast.Expr
		for _, r := range results {
			assignTo = append(assignTo, ast.NewIdent(r.(*ast.Ident).Name))
		}
		body = append(body, &ast.AssignStmt{Lhs: assignTo, Tok: token.ASSIGN, Rhs: vals})
	}
	blk, err := in.block(&ast.BlockStmt{List: body}, depth+1)
	if err != nil {
		return nil, err
	}
	*pre = append(*pre, blk)
	return results, nil
}

// renameLocals appends suffix to the names in locals wherever fn uses them
// as variables (not as field or method names).
func renameLocals(fn *ast.FuncDecl, locals map[string]bool, suffix string) {
	skip := map[*ast.Ident]bool{}
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			skip[n.Sel] = true
		case *ast.KeyValueExpr:
			if i, ok := n.Key.(*ast.Ident); ok {
				skip[i] = true
			}
		case *ast.Field:
			// Struct fields of a type literal keep their names; parameters
			// are renamed (their FieldList belongs to a FuncType).
		}
		return true
	})
	skip[fn.Name] = true
	ast.Inspect(fn, func(n ast.Node) bool {
		if i, ok := n.(*ast.Ident); ok && locals[i.Name] && !skip[i] {
			i.Name += suffix
		}
		return true
	})
}

// clone returns a deep copy of n (printed and parsed again).
func clone(fset *token.FileSet, n ast.Node) ast.Node {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		panic(err)
	}
	src := b.String()
	switch n.(type) {
	case *ast.FuncDecl:
		f, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+src, 0)
		if err != nil {
			panic(fmt.Sprintf("lanegen: %v in\n%s", err, src))
		}
		return stripPos(f.Decls[0])
	case *ast.BlockStmt:
		f, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc _() "+src, 0)
		if err != nil {
			panic(fmt.Sprintf("lanegen: %v in\n%s", err, src))
		}
		return stripPos(f.Decls[0].(*ast.FuncDecl).Body)
	case ast.Expr:
		e, err := parser.ParseExpr(strings.TrimSpace(src))
		if err != nil {
			panic(fmt.Sprintf("lanegen: %v in\n%s", err, src))
		}
		return stripPos(e)
	}
	panic(fmt.Sprintf("lanegen: cannot copy %T", n))
}

// stripPos clears the positions in n: the copies come from other files,
// and the printer must not read their positions as this file's.
func stripPos(n ast.Node) ast.Node {
	ast.Inspect(n, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.Ident:
			x.NamePos = token.NoPos
		case *ast.BasicLit:
			x.ValuePos = token.NoPos
		case *ast.BlockStmt:
			x.Lbrace, x.Rbrace = token.NoPos, token.NoPos
		case *ast.CallExpr:
			x.Lparen, x.Rparen = token.NoPos, token.NoPos
		case *ast.ParenExpr:
			x.Lparen, x.Rparen = token.NoPos, token.NoPos
		case *ast.BinaryExpr:
			x.OpPos = token.NoPos
		case *ast.UnaryExpr:
			x.OpPos = token.NoPos
		case *ast.AssignStmt:
			x.TokPos = token.NoPos
		case *ast.ReturnStmt:
			x.Return = token.NoPos
		case *ast.CompositeLit:
			x.Lbrace, x.Rbrace = token.NoPos, token.NoPos
		case *ast.IndexExpr:
			x.Lbrack, x.Rbrack = token.NoPos, token.NoPos
		case *ast.SliceExpr:
			x.Lbrack, x.Rbrack = token.NoPos, token.NoPos
		case *ast.StarExpr:
			x.Star = token.NoPos
		case *ast.IfStmt:
			x.If = token.NoPos
		case *ast.ForStmt:
			x.For = token.NoPos
		case *ast.RangeStmt:
			x.For, x.TokPos, x.Range = token.NoPos, token.NoPos, token.NoPos
		case *ast.GenDecl:
			x.TokPos, x.Lparen, x.Rparen = token.NoPos, token.NoPos, token.NoPos
		case *ast.FuncType:
			x.Func = token.NoPos
		case *ast.FieldList:
			x.Opening, x.Closing = token.NoPos, token.NoPos
		case *ast.KeyValueExpr:
			x.Colon = token.NoPos
		case *ast.ArrayType:
			x.Lbrack = token.NoPos
		case *ast.IncDecStmt:
			x.TokPos = token.NoPos
		case *ast.BranchStmt:
			x.TokPos = token.NoPos
		case *ast.CaseClause:
			x.Case, x.Colon = token.NoPos, token.NoPos
		case *ast.SwitchStmt:
			x.Switch = token.NoPos
		case *ast.SelectorExpr:
		}
		return true
	})
	return n
}

// oneLane simplifies the one-lane copy's loads and stores of the lane at
// index i of a slice x (x[i:][0], and store(v, x[i:])) to x[i] (and
// x[i] = v): the same element and the same bounds, with one check instead
// of two and no slice formed.
func oneLane(f *ast.File) {
	lane := func(e ast.Expr) (ast.Expr, ast.Expr, bool) {
		for {
			p, ok := e.(*ast.ParenExpr)
			if !ok {
				break
			}
			e = p.X
		}
		se, ok := e.(*ast.SliceExpr)
		if !ok || se.Low == nil || se.High != nil || se.Slice3 {
			return nil, nil, false
		}
		return se.X, se.Low, true
	}
	stmts := func(list []ast.Stmt) {
		for i, st := range list {
			es, ok := st.(*ast.ExprStmt)
			if !ok {
				continue
			}
			c, ok := es.X.(*ast.CallExpr)
			if !ok || len(c.Args) != 2 {
				continue
			}
			if id, ok := c.Fun.(*ast.Ident); !ok || id.Name != "store" {
				continue
			}
			if x, lo, ok := lane(c.Args[1]); ok {
				list[i] = &ast.AssignStmt{Lhs: []ast.Expr{&ast.IndexExpr{X: x, Index: lo}}, Tok: token.ASSIGN, Rhs: []ast.Expr{c.Args[0]}}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			stmts(n.List)
		case *ast.CaseClause:
			stmts(n.Body)
		case *ast.IndexExpr:
			if lit, ok := n.Index.(*ast.BasicLit); ok && lit.Value == "0" {
				if x, lo, ok := lane(n.X); ok {
					n.X, n.Index = x, lo
				}
			}
		}
		return true
	})
}
