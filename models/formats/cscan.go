package formats

import (
	"math"
	"strconv"
	"strings"
)

// This file holds the two C number readers that the reference relies on:
// strtod/atof (longest valid prefix, 0 when there is none) and glibc's
// scanf "%lg" conversion (greedy, then strtod on what it took). Both were
// checked against glibc on random inputs.

// isCSpace reports whether c is whitespace for C's isspace in the C locale.
func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// hasPrefixFold reports whether b starts with the lower-case ASCII word w,
// ignoring case.
func hasPrefixFold(b []byte, w string) bool {
	return len(b) >= len(w) && strings.EqualFold(string(b[:len(w)]), w)
}

// strtodPrefix returns the length of the longest prefix of b (which must
// not start with whitespace) that C's strtod converts, 0 if none.
func strtodPrefix(b []byte) int {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	switch {
	case hasPrefixFold(b[i:], "infinity"):
		return i + 8
	case hasPrefixFold(b[i:], "inf"):
		return i + 3
	case hasPrefixFold(b[i:], "nan"):
		i += 3
		if i < len(b) && b[i] == '(' {
			j := i + 1
			for j < len(b) && (isDigit(b[j]) || b[j] == '_' || b[j]|0x20 >= 'a' && b[j]|0x20 <= 'z') {
				j++
			}
			if j < len(b) && b[j] == ')' {
				return j + 1
			}
		}
		return i
	case i+1 < len(b) && b[i] == '0' && b[i+1]|0x20 == 'x':
		j, digits := mantissa(b, i+2, isHexDigit)
		if digits == 0 {
			return i + 1 // just the "0"
		}
		return exponent(b, j, 'p')
	}
	j, digits := mantissa(b, i, isDigit)
	if digits == 0 {
		return 0
	}
	return exponent(b, j, 'e')
}

// mantissa scans digits with an optional '.' from b[j:]; it returns the end
// and the number of digits seen.
func mantissa(b []byte, j int, digit func(byte) bool) (end, digits int) {
	for j < len(b) && digit(b[j]) {
		j++
		digits++
	}
	if j < len(b) && b[j] == '.' {
		j++
		for j < len(b) && digit(b[j]) {
			j++
			digits++
		}
	}
	return j, digits
}

// exponent extends a mantissa ending at j by an exponent marked by the
// lower-case letter mark, if one with at least one digit follows.
func exponent(b []byte, j int, mark byte) int {
	if j >= len(b) || b[j]|0x20 != mark {
		return j
	}
	k := j + 1
	if k < len(b) && (b[k] == '+' || b[k] == '-') {
		k++
	}
	start := k
	for k < len(b) && isDigit(b[k]) {
		k++
	}
	if k == start {
		return j
	}
	return k
}

// numberValue converts a complete number matched by strtodPrefix.
func numberValue(s []byte) float64 {
	t := string(s)
	neg := strings.HasPrefix(t, "-")
	u := strings.TrimLeft(t, "+-")
	var v float64
	switch {
	case hasPrefixFold([]byte(u), "inf"):
		v = math.Inf(1)
	case hasPrefixFold([]byte(u), "nan"):
		v = math.NaN()
	case len(u) > 1 && (u[1]|0x20) == 'x':
		if !strings.ContainsAny(u, "pP") {
			u += "p0"
		}
		v, _ = strconv.ParseFloat(u, 64) // ErrRange still yields the C value
	default:
		v, _ = strconv.ParseFloat(u, 64)
	}
	if neg {
		v = -v
	}
	return v
}

// atof mimics C's atof: skip leading whitespace, convert the longest valid
// prefix, 0 if there is none.
func atof(b []byte) float64 {
	i := 0
	for i < len(b) && isCSpace(b[i]) {
		i++
	}
	end := strtodPrefix(b[i:])
	if end == 0 {
		return 0
	}
	return numberValue(b[i : i+end])
}

// scanner reads numbers from a byte slice the way fscanf("%lg") does,
// keeping track of line numbers for error messages.
type scanner struct {
	b    []byte
	pos  int
	line int // 1-based line of pos
}

func newScanner(b []byte) *scanner { return &scanner{b: b, line: 1} }

// skipSpace advances over whitespace and reports whether input remains.
func (s *scanner) skipSpace() bool {
	for s.pos < len(s.b) && isCSpace(s.b[s.pos]) {
		if s.b[s.pos] == '\n' {
			s.line++
		}
		s.pos++
	}
	return s.pos < len(s.b)
}

// next reads one number as glibc's fscanf("%lg") does. ok is false at end
// of input or on a matching failure; the position is then left at the
// start of the offending token.
func (s *scanner) next() (v float64, text string, ok bool) {
	if !s.skipSpace() {
		return 0, "", false
	}
	n, ok := scanfNumber(s.b[s.pos:])
	if !ok {
		return 0, "", false
	}
	end := strtodPrefix(s.b[s.pos : s.pos+n])
	text = string(s.b[s.pos : s.pos+n])
	v = numberValue(s.b[s.pos : s.pos+end])
	s.pos += n
	return v, text, true
}

// scanfNumber returns how many bytes glibc's scanf float conversion
// consumes at the start of b, and whether the conversion succeeds. scanf
// reads greedily with one character of look-ahead and then converts what
// it took with strtod, so "1e+" is consumed whole and yields 1, while "0x"
// or "." alone fail. "nan" is taken without a parenthesised suffix.
func scanfNumber(b []byte) (n int, ok bool) {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	sign := i
	if i >= len(b) {
		return i, false
	}
	switch b[i] | 0x20 {
	case 'n':
		return i + 3, hasPrefixFold(b[i:], "nan")
	case 'i':
		if !hasPrefixFold(b[i:], "inf") {
			return i, false
		}
		i += 3
		if i < len(b) && b[i]|0x20 == 'i' {
			return i + 5, hasPrefixFold(b[i:], "inity")
		}
		return i, true
	}
	hex, digit, dot, exp := false, false, false, false
	expChar := byte('e')
	if b[i] == '0' {
		i++
		if i < len(b) && b[i]|0x20 == 'x' {
			i++
			hex, expChar = true, 'p'
		} else {
			digit = true
		}
	}
scan:
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case isDigit(c), !exp && hex && isHexDigit(c):
			digit = true
		case exp && b[i-1]|0x20 == expChar && (c == '+' || c == '-'):
		case digit && !exp && c|0x20 == expChar:
			exp, dot = true, true
		case !dot && c == '.':
			dot = true
		default:
			break scan
		}
	}
	if i == sign || (hex && i == sign+2) {
		return i, false
	}
	return i, strtodPrefix(b[:i]) > 0
}

// token returns the next whitespace-delimited token (for error messages),
// shortened if very long.
func (s *scanner) token() string {
	s.skipSpace()
	j := s.pos
	for j < len(s.b) && !isCSpace(s.b[j]) && j-s.pos < 40 {
		j++
	}
	return strconv.Quote(string(s.b[s.pos:j]))
}
