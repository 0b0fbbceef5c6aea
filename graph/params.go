package graph

import "github.com/gobragg/gobragg/models"

// field is one named continuous parameter of a model.
type field[T any] struct {
	name string
	ptr  *T
}

// maxFields is the most fields a model has (matrix elements, cell lengths
// and the rest): fields' capacity.
const maxFields = 9 + 6 + 32

// fields lists the graph's input parameters in a fixed order. Which ones
// exist is structural: a matrix crystal has no cell lengths, a cell crystal
// no matrix elements.
func fields[T any](p *models.Params[T], fromMatrix, cellLengths bool) []field[T] {
	c, d := &p.Crystal, &p.Detector
	fs := make([]field[T], 0, maxFields)
	if fromMatrix {
		for i := range c.Matrix {
			fs = append(fs, field[T]{"crystal.mat" + string(rune('0'+i/3)) + string(rune('0'+i%3)), &c.Matrix[i]})
		}
	}
	if !fromMatrix || cellLengths {
		fs = append(fs, field[T]{"crystal.a", &c.A}, field[T]{"crystal.b", &c.B}, field[T]{"crystal.c", &c.C},
			field[T]{"crystal.alpha", &c.Alpha}, field[T]{"crystal.beta", &c.Beta}, field[T]{"crystal.gamma", &c.Gamma})
	}
	return append(fs,
		field[T]{"crystal.misset_x", &c.MissetX}, field[T]{"crystal.misset_y", &c.MissetY},
		field[T]{"crystal.misset_z", &c.MissetZ},
		field[T]{"crystal.orient_x", &c.OrientX}, field[T]{"crystal.orient_y", &c.OrientY}, field[T]{"crystal.orient_z", &c.OrientZ},
		field[T]{"crystal.phi", &c.Phi},
		field[T]{"crystal.phistep", &c.PhiStep}, field[T]{"crystal.mosaic", &c.Mosaic}, field[T]{"crystal.fudge", &c.Fudge},
		field[T]{"crystal.Na", &c.Na}, field[T]{"crystal.Nb", &c.Nb}, field[T]{"crystal.Nc", &c.Nc},
		field[T]{"crystal.default_F", &c.DefaultF},
		field[T]{"detector.distance", &d.Distance}, field[T]{"detector.close_distance", &d.CloseDistance},
		field[T]{"detector.fbeam", &d.Fbeam}, field[T]{"detector.sbeam", &d.Sbeam},
		field[T]{"detector.fclose", &d.Fclose}, field[T]{"detector.sclose", &d.Sclose},
		field[T]{"detector.rotx", &d.RotX}, field[T]{"detector.roty", &d.RotY}, field[T]{"detector.rotz", &d.RotZ},
		field[T]{"detector.twotheta", &d.TwoTheta}, field[T]{"detector.pixel", &d.Pixel},
		field[T]{"detector.thickstep", &d.ThickStep}, field[T]{"detector.mu", &d.Mu},
		field[T]{"beam.lambda", &p.Lambda}, field[T]{"beam.fluence", &p.Fluence}, field[T]{"beam.kahn", &p.Kahn},
		field[T]{"beam.water", &p.Water}, field[T]{"beam.dmin", &p.Dmin},
	)
}
