package dials

import (
	"encoding/json"
	"fmt"

	"github.com/gobragg/gobragg/models"
)

// SetCrystal writes model m's real-space cell vectors (φ = 0) into
// experiment i's crystal, in the DIALS frame and with the goniometer's
// setting and fixed rotations undone, as dials.refine writes a refined
// crystal. m is in the lab frame of base: a model Geometry.Model(base, n)
// made, refined. Scan-varying matrices are dropped (they would contradict
// the new vectors). Experiments sharing the crystal share the new one.
func (el *ExperimentList) SetCrystal(i int, m, base *models.Model) error {
	if i < 0 || i >= len(el.Experiments) {
		return fmt.Errorf("dials: no experiment %d (the list has %d)", i, len(el.Experiments))
	}
	e := el.Experiments[i]
	if e.Crystal == nil || *e.Crystal < 0 || *e.Crystal >= len(el.Crystals) {
		return fmt.Errorf("dials: experiment %d has no crystal", i)
	}
	sf := identity
	if e.Goniometer != nil && *e.Goniometer >= 0 && *e.Goniometer < len(el.Goniometers) {
		gon := &el.Goniometers[*e.Goniometer]
		setting, err := mat(gon.SettingRotation)
		if err != nil {
			return err
		}
		fixed, err := mat(gon.FixedRotation)
		if err != nil {
			return err
		}
		sf = mulMM(setting, fixed)
	}
	inv, ok := invert(sf)
	if !ok {
		return fmt.Errorf("dials: experiment %d: the goniometer's rotations are singular", i)
	}
	r := frameOf(base.Detector)
	A := models.Float{}
	a, b, c := models.RealVectors[float64](A, m.Crystal, m.Crystal.Params(), m.Beam.Lambda)
	cr := &el.Crystals[*e.Crystal]
	for _, p := range []struct {
		dst *[3]json.Number
		v   models.V3[float64]
	}{{&cr.RealSpaceA, a}, {&cr.RealSpaceB, b}, {&cr.RealSpaceC, c}} {
		n, err := angstrm.vec(mulMV(inv, r.to(p.v)))
		if err != nil {
			return err
		}
		*p.dst = n
	}
	cr.ScanPointsA = nil
	return nil
}

// invert inverts a 3×3 matrix (row-major), by cofactors.
func invert(m [9]float64) ([9]float64, bool) {
	var c [9]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			r1, r2 := (i+1)%3, (i+2)%3
			c1, c2 := (j+1)%3, (j+2)%3
			c[3*j+i] = m[3*r1+c1]*m[3*r2+c2] - m[3*r1+c2]*m[3*r2+c1]
		}
	}
	det := m[0]*c[0] + m[1]*c[3] + m[2]*c[6]
	if det == 0 {
		return c, false
	}
	for k := range c {
		c[k] /= det
	}
	return c, true
}

// SetDetector writes model m's placed detector — its panel's origin and
// fast, slow and normal axes — into experiment i's detector, in the DIALS
// frame of base and within the detector's hierarchy when it has one, as
// dials.refine writes a refined detector. m is in the lab frame of base
// (see SetCrystal). Experiments sharing the detector share the new one.
func (el *ExperimentList) SetDetector(i int, m, base *models.Model) error {
	if i < 0 || i >= len(el.Experiments) {
		return fmt.Errorf("dials: no experiment %d (the list has %d)", i, len(el.Experiments))
	}
	e := el.Experiments[i]
	if e.Detector == nil || *e.Detector < 0 || *e.Detector >= len(el.Detectors) {
		return fmt.Errorf("dials: experiment %d has no detector", i)
	}
	d := &el.Detectors[*e.Detector]
	if len(d.Panels) != 1 {
		return fmt.Errorf("dials: the detector has %d panels; gobragg models one flat panel", len(d.Panels))
	}
	r := frameOf(base.Detector)
	A := models.Float{}
	fr := models.Place[float64](A, m.Detector, m.Detector.Params())
	origin, fast, slow, normal := r.to(fr.Pix0), r.to(fr.F), r.to(fr.S), r.to(fr.O)
	if d.Hierarchy != nil {
		// The panel's vectors are in its group's frame: undo the groups'.
		gm, o, ok := panelFrame(d.Hierarchy, 0, identity, [3]float64{})
		if !ok {
			return fmt.Errorf("dials: the detector hierarchy does not hold panel 0")
		}
		inv, ok := invert(gm)
		if !ok {
			return fmt.Errorf("dials: the detector hierarchy's frame is singular")
		}
		origin = mulMV(inv, add(origin, neg(o)))
		fast, slow, normal = mulMV(inv, fast), mulMV(inv, slow), mulMV(inv, normal)
	}
	p := &d.Panels[0]
	var err error
	if p.Origin, err = mm.vec(origin); err != nil {
		return err
	}
	if p.FastAxis, err = unit.vec(fast); err != nil {
		return err
	}
	if p.SlowAxis, err = unit.vec(slow); err != nil {
		return err
	}
	if p.Normal != nil {
		n, err := unit.vec(normal)
		if err != nil {
			return err
		}
		p.Normal = &n
	}
	return nil
}

// SetWavelength writes model m's wavelength into experiment i's beam.
func (el *ExperimentList) SetWavelength(i int, m *models.Model) error {
	if i < 0 || i >= len(el.Experiments) {
		return fmt.Errorf("dials: no experiment %d (the list has %d)", i, len(el.Experiments))
	}
	e := el.Experiments[i]
	if e.Beam == nil || *e.Beam < 0 || *e.Beam >= len(el.Beams) {
		return fmt.Errorf("dials: experiment %d has no beam", i)
	}
	n, err := angstrm.number(m.Beam.Lambda)
	if err != nil {
		return err
	}
	el.Beams[*e.Beam].Wavelength = n
	return nil
}
