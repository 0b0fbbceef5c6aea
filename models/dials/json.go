package dials

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/gobragg/gobragg/models/formats"
)

// ExperimentList is a DIALS experiment list (.expt) as dxtbx serialises
// it: models in lists, experiments pointing at them by index. Numbers are
// kept as the file's text (json.Number), so that converting them to SI
// units rounds once, from the exact decimal value.
type ExperimentList struct {
	ID           string            `json:"__id__"`
	Experiments  []Experiment      `json:"experiment"`
	ImageSets    []ImageSet        `json:"imageset"`
	Beams        []Beam            `json:"beam"`
	Detectors    []Detector        `json:"detector"`
	Goniometers  []Goniometer      `json:"goniometer"`
	Scans        []Scan            `json:"scan"`
	Crystals     []Crystal         `json:"crystal"`
	Profiles     []json.RawMessage `json:"profile"`
	ScalingModel []json.RawMessage `json:"scaling_model"`
}

// Experiment names the models of one experiment by their index in the
// list's model arrays; nil is "none".
type Experiment struct {
	ID           string `json:"__id__"`
	Identifier   string `json:"identifier"`
	Beam         *int   `json:"beam,omitempty"`
	Detector     *int   `json:"detector,omitempty"`
	Goniometer   *int   `json:"goniometer,omitempty"`
	Scan         *int   `json:"scan,omitempty"`
	Crystal      *int   `json:"crystal,omitempty"`
	Profile      *int   `json:"profile,omitempty"`
	ScalingModel *int   `json:"scaling_model,omitempty"`
	ImageSet     *int   `json:"imageset,omitempty"`
}

// ImageSet is where the images are: an ImageSequence by a template with
// '#' for the image number (relative paths are relative to the list's
// directory), or an ImageSet of single files.
type ImageSet struct {
	ID       string          `json:"__id__"`
	Template string          `json:"template,omitempty"`
	Images   []string        `json:"images,omitempty"`
	Mask     *string         `json:"mask"`
	Gain     *string         `json:"gain"`
	Pedestal *string         `json:"pedestal"`
	Dx       *string         `json:"dx"`
	Dy       *string         `json:"dy"`
	Params   json.RawMessage `json:"params,omitempty"`
}

// Beam is dxtbx's monochromatic beam. Direction points from the sample
// towards the source (the beam travels along −Direction); wavelength in
// Å; the polarization plane contains the beam and the electric vector and
// has the normal PolarizationNormal; PolarizationFraction is the fraction
// of the intensity polarized in that plane.
type Beam struct {
	Direction            [3]json.Number `json:"direction"`
	Wavelength           json.Number    `json:"wavelength"`
	Divergence           json.Number    `json:"divergence"`
	SigmaDivergence      json.Number    `json:"sigma_divergence"`
	PolarizationNormal   [3]json.Number `json:"polarization_normal"`
	PolarizationFraction json.Number    `json:"polarization_fraction"`
	Flux                 json.Number    `json:"flux"`
	Transmission         json.Number    `json:"transmission"`
}

// Detector is a dxtbx detector: panels and, optionally, the hierarchy of
// groups whose frames the panels' vectors are relative to.
type Detector struct {
	Panels    []Panel `json:"panels"`
	Hierarchy *Group  `json:"hierarchy,omitempty"`
}

// Panel is one flat sensor: lengths in mm, vectors in the DIALS lab frame
// (or in the parent group's frame when a hierarchy is given). Origin is
// the outer corner of the first pixel. Normal is gobragg's own addition
// (dxtbx ignores it): the placed detector's normal, which DIALS computes
// as fast × slow but which gobragg keeps as rotated, so that a list
// gobragg wrote reads back to the same bits.
type Panel struct {
	Name           string          `json:"name"`
	Type           string          `json:"type"`
	FastAxis       [3]json.Number  `json:"fast_axis"`
	SlowAxis       [3]json.Number  `json:"slow_axis"`
	Origin         [3]json.Number  `json:"origin"`
	Normal         *[3]json.Number `json:"gobragg_normal,omitempty"`
	RawImageOffset [2]int          `json:"raw_image_offset"`
	ImageSize      [2]int          `json:"image_size"`
	PixelSize      [2]json.Number  `json:"pixel_size"`
	TrustedRange   [2]json.Number  `json:"trusted_range"`
	Thickness      json.Number     `json:"thickness"`
	Material       string          `json:"material"`
	Mu             json.Number     `json:"mu"`
	Identifier     string          `json:"identifier"`
	Mask           json.RawMessage `json:"mask"`
	Gain           json.Number     `json:"gain"`
	Pedestal       json.Number     `json:"pedestal"`
	PxMmStrategy   json.RawMessage `json:"px_mm_strategy"`
}

// Group is a node of a detector hierarchy: a frame (its fast and slow
// axes and origin in its parent's frame) and children, which are groups
// or references to panels by index.
type Group struct {
	Panel
	PanelIndex *int    `json:"-"`
	Children   []Group `json:"-"`
}

// MarshalJSON writes a panel reference as {"panel": i} and a group as its
// frame fields and children.
func (g Group) MarshalJSON() ([]byte, error) {
	if g.PanelIndex != nil {
		return json.Marshal(map[string]int{"panel": *g.PanelIndex})
	}
	b, err := json.Marshal(g.Panel)
	if err != nil {
		return nil, err
	}
	children, err := json.Marshal(g.Children)
	if err != nil {
		return nil, err
	}
	if g.Children == nil {
		children = []byte("[]")
	}
	return append(append(b[:len(b)-1], []byte(`,"children":`)...), append(children, '}')...), nil
}

// UnmarshalJSON reads either form of a hierarchy node.
func (g *Group) UnmarshalJSON(b []byte) error {
	var ref struct {
		Panel    *int    `json:"panel"`
		Children []Group `json:"children"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		return err
	}
	if ref.Panel != nil {
		g.PanelIndex = ref.Panel
		return nil
	}
	if err := json.Unmarshal(b, &g.Panel); err != nil {
		return err
	}
	g.Children = ref.Children
	return nil
}

// Goniometer is dxtbx's single-axis goniometer: the crystal setting at
// angle φ is S·R(axis, φ)·F (row-major 3×3 matrices). Multi-axis
// goniometers (Axes present) are recognised and refused.
type Goniometer struct {
	RotationAxis    [3]json.Number  `json:"rotation_axis"`
	FixedRotation   [9]json.Number  `json:"fixed_rotation"`
	SettingRotation [9]json.Number  `json:"setting_rotation"`
	Axes            json.RawMessage `json:"axes,omitempty"`
}

// Scan is a rotation scan: images ImageRange[0]…ImageRange[1], the first
// starting at Oscillation[0] degrees, each Oscillation[1] degrees wide.
// Newer dxtbx versions write the per-image values under Properties
// instead; both are read.
type Scan struct {
	ImageRange       [2]int          `json:"image_range"`
	BatchOffset      int             `json:"batch_offset"`
	Oscillation      []json.Number   `json:"oscillation,omitempty"`
	ExposureTime     []json.Number   `json:"exposure_time,omitempty"`
	Epochs           []json.Number   `json:"epochs,omitempty"`
	Properties       *ScanProperties `json:"properties,omitempty"`
	ValidImageRanges json.RawMessage `json:"valid_image_ranges,omitempty"`
}

// ScanProperties are the per-image scan values of newer dxtbx versions.
type ScanProperties struct {
	Oscillation      []json.Number `json:"oscillation"`
	OscillationWidth []json.Number `json:"oscillation_width"`
	ExposureTime     []json.Number `json:"exposure_time"`
	Epochs           []json.Number `json:"epochs"`
}

// Crystal is dxtbx's crystal: the real-space cell vectors (Å) in the lab
// frame at the goniometer's datum (φ = 0, before the fixed rotation) and
// the space group. ScanPointsA, from scan-varying refinement, holds the
// setting matrix A = UB (Å⁻¹, row-major) at each scan point.
type Crystal struct {
	ID                   string           `json:"__id__"`
	RealSpaceA           [3]json.Number   `json:"real_space_a"`
	RealSpaceB           [3]json.Number   `json:"real_space_b"`
	RealSpaceC           [3]json.Number   `json:"real_space_c"`
	SpaceGroupHallSymbol string           `json:"space_group_hall_symbol"`
	ScanPointsA          [][9]json.Number `json:"A_at_scan_points,omitempty"`
}

// MaxBytes bounds the size of an experiment list that Read accepts.
const MaxBytes = 64 << 20

// Read parses an experiment list.
func Read(r io.Reader) (*ExperimentList, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("dials: %w", err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("dials: experiment list larger than %d bytes", MaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var el ExperimentList
	if err := dec.Decode(&el); err != nil {
		return nil, fmt.Errorf("dials: not an experiment list: %w", err)
	}
	if el.ID != "ExperimentList" {
		return nil, fmt.Errorf("dials: __id__ is %q, not ExperimentList", el.ID)
	}
	return &el, nil
}

// ReadFile reads an experiment list file (at most MaxBytes).
func ReadFile(path string) (*ExperimentList, error) {
	f, err := formats.OpenInput(path, MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("dials: %w", err)
	}
	defer f.Close()
	el, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return el, nil
}

// Write writes the list as indented JSON, as dxtbx does.
func (el *ExperimentList) Write(w io.Writer) error {
	b, err := json.MarshalIndent(el, "", "  ")
	if err != nil {
		return fmt.Errorf("dials: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Exact numbers. A value written as x·scale + offset (mm from m, Å from
// m, a polarization fraction from the Kahn factor) is written so that
// reading it back with the inverse map, in exact rational arithmetic and
// one rounding, gives x again bit for bit: the shortest decimal of the
// rounded product when that does, else the exact decimal of the product
// (finite, because x and the maps are dyadic). Values from DIALS go
// through the same inverse and are the float64 nearest to what the file
// says.

type affine struct{ scale, offset *big.Rat }

var (
	mm      = affine{big.NewRat(1000, 1), new(big.Rat)}        // m → mm
	angstrm = affine{big.NewRat(10000000000, 1), new(big.Rat)} // m → Å
	unit    = affine{big.NewRat(1, 1), new(big.Rat)}           // as is
	kahn    = affine{big.NewRat(1, 2), big.NewRat(1, 2)}       // K → (1+K)/2
	perMM   = affine{big.NewRat(1, 1000), new(big.Rat)}        // 1/m → 1/mm
)

func (a affine) apply(x float64) *big.Rat {
	r := new(big.Rat).SetFloat64(x)
	return r.Add(r.Mul(r, a.scale), a.offset)
}

// number writes x under the map a.
func (a affine) number(x float64) (json.Number, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "", fmt.Errorf("dials: %g cannot be written", x)
	}
	exact := a.apply(x)
	y, _ := exact.Float64()
	short := json.Number(pointed(strconv.FormatFloat(y, 'g', -1, 64)))
	if back, err := a.value(short); err == nil && back == x {
		return short, nil
	}
	// The exact decimal: the denominator is a power of two, 2^k, and k
	// decimals hold the value exactly.
	den := exact.Denom()
	k := den.BitLen() - 1
	s := exact.FloatString(k)
	if k > 0 {
		for s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		if s[len(s)-1] == '.' {
			s = s[:len(s)-1]
		}
	}
	return json.Number(pointed(s)), nil
}

// pointed writes whole numbers as dxtbx does, with ".0".
func pointed(s string) string {
	if strings.ContainsAny(s, ".eEn") {
		return s
	}
	return s + ".0"
}

// value reads a number written under the map a and inverts the map.
// Numbers beyond float64's range, or longer than any exact decimal of a
// float64 product, are converted directly (big.Rat would spend time
// without bound on 1e-999999999).
func (a affine) value(n json.Number) (float64, error) {
	s := string(n)
	if s == "" {
		return 0, fmt.Errorf("dials: a number is missing")
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) {
		return 0, fmt.Errorf("dials: %q is not a number in range", s)
	}
	if len(s) > 1200 || exponent(s) > 400 {
		xs, _ := a.scale.Float64()
		off, _ := a.offset.Float64()
		return (x - off) / xs, nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("dials: %q is not a number", s)
	}
	r.Sub(r, a.offset)
	r.Quo(r, a.scale)
	x, _ = r.Float64()
	if math.IsInf(x, 0) {
		return 0, fmt.Errorf("dials: %s is out of range", string(n))
	}
	return x, nil
}

// exponent is the magnitude of a number's decimal exponent (0 without
// one; large for an unreadable one).
func exponent(s string) int {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return 0
	}
	e, err := strconv.Atoi(s[i+1:])
	if err != nil || e < -1<<20 || e > 1<<20 {
		return 1 << 20
	}
	if e < 0 {
		e = -e
	}
	return e
}

func (a affine) vec(v [3]float64) ([3]json.Number, error) {
	var out [3]json.Number
	for i, x := range v {
		var err error
		if out[i], err = a.number(x); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (a affine) values(ns []json.Number) ([]float64, error) {
	out := make([]float64, len(ns))
	for i, n := range ns {
		var err error
		if out[i], err = a.value(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (a affine) vec3(ns [3]json.Number) ([3]float64, error) {
	var out [3]float64
	v, err := a.values(ns[:])
	copy(out[:], v)
	return out, err
}
