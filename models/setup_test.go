package models

import (
	"strings"
	"testing"
)

// TestSetupMatchesArgv: a Setup and the equivalent command line build
// the same model.
func TestSetupMatchesArgv(t *testing.T) {
	for _, c := range []struct {
		setup Setup
		argv  string
	}{
		{Setup{Cell: [6]float64{70, 80, 90, 75, 85, 95}, MissetDeg: [3]float64{10, 20, 30}, N: [3]int{5, 5, 5}, DefaultF: 100,
			DistanceMM: 100, PixelMM: 0.1, Pixels: [2]int{256, 256}},
			"-cell 70 80 90 75 85 95 -misset 10 20 30 -N 5 -default_F 100 -distance 100 -pixel 0.1 -detpixels 256"},
		{Setup{Cell: [6]float64{100}, SizeMM: [3]float64{0.0008, 0.0008, 0.0008}, DefaultF: 1, LambdaA: 6.2, Pixels: [2]int{128, 64},
			XbeamMM: 5, YbeamMM: 4, RotDeg: [3]float64{1, 2, 3}, TwoThetaDeg: 5, Kahn: 0.9, Oversample: 2},
			"-cell 100 -xtal_size 0.0008 -default_F 1 -lambda 6.2 -detpixels_x 128 -detpixels_y 64 -Xbeam 5 -Ybeam 4 " +
				"-detector_rotx 1 -detector_roty 2 -detector_rotz 3 -twotheta 5 -polar 0.9 -oversample 2"},
		{Setup{Cell: [6]float64{50, 60, 70}, N: [3]int{3, 4, 5}, DefaultF: 1, Convention: XDS, PhiDeg: 1, OscDeg: 2, PhiSteps: 3,
			MosaicDeg: 0.5, MosaicDomains: 4, Fluence: 1e30, WaterUM: 10, Pixels: [2]int{32, 32}, Shape: Gauss},
			"-cell 50 60 70 -Na 3 -Nb 4 -Nc 5 -default_F 1 -xds -phi 1 -osc 2 -phisteps 3 -mosaic 0.5 -mosaic_domains 4 " +
				"-fluence 1e30 -water 10 -detpixels 32 -gauss_xtal"},
	} {
		got, err := c.setup.Model(nil)
		if err != nil {
			t.Fatalf("%s: %v", c.argv, err)
		}
		want := mustModel(t, strings.Fields(c.argv)...)
		if got.Params() != want.Params() || got.Detector.FPixels != want.Detector.FPixels || got.Detector.SPixels != want.Detector.SPixels ||
			got.Detector.Oversample != want.Detector.Oversample || got.Detector.Convention != want.Detector.Convention ||
			len(got.Crystal.Domains) != len(want.Crystal.Domains) || got.Crystal.Shape != want.Crystal.Shape ||
			got.Beam.Water != want.Beam.Water || got.Detector.Pivot != want.Detector.Pivot {
			t.Errorf("%s: Setup gives %+v\nargv gives %+v", c.argv, got.Params(), want.Params())
		}
	}
	if _, err := (&Setup{DefaultF: 1}).Model(nil); err == nil || !strings.Contains(err.Error(), "no crystal") {
		t.Errorf("no cell: %v", err)
	}
}
