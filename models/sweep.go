package models

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/gobragg/gobragg/models/formats"
)

// missetSeed is the generator seed of -misset random: -misset_seed, else
// the clock (the reference copies its clock seed before reading argv, so
// -seed does not reach it).
func (a *Args) missetSeed() int64 {
	if a.HasMissetSeed {
		return -a.MissetSeed
	}
	return -time.Now().Unix()
}

// RandomMisset draws the reference's random orientation: one rotation of
// its spherical-cap model with a cap of 90 (radians, as the reference
// passes it), decomposed into x, y, z misset angles.
func RandomMisset(seed int64) (x, y, z float64) {
	r := &Ran1{Seed: seed}
	d := DrawMosaic(r)
	m := MatToMisset(UMat(d.V, d.Angle(90)))
	return m[0], m[1], m[2]
}

// mosaic applies the reference's domain-count rules and draws the domains
// from -mosaic_seed (domain 0 is drawn too, then replaced by the identity).
func (a *Args) mosaic(c *Crystal, log io.Writer) error {
	spread, n := a.MosaicDeg, a.MosaicDomains
	switch {
	case n <= 0 && (math.IsNaN(spread) || spread < 0):
		spread, n = 0, 1
	case n <= 0 && spread == 0:
		n = 1
	case n <= 0:
		fmt.Fprintln(log, "WARNING: finite mosaicity with only one domain! upping to 10 mosaic domains")
		n = 10
	case math.IsNaN(spread) || spread < 0:
		fmt.Fprintln(log, "WARNING: no mosaic spread specified.  setting mosaic_domains = 1")
		spread, n = 0, 1
	case spread == 0:
		fmt.Fprintln(log, "WARNING: zero mosaic spread specified.  setting mosaic_domains = 1")
		n = 1
	}
	if n > 100000 {
		return usagef("-mosaic_domains %d: at most 100000 domains are supported", n)
	}
	if math.Abs(spread) > 1e6 {
		return usagef("-mosaic %g deg: too large a spread", spread)
	}
	c.Mosaic = rad(spread)
	r := &Ran1{Seed: -a.MosaicSeed}
	c.Domains = make([]MosaicDraw, n)
	for i := range c.Domains {
		c.Domains[i] = DrawMosaic(r)
	}
	return nil
}

// stepRule is the reference's automatic choice of count, range and step
// for a sampled quantity (divergence, dispersion), given what the user
// set (count < 0 and range/step NaN mean unset). oneRange is the range the
// reference assumes when only a count is given.
func stepRule(count int, rng, step, oneRange float64) (int, float64, float64) {
	set := func(x float64) bool { return !math.IsNaN(x) && x >= 0 }
	pos := func(x float64) bool { return !math.IsNaN(x) && x > 0 }
	if count <= 0 {
		switch {
		case !set(rng) && !pos(step):
			return 1, 0, 0
		case !set(rng):
			return 2, step, step
		case !pos(step):
			return 2, rng, rng
		default:
			return countOf(math.Ceil(rng / step)), rng, step
		}
	}
	switch {
	case !set(rng) && !pos(step):
		return count, oneRange, oneRange / float64(count)
	case !set(rng):
		return 2, step, step
	case !pos(step):
		if count <= 1 {
			count = 2
		}
		return count, rng, rng / float64(count-1)
	}
	return count, rng, step
}

// sourceDistance is the distance of the sources (m), along −beam: the
// reference's 10 m. Its -source_distance flag is parsed but not applied
// (the reference's parsing is commented out): only the directions count,
// and a distance of 0 or below would make them none or the opposite.
const sourceDistance = 10.0

// sources builds the source list as the reference does: a file, or a
// raster of divergence angles (cut to an ellipse unless -square_div) times
// a raster of wavelengths.
func (a *Args) sources(d *Detector) ([]Source, error) {
	beam := d.Beam
	if a.SourceFile != "" {
		f, err := formats.OpenInput(a.SourceFile, formats.MaxColumnBytes)
		if err != nil {
			return nil, fmt.Errorf("models: -sourcefile: %w", err)
		}
		defer f.Close()
		cols, err := formats.ReadColumns(f, 5)
		if err != nil {
			return nil, fmt.Errorf("models: -sourcefile %s: %w", a.SourceFile, err)
		}
		if len(cols[0]) == 0 {
			return nil, fmt.Errorf("models: -sourcefile %s: no sources", a.SourceFile)
		}
		if len(cols[0]) > maxSources {
			return nil, usagef("-sourcefile %s: %d sources, at most %d are supported", a.SourceFile, len(cols[0]), maxSources)
		}
		dist := sourceDistance
		var out []Source
		for i := range cols[0] {
			var pos [3]float64
			for j := 0; j < 3; j++ {
				pos[j] = cols[j][i]
				if math.IsNaN(pos[j]) {
					pos[j] = -dist * beam[j]
				}
			}
			// Column 4 (a weight) is read but, as in the reference, unused;
			// column 5 is the wavelength in metres.
			lambda := cols[4][i]
			if math.IsNaN(lambda) {
				lambda = a.LambdaA * 1e-10
			}
			n := math.Sqrt(pos[0]*pos[0] + pos[1]*pos[1] + pos[2]*pos[2])
			if !(n > 0) || !(lambda > 0) || math.IsInf(n, 0) || math.IsInf(lambda, 0) {
				return nil, fmt.Errorf("models: -sourcefile %s: source %d has no direction or a non-positive wavelength", a.SourceFile, i+1)
			}
			if !(lambda >= minLambda && lambda <= maxLambda) {
				return nil, fmt.Errorf("models: -sourcefile %s: source %d: wavelength %g m: must lie between %g and %g m", a.SourceFile, i+1,
					lambda, minLambda, maxLambda)
			}
			out = append(out, Source{Incident: [3]float64{-pos[0] / n, -pos[1] / n, -pos[2] / n},
				LambdaFactor: lambda / (a.LambdaA * 1e-10)})
		}
		return out, nil
	}
	mr := func(x float64) float64 { return x / 1000 }
	hn, hr, hs := stepRule(a.HDivSteps, mr(a.HDivRange), mr(a.HDivStep), 1)
	vn, vr, vs := stepRule(a.VDivSteps, mr(a.VDivRange), mr(a.VDivStep), 1)
	dn, dr, ds := stepRule(a.DispSteps, a.Dispersion/100, math.NaN(), 1)
	if a.Dispersion == 0 && a.DispSteps <= 0 {
		dn, dr, ds = 1, 0, 0
	}
	if !(hr > 0) || !(hs > 0) || hn <= 0 {
		hn, hr, hs = 1, 0, 0
	}
	if !(vr > 0) || !(vs > 0) || vn <= 0 {
		vn, vr, vs = 1, 0, 0
	}
	if !(dr > 0) || !(ds > 0) || dn <= 0 {
		dn, dr, ds = 1, 0, 0
	}
	// The product in float64: in int it could wrap (4294967296² is 0).
	if float64(hn)*float64(vn)*float64(dn) > maxSources {
		return nil, usagef("%d×%d divergence × %d wavelength steps = %.3g sources: at most a million are supported", hn, vn, dn,
			float64(hn)*float64(vn)*float64(dn))
	}
	A := Float{}
	polar := V3[float64](d.Polar)
	vert := Cross[float64](A, V3[float64](beam), polar)
	vn2 := Norm[float64](A, vert)
	if vn2 > 0 {
		vert = Scale[float64](A, vert, 1/vn2)
	}
	dist := sourceDistance
	var out []Source
	for h := 0; h < hn; h++ {
		for v := 0; v < vn; v++ {
			hdiv := hs*float64(h) - hr/2
			vdiv := vs*float64(v) - vr/2
			// Elliptical cut; 0/0 for an unused axis is NaN and keeps the
			// point, as in the reference.
			test := (hdiv*hdiv-hs*hs/4*float64(1-hn%2))/hr/hr + (vdiv*vdiv-vs*vs/4*float64(1-vn%2))/vr/vr
			if !a.SquareDiv && test*4 > 1.1 {
				continue
			}
			pos := V3[float64]{-dist * beam[0], -dist * beam[1], -dist * beam[2]}
			pos = RotateAxis[float64](A, pos, polar, vdiv)
			pos = RotateAxis[float64](A, pos, vert, hdiv)
			n := Norm[float64](A, pos)
			for t := 0; t < dn; t++ {
				out = append(out, Source{Incident: [3]float64{-pos[0] / n, -pos[1] / n, -pos[2] / n},
					LambdaFactor: 1 + ds*float64(t) - dr/2})
			}
		}
	}
	if len(out) == 0 {
		return nil, usagef("the divergence settings leave no source inside the ellipse")
	}
	if lo := 1 - dr/2; !(lo > 0) {
		return nil, usagef("-dispersion %g%%: the shortest wavelength would be %g·λ; must be positive", a.Dispersion, lo)
	}
	return out, nil
}

// maxSources bounds the source list (divergence × dispersion, or a file).
const maxSources = 1000000

// sensor applies the reference's thickness rules: layer count and spacing
// from -detector_thick and -thicksteps, attenuation from -detector_abs.
func (a *Args) sensor(d *Detector, log io.Writer) error {
	thick := a.DetThickUM * 1e-6
	mu := -1.0
	switch {
	case a.DetAbsOff:
		mu = 0
	case !math.IsNaN(a.DetAbsUM):
		if !(a.DetAbsUM > 0) {
			return usagef("-detector_abs %g µm: the attenuation length must be positive", a.DetAbsUM)
		}
		mu = 1 / (a.DetAbsUM * 1e-6)
	}
	if thick < 0 || math.IsInf(thick, 0) {
		return usagef("-detector_thick %g µm: must be non-negative", a.DetThickUM)
	}
	n, _, step := stepRule(a.ThickSteps, thick, math.NaN(), 0.5e-6)
	if a.ThickSteps <= 0 {
		n, step = 2, thick/2 // range given, no step: the reference halves it
	}
	if !(thick > 0) || !(step > 0) || n <= 0 {
		n, thick, step = 1, 0, 0
	}
	if n > 1000 {
		return usagef("-thicksteps %d: at most 1000 sensor layers are supported", n)
	}
	if thick > 0 && mu < 0 {
		mu = 1 / thick
		fmt.Fprintf(log, "WARNING: setting detector attenuation depth to %s m\n", formats.G(mu))
	}
	d.Thick, d.ThickSteps, d.ThickStep, d.Mu = thick > 0, n, step, math.Max(mu, 0)
	return nil
}

// region sets the ROI (inclusive bounds; the reference's defaults reach
// one past the last pixel).
func (a *Args) region(d *Detector) error {
	r := [4]int{0, d.FPixels, 0, d.SPixels}
	for i, v := range a.ROI {
		if v >= 0 {
			r[i] = v
		}
	}
	if r[0] > r[1] || r[2] > r[3] {
		return usagef("-roi %d %d %d %d: want xmin ≤ xmax and ymin ≤ ymax", r[0], r[1], r[2], r[3])
	}
	d.ROI = r
	return nil
}
