package lanegen

import (
	"strings"
	"testing"
)

// variantSrc is a small template: an inlined helper with a variant, and
// a function with a variant that calls it.
const variantSrc = `//go:build lanegen

package physics

// one is 1.
//
//lanegen:inline
//lanegen:variant two once=twice
func one(x vf) vf {
	return once(x)
}

func once(x vf) vf  { return x }
func twice(x vf) vf { return x.Add(x) }

//lanegen:variant runTwo one=two
func run(x vf) vf {
	y := one(x)
	return y
}
`

// TestVariants: //lanegen:variant declares the renamed copies (in the
// originals' order), inlines the variant of an inlined function where
// its copy calls it, and leaves the originals as they were.
func TestVariants(t *testing.T) {
	out, err := Generate([]byte(variantSrc), Targets[0])
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"func two(x float64) float64", "func runTwo(x float64) float64", "twice(x)", "once(x)"} {
		if !strings.Contains(s, want) {
			t.Errorf("generated copy lacks %q:\n%s", want, s)
		}
	}
	if i, j := strings.Index(s, "func two("), strings.Index(s, "func runTwo("); i < 0 || j < i {
		t.Errorf("variants not in the originals' order:\n%s", s)
	}
	// run inlines one (calls once), runTwo inlines two (calls twice).
	run := s[strings.Index(s, "func run("):]
	run = run[:strings.Index(run, "\n}\n")]
	two := s[strings.Index(s, "func runTwo("):]
	two = two[:strings.Index(two, "\n}\n")]
	if !strings.Contains(run, "once(") || strings.Contains(run, "twice(") || strings.Contains(run, "one(") {
		t.Errorf("run:\n%s", run)
	}
	if !strings.Contains(two, "twice(") || strings.Contains(two, "once(") || strings.Contains(two, "two(") {
		t.Errorf("runTwo:\n%s", two)
	}
}

// TestVariantErrors: a variant line without renames, a rename without
// "=", and a rename of a name the function does not use are errors.
func TestVariantErrors(t *testing.T) {
	for _, line := range []string{"//lanegen:variant runTwo", "//lanegen:variant runTwo one", "//lanegen:variant runTwo nothere=two"} {
		src := strings.Replace(variantSrc, "//lanegen:variant runTwo one=two", line, 1)
		if _, err := Generate([]byte(src), Targets[0]); err == nil {
			t.Errorf("%q: no error", line)
		} else {
			t.Logf("%q: %v", line, err)
		}
	}
}

// TestInlineStatement: a function without results marked //lanegen:inline
// and called as a statement is inlined as a block of its body, its
// locals renamed apart per call (a bare return at its end is dropped); a
// return before its end, a call of it inside an expression, and a
// function with results called as a statement are errors.
func TestInlineStatement(t *testing.T) {
	src := `//go:build lanegen

package physics

// twiceInto stores 2x in out.
//
//lanegen:inline
func twiceInto(x vf, out []float64) {
	y := x.Add(x)
	y.StoreSlice(out)
	return
}

// double is 2x.
//
//lanegen:inline
func double(x vf) vf {
	return x.Add(x)
}

func run(x vf, out []float64) {
	y := x
	twiceInto(y, out)
	twiceInto(y.Mul(y), out)
}
`
	out, err := Generate([]byte(src), Targets[0])
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	run := s[strings.Index(s, "func run("):]
	run = run[:strings.Index(run, "\n}\n")]
	for _, want := range []string{"x_1, out_1 := y, out", "y_1 := (x_1 + x_1)", "x_2, out_2 := (y * y), out", "y_2 := (x_2 + x_2)"} {
		if !strings.Contains(run, want) {
			t.Errorf("run lacks %q:\n%s", want, run)
		}
	}
	if strings.Contains(run, "twiceInto(") || strings.Contains(run, "return") {
		t.Errorf("run does not inline twiceInto:\n%s", run)
	}
	for _, bad := range []string{
		strings.Replace(src, "\ty.StoreSlice(out)\n", "\treturn\n\ty.StoreSlice(out)\n", 1), // a return before the end
		strings.Replace(src, "\ty := x\n", "\ty := x.Add(twiceInto(x, out))\n", 1),          // inside an expression
		strings.Replace(src, "\ty := x\n", "\ty := x\n\tdouble(y)\n", 1),                    // results not used
	} {
		if _, err := Generate([]byte(bad), Targets[0]); err == nil {
			t.Errorf("no error for:\n%s", bad)
		} else {
			t.Logf("%v", err)
		}
	}
}

// TestTooManyArgs: a call of an inlined function with more arguments
// than it has parameters is an error (the argument was dropped before).
func TestTooManyArgs(t *testing.T) {
	src := `//go:build lanegen

package physics

// plain is x + x.
//
//lanegen:inline
func plain(x vf) vf {
	y := x.Add(x)
	return y
}

func run(x vf) vf {
	z := plain(x, x)
	return z
}
`
	if _, err := Generate([]byte(src), Targets[0]); err == nil || !strings.Contains(err.Error(), "too many arguments") {
		t.Errorf("a call with an argument too many: %v", err)
	}
}
