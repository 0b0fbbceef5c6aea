package formats

import (
	"fmt"
	"io"
	"math"
	"slices"
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
	if len(b) < len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if b[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}

// strtodPrefix returns the length of the longest prefix of b (which must
// not start with whitespace) that C's strtod converts, 0 if none.
func strtodPrefix(b []byte) int {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	if i < len(b) && isDigit(b[i]) && b[i] != '0' {
		// The common case: a decimal number.
		j, _ := mantissa(b, i, isDigit)
		return exponent(b, j, 'e')
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
	// Fast path: a sign and up to 15 decimal digits (Miller indices and
	// most F values), exact in float64.
	i, neg := 0, false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		i, neg = 1, s[0] == '-'
	}
	if n := len(s) - i; n > 0 && n <= 15 {
		var v int64
		digits := true
		for _, c := range s[i:] {
			if !isDigit(c) {
				digits = false
				break
			}
			v = v*10 + int64(c-'0')
		}
		if digits {
			f := float64(v)
			if neg {
				f = -f
			}
			return f
		}
	}
	u := s[i:]
	var v float64
	switch {
	case len(u) > 0 && u[0]|0x20 == 'i':
		v = math.Inf(1)
	case len(u) > 0 && u[0]|0x20 == 'n':
		v = math.NaN()
	case len(u) > 1 && (u[1]|0x20) == 'x':
		t := string(u)
		if !strings.ContainsAny(t, "pP") {
			t += "p0"
		}
		v, _ = strconv.ParseFloat(t, 64) // ErrRange still yields the C value
	case len(u) > maxParseDigits:
		v = parseLongDecimal(u)
	default:
		v, _ = strconv.ParseFloat(string(u), 64)
	}
	if neg {
		v = -v
	}
	return v
}

// maxParseDigits: Go's strconv.ParseFloat keeps 800 decimal digits and
// gets longer mantissas wrong (999…9e-3990 with 4000 nines gives 0, not
// 1e10); longer numbers go through parseLongDecimal.
const maxParseDigits = 700

// parseLongDecimal converts an unsigned decimal number (digits, an
// optional '.', an optional exponent) of any length as strtod does: it
// keeps the first 700 significant digits plus a sticky 1 standing for any
// non-zero digit after them (more than enough for correct rounding of a
// float64), and moves the decimal point into the exponent.
func parseLongDecimal(u []byte) float64 {
	var sig []byte
	exp := 0 // value = 0.sig × 10^exp
	seenDot, sticky := false, false
	i := 0
	for ; i < len(u); i++ {
		c := u[i]
		switch {
		case c == '.':
			seenDot = true
		case isDigit(c):
			switch {
			case len(sig) == 0 && c == '0':
				if seenDot {
					exp--
				}
			case len(sig) < maxParseDigits:
				sig = append(sig, c)
				if !seenDot {
					exp++
				}
			default:
				sticky = sticky || c != '0'
				if !seenDot {
					exp++
				}
			}
		default:
			goto exponent
		}
	}
exponent:
	if len(sig) == 0 {
		return 0
	}
	if i < len(u) { // 'e' and an exponent, as strtodPrefix matched it
		e, neg := 0, false
		j := i + 1
		if j < len(u) && (u[j] == '+' || u[j] == '-') {
			neg = u[j] == '-'
			j++
		}
		for ; j < len(u); j++ {
			if e < 1e6 {
				e = e*10 + int(u[j]-'0')
			}
		}
		if neg {
			e = -e
		}
		exp += e
	}
	switch {
	case exp > 400:
		return math.Inf(1)
	case exp < -400:
		return 0
	}
	if sticky {
		sig = append(sig, '1')
	}
	v, _ := strconv.ParseFloat("0."+string(sig)+"e"+strconv.Itoa(exp), 64)
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

// scanner reads numbers the way fscanf("%lg") does, keeping track of
// line numbers for error messages. It reads from a byte slice, or from a
// reader as far as it needs to: the bytes read are kept (in b), so that a
// second pass can scan them again, but nothing beyond the token being
// read is ever requested, so a reader that stops at the first token that
// is not a number reads no further.
type scanner struct {
	b     []byte
	pos   int
	line  int // 1-based line of pos
	start int // where the last number read by next began
	r     io.Reader
	err   error // the reader's error other than io.EOF
	long  bool  // next met a number of maxToken characters or more
	last  int   // index of the last whitespace byte in b, −1 if none
}

func newScanner(b []byte) *scanner { return &scanner{b: b, line: 1, last: lastSpace(b, 0, -1)} }

func newReaderScanner(r io.Reader) *scanner { return &scanner{r: r, line: 1, last: -1} }

// lastSpace returns the index of the last whitespace byte of b at or after
// from, or last if there is none.
func lastSpace(b []byte, from, last int) int {
	for i := len(b) - 1; i >= from; i-- {
		if isCSpace(b[i]) {
			return i
		}
	}
	return last
}

// readChunk is how much a scanner asks its reader for at a time;
// maxToken the longest number it reads (scanf has no limit).
const (
	readChunk = 1 << 16
	maxToken  = 1 << 12
)

// more reads another chunk into b; false at the end of the input.
func (s *scanner) more() bool {
	if s.r == nil {
		return false
	}
	for {
		n0 := len(s.b)
		s.b = slices.Grow(s.b, readChunk)
		n, err := s.r.Read(s.b[n0 : n0+readChunk])
		s.b = s.b[:n0+n]
		s.last = lastSpace(s.b, n0, s.last)
		if err != nil {
			if err != io.EOF {
				s.err = err
			}
			s.r = nil
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// skipSpace advances over whitespace and reports whether input remains.
func (s *scanner) skipSpace() bool {
	for {
		for s.pos < len(s.b) && isCSpace(s.b[s.pos]) {
			if s.b[s.pos] == '\n' {
				s.line++
			}
			s.pos++
		}
		if s.pos < len(s.b) || !s.more() {
			return s.pos < len(s.b)
		}
	}
}

// next reads one number as glibc's fscanf("%lg") does. ok is false at end
// of input or on a matching failure; the position is then left at the
// start of the offending token. text returns the number's spelling.
func (s *scanner) next() (v float64, ok bool) {
	if !s.skipSpace() {
		return 0, false
	}
	// The whole token, up to whitespace, or maxToken+1 bytes of it: a
	// window in which scanf's greedy reading ends where it would on the
	// whole input, for any number of at most maxToken characters.
	for s.last < s.pos && len(s.b)-s.pos <= maxToken && s.more() {
	}
	w := s.b[s.pos:min(len(s.b), s.pos+maxToken+1)]
	if v, n, ok := plainInteger(w); ok {
		s.start = s.pos
		s.pos += n
		return v, true
	}
	n, ok := scanfNumber(w)
	if n > maxToken {
		// A longer number: scanf would go on reading it; refuse it
		// instead (an error for callers).
		s.long = true
		return 0, false
	}
	if !ok {
		return 0, false
	}
	end := strtodPrefix(s.b[s.pos : s.pos+n])
	v = numberValue(s.b[s.pos : s.pos+end])
	s.start = s.pos
	s.pos += n
	return v, true
}

// plainInteger reads a whole token made of an optional sign and 1 to 15
// decimal digits (most numbers in HKL files): what scanf reads there too,
// without its general machinery.
func plainInteger(b []byte) (v float64, n int, ok bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i, neg = 1, b[0] == '-'
	}
	j := i
	var x int64
	for j < len(b) && j-i < 16 && isDigit(b[j]) {
		x = x*10 + int64(b[j]-'0')
		j++
	}
	if j == i || j-i > 15 || (j < len(b) && !isCSpace(b[j])) {
		return 0, 0, false
	}
	v = float64(x)
	if neg {
		v = -v
	}
	return v, j, true
}

// failure is why reading stopped other than at a non-number or the end
// of the input: the reader's error or an overlong number; nil otherwise.
func (s *scanner) failure() error {
	switch {
	case s.err != nil:
		return s.err
	case s.long:
		return fmt.Errorf("line %d: a number of more than %d characters", s.line, maxToken)
	}
	return nil
}

// text is the spelling of the last number next read.
func (s *scanner) text() string { return string(s.b[s.start:s.pos]) }

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
	for s.last < s.pos && len(s.b) < s.pos+40 && s.more() {
	}
	j := s.pos
	for j < len(s.b) && !isCSpace(s.b[j]) && j-s.pos < 40 {
		j++
	}
	return strconv.Quote(string(s.b[s.pos:j]))
}
