package app

import (
	"bytes"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/models/formats"
	"github.com/gobragg/gobragg/physics"
)

// TestStats: stats' maximum (the first in scan order), mean, rms and
// rmsd over a region of interest with a mask, against the definitions
// (mean and rms over the rendered pixels, rmsd about that mean over every
// ROI pixel) summed exactly in math/big: within the bound of float64
// summation, (k + 4)·2⁻⁵³ relative for chains of k additions (stats adds
// a row's pixels in four partial sums, eight in the Go 1.27 vector build,
// then the rows: k ≤ columns/4 + rows), for row lengths that are and are
// not a multiple of four and eight, on
// values drawn from an exponential distribution and on the same over a
// background of 10⁶ (deviations small against the values: rmsd from
// each row's deviations about its own mean, moved to the image's mean);
// and the refusal of an impossible pixel, named by its position.
func TestStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, roi := range [][4]int{{0, 63, 0, 40}, {3, 60, 5, 33}, {10, 10, 7, 7}, {2, 4, 1, 40}, {0, 62, 40, 40}} {
		for _, v := range []struct {
			masked bool
			bg     float64
		}{{false, 0}, {true, 0}, {false, 1e6}, {true, 1e6}} {
			masked := v.masked
			const fp, sp = 64, 41
			img := make([]float32, fp*sp)
			mask := make([]float64, fp*sp)
			for i := range img {
				img[i] = float32(v.bg + rng.ExpFloat64()*100)
				if !masked || rng.IntN(5) != 0 {
					mask[i] = 1
				}
			}
			// A tie for the maximum: the first in scan order is reported.
			img[roi[2]*fp+roi[1]] = 1e6
			img[roi[3]*fp+roi[0]] = 1e6
			cfg := physics.Config{ROIFMin: roi[0], ROIFMax: roi[1], ROISMin: roi[2], ROISMax: roi[3], HasMask: masked}
			m := &models.Model{Detector: &models.Detector{FPixels: fp, SPixels: sp, Pixel: 1e-4, Oversample: 1}}
			in := &physics.Inputs{Mask: mask}
			if masked {
				mask[roi[2]*fp+roi[1]], mask[roi[3]*fp+roi[0]] = 1, 1
			}
			st, err := stats(&cfg, m, img, in, 0)
			if err != nil {
				t.Fatal(err)
			}
			// The definitions, exactly.
			sum, sumsq, all := new(big.Float), new(big.Float), 0
			var rendered []float64
			var maxI float64
			maxF, maxS := -1, -1
			for s := roi[2]; s <= roi[3]; s++ {
				for f := roi[0]; f <= roi[1]; f++ {
					x := float64(img[s*fp+f])
					all++
					if masked && mask[s*fp+f] == 0 {
						continue
					}
					rendered = append(rendered, x)
					sum.Add(sum, big.NewFloat(x))
					sumsq.Add(sumsq, new(big.Float).Mul(big.NewFloat(x), big.NewFloat(x)))
					if x > maxI {
						maxI, maxF, maxS = x, f, s
					}
				}
			}
			n := len(rendered)
			meanExact := new(big.Float).Quo(sum, big.NewFloat(float64(n)))
			mean, _ := meanExact.Float64()
			ms, _ := new(big.Float).Quo(sumsq, big.NewFloat(float64(max(n, 2)-1))).Float64()
			dev := new(big.Float)
			for s := roi[2]; s <= roi[3]; s++ {
				for f := roi[0]; f <= roi[1]; f++ {
					d := new(big.Float).Sub(big.NewFloat(float64(img[s*fp+f])), big.NewFloat(mean))
					dev.Add(dev, d.Mul(d, d))
				}
			}
			md, _ := dev.Quo(dev, big.NewFloat(float64(max(all, 2)-1))).Float64()
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"mean", st.Mean, mean}, {"rms", st.RMS, math.Sqrt(ms)}, {"rmsd", st.RMSD, math.Sqrt(md)}} {
				k := (roi[1]-roi[0]+1)/4 + 1 + roi[3] - roi[2] + 1
				if math.Abs(c.got-c.want) > float64(k+4)*0x1p-53*c.want {
					t.Errorf("roi %v masked %v background %g: %s %.17g, want %.17g", roi, masked, v.bg, c.name, c.got, c.want)
				}
			}
			if st.MaxI != maxI || st.MaxF != maxF || st.MaxS != maxS {
				t.Errorf("roi %v masked %v: max %g at %d %d, want %g at %d %d", roi, masked, st.MaxI, st.MaxF, st.MaxS, maxI, maxF, maxS)
			}
			// An impossible pixel inside the ROI (and rendered) is refused,
			// by its position; the first in scan order where there are
			// two (a negative one after a NaN or +Inf, in the same row or
			// the next); a masked one is not (it is not rendered).
			at := func(f, s int) int { return s*fp + f }
			last := at(roi[1], roi[3])
			for _, bad := range []float32{-1, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				cases := []struct {
					px   []int
					name [2]int
				}{{[]int{last}, [2]int{roi[1], roi[3]}}}
				if roi[1] > roi[0] {
					// bad at the row's first column, −2 at its last.
					cases = append(cases, struct {
						px   []int
						name [2]int
					}{[]int{at(roi[0], roi[3]), last}, [2]int{roi[0], roi[3]}})
				}
				if roi[3] > roi[2] {
					// bad at the row before's last column, −2 at this row's last.
					cases = append(cases, struct {
						px   []int
						name [2]int
					}{[]int{at(roi[1], roi[3]-1), last}, [2]int{roi[1], roi[3] - 1}})
				}
				for _, c := range cases {
					old := make([]float32, len(c.px))
					oldMask := make([]float64, len(c.px))
					for i, p := range c.px {
						old[i], oldMask[i] = img[p], mask[p]
						img[p], mask[p] = -2, 1
					}
					img[c.px[0]] = bad
					_, err := stats(&cfg, m, img, in, 0)
					if err == nil || !strings.Contains(err.Error(), "impossible pixel ("+itoa(c.name[0])+" "+itoa(c.name[1])+" ") {
						t.Errorf("roi %v masked %v: %g at pixels %v: %v", roi, masked, bad, c.px, err)
					}
					if masked {
						// Masked out, the pixels are not rendered: no refusal.
						for _, p := range c.px {
							mask[p] = 0
						}
						if _, err := stats(&cfg, m, img, in, 0); err != nil {
							t.Errorf("roi %v: masked pixels %v: %v", roi, c.px, err)
						}
					}
					for i, p := range c.px {
						img[p], mask[p] = old[i], oldMask[i]
					}
				}
			}
		}
	}
}

func itoa(i int) string { return big.NewInt(int64(i)).String() }

// BenchmarkStats4096 times stats over a 4096² image without a mask.
func BenchmarkStats4096(b *testing.B) {
	const n = 4096
	img := make([]float32, n*n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img {
		img[i] = float32(rng.ExpFloat64())
	}
	cfg := physics.Config{ROIFMin: 0, ROIFMax: n - 1, ROISMin: 0, ROISMax: n - 1}
	m := &models.Model{Detector: &models.Detector{FPixels: n, SPixels: n, Pixel: 1e-4, Oversample: 1}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := stats(&cfg, m, img, &physics.Inputs{}, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStatsInRender: simulate's statistics, summed row by row as the
// render finishes each row (rowStats.row through graph's RowDone; every
// row so, none left for stats to sum afterwards), are those stats finds
// in the finished image, bit for bit: where
// interpolation switches off inside a row (that row and the batch of
// rows after it are rendered again, and must be summed again), at the
// first pixel, nowhere; with a region of interest and a mask; on one
// thread and on several.
func TestStatsInRender(t *testing.T) {
	base := "-cell 100 100 100 90 90 90 -lambda 6.2 -distance 100 -default_F 100 -hkl P1_varied.hkl -interpolate -N 2 -pixel 0.8 -detpixels 128"
	mask := make([]uint16, 128*128)
	for i := range mask {
		if (i/128+2*(i%128))%5 != 0 {
			mask[i] = 1
		}
	}
	for _, threads := range []int{1, 3} {
		for _, extra := range []string{"-Xbeam 1 -Ybeam 1", "", "-pixel 0.5", "-Xbeam 1 -Ybeam 1 -roi 10 100 0 90", "-Xbeam 1 -Ybeam 1 -mask mask.img"} {
			inDir(t, []string{"P1_varied.hkl"}, func() {
				err := formats.WriteFileAtomic("mask.img", func(w io.Writer) error {
					return formats.WriteSMV(w, formats.SMVHeader{PixelMM: 0.8, DistanceMM: 100, WavelengthA: 6.2,
						BeamCenterXMM: 1, BeamCenterYMM: 102.4 - 1, CloseDistanceMM: 100, XDSOrgXPx: 1.75, XDSOrgYPx: 126.75}, 128, 128, mask)
				})
				if err != nil {
					t.Fatal(err)
				}
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
				var log bytes.Buffer
				r, args, err := Render(append(strings.Fields(base), strings.Fields(extra)...), &log)
				if err != nil {
					t.Fatal(err)
				}
				want, err := stats(&r.cfg, r.Model, r.Image, r.in, args.IntScale)
				if err != nil {
					t.Fatal(err)
				}
				if r.lateRows != 0 {
					t.Errorf("%d threads, %q: %d rows summed after the render, not as it finished them", threads, extra, r.lateRows)
				}
				if r.Stats.SolidAngle = 0; r.Stats != want {
					t.Errorf("%d threads, %q: in the render %+v, from the image %+v", threads, extra, r.Stats, want)
				}
				if strings.Contains(extra, "-mask") != r.cfg.HasMask {
					t.Fatalf("%q: mask %v", extra, r.cfg.HasMask)
				}
				if extra == "-Xbeam 1 -Ybeam 1" && !strings.Contains(log.String(), "at pixel 52 0") {
					t.Errorf("%q: interpolation no longer switches off inside the first row:\n%s", extra, log.String())
				}
			})
		}
	}
}
