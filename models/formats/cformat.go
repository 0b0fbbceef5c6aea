package formats

import (
	"math"
	"strconv"
	"strings"
)

// G formats x the way C's printf("%g", x) does with glibc: six significant
// digits, trailing zeros (and a bare decimal point) removed, exponent form
// when the decimal exponent is below -4 or at least 6, the exponent written
// with a sign and at least two digits. Infinities print as "inf"/"-inf"; NaN
// prints as "nan", or "-nan" when its sign bit is set (as glibc does). The
// sign of negative zero is kept ("-0").
func G(x float64) string { return GPrec(x, 6) }

// GPrec is G with prec significant digits (C's "%.{prec}g"; prec ≥ 1).
func GPrec(x float64, prec int) string {
	prec = max(prec, 1)
	neg := math.Signbit(x)
	var body string
	switch {
	case math.IsNaN(x):
		body = "nan"
	case math.IsInf(x, 0):
		body = "inf"
	default:
		a := math.Abs(x)
		// The exponent is that of the value already rounded to prec digits.
		e := strconv.FormatFloat(a, 'e', prec-1, 64)
		i := strings.IndexByte(e, 'e')
		exp, _ := strconv.Atoi(e[i+1:])
		if exp < -4 || exp >= prec {
			body = trimZeros(e[:i]) + e[i:]
		} else {
			body = trimZeros(strconv.FormatFloat(a, 'f', prec-1-exp, 64))
		}
	}
	if neg {
		return "-" + body
	}
	return body
}

// trimZeros removes trailing zeros after a decimal point, and the point
// itself if nothing is left after it.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
