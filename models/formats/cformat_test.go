package formats

import (
	"math"
	"strconv"
	"testing"
)

func TestG(t *testing.T) {
	negNaN := math.Float64frombits(0xfff8000000000000) // x86's default NaN, sign bit set
	tests := []struct {
		x    float64
		want string
	}{
		// Values computed as the reference computes them, against what it
		// printed. max_I is the float32 maximum of the image
		// (manifest image_stats.max); intfile_scale = 55000/max_I.
		{7.289999961853027, "7.29"},                       // AT-PARALLEL-001__detpixels-64: "max_I = 7.29"
		{55000 / 7.289999961853027, "7544.58"},            // same case: "intfile_scale = 7544.58"
		{156.25, "156.25"},                                // AT-PARALLEL-003__beam-20-20-detpixels-256: "max_I = 156.25"
		{55000 / 156.25, "352"},                           // same case: "intfile_scale = 352"
		{115.96531677246094, "115.965"},                   // sweep__base: "max_I = 115.965"
		{55000 / 115.96531677246094, "474.28"},            // sweep__base: "intfile_scale = 474.28"
		{97.28097534179688, "97.281"},                     // sweep__mosaic_1_domains10: "max_I = 97.281"
		{55000 / 97.28097534179688, "565.373"},            // same case
		{77.8785400390625, "77.8785"},                     // sweep__Na3_Nb5_Nc7: "max_I = 77.8785"
		{55000 / 77.8785400390625, "706.228"},             // same case
		{125932015286227086360700780544.0, "1.25932e+29"}, // nb.c default fluence; logs: "incident fluence: 1.25932e+29"
		{6.2e-10, "6.2e-10"},                              // logs/golden__simple_cubic.txt: "lambda0 = 6.2e-10"
		{math.Copysign(0, -1), "-0"},                      // logs/golden__simple_cubic.txt source line "-10 -0 0   1 6.2e-10"

		// Hand-written C printf facts, each checked with glibc's printf("%g").
		{1e-5, "1e-05"},
		{0.0001, "0.0001"},
		{0.00012345649, "0.000123456"},
		{0.000099999995, "0.0001"}, // rounding moves the exponent up to -4
		{100000, "100000"},
		{1e6, "1e+06"},
		{1234567, "1.23457e+06"},
		{999999.4, "999999"},
		{999999.5, "1e+06"},
		{123456.5, "123456"}, // exact tie rounds to even
		{12345.75, "12345.8"},
		{12345.65, "12345.6"}, // binary value is just below the tie
		{9.9999995, "10"},
		{0.5, "0.5"},
		{0.1, "0.1"},
		{0.30000000000000004, "0.3"},
		{1.0 / 3, "0.333333"},
		{-2.0 / 3, "-0.666667"},
		{65535, "65535"},
		{0, "0"},
		{1e100, "1e+100"},
		{1e-100, "1e-100"},
		{5e-324, "4.94066e-324"},
		{math.MaxFloat64, "1.79769e+308"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
		{negNaN, "-nan"},
	}
	for _, tc := range tests {
		if got := G(tc.x); got != tc.want {
			t.Errorf("G(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}

// TestGReprint checks that numbers the reference printed with %g print the
// same again. The strings are from manifest.json stats_lines.
func TestGReprint(t *testing.T) {
	for _, s := range []string{
		"0.00409181", "0.0325616", "1.65929", "1.46662", "0.775977", "0.00325", // AT-PARALLEL-001__detpixels-64
		"2.5e-05", "0.0146755", "0.116784", "24806.7", "0.059338", // AT-PARALLEL-002__pixel-0.05mm
		"8.55525e-06", "2.2e+07", "0.0025", // AT-PARALLEL-006__dist-200mm-lambda-2.0
		"1.25671e+07", "1.00006e+08", "5.99788e+10", "9.16991e-07", "3.81848e+08", // AT-PARALLEL-010__point-pixel-distance-50mm
		"0.83688", "6.65968", "0.05135", "362.128", "151.88", // golden__simple_cubic
	} {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := G(x); got != s {
			t.Errorf("G(%v) = %q, want %q", x, got, s)
		}
	}
}
