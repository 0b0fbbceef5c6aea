package graph

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/gobragg/gobragg/gradcheck"
	"github.com/gobragg/gobragg/models"
	"github.com/gobragg/gobragg/physics"
	G "gorgonia.org/gorgonia"
)

// problem is the gradient check of loss over every parameter of m.
func problem(t *testing.T, m *models.Model, loss Loss) (*gradcheck.Problem, []float64, *Objective) {
	t.Helper()
	o, err := NewObjective(m, m.ParamNames(), loss)
	if err != nil {
		t.Fatal(err)
	}
	x := o.Start()
	p := &gradcheck.Problem{Func: o.Value, Grad: o.Gradient}
	for i, n := range o.Names {
		up, _ := models.LookupParam(n)
		p.Params = append(p.Params, gradcheck.Param{Name: n, Unit: up.Unit, Step: up.StepAt(x[i]), NotDifferentiable: o.NotDifferentiable(n)})
	}
	return p, x, o
}

// TestUserGradients checks the gradient of the summed image with respect
// to every user parameter (Å, degrees, mm, …) against central differences
// of the whole model (each step rebuilds the model with the parameter
// changed, as if given on the command line), over the configurations of
// gradConfigs: relative error ≤ 1e-6 for each differentiable row.
func TestUserGradients(t *testing.T) {
	configs := append(gradConfigs[:len(gradConfigs):len(gradConfigs)], missingHKLConfigs(t)[:2]...)
	for _, tc := range configs {
		t.Run(tc.name, func(t *testing.T) {
			m := model(t, tc.argv...)
			p, x, _ := problem(t, m, Loss{Kind: LossSum})
			for i := range p.Params {
				if up, _ := models.LookupParam(p.Params[i].Name); up.Moves {
					p.Params[i].Step *= tc.step
				}
			}
			// The round shape's slope flips at half-integer hkl: the
			// difference needs steps small enough that no pixel crosses
			// such a cut, which leaves it near its rounding floor. There
			// (only) the bound is 1e-5.
			tol := 1e-6
			if tc.name == "round" {
				tol = 1e-5
			}
			r, err := gradcheck.Check(p, x, &gradcheck.Settings{Tol: tol})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			r.WriteTable(&b)
			// Left out: the spread without mosaic domains (a kink at 0)
			// and, for the Gaussian shape, whatever moves hkl.
			unchecked := 0
			for _, row := range r.Rows {
				up, _ := models.LookupParam(row.Name)
				want := (row.Name == "mosaic_spread" && m.Crystal.Mosaic == 0) || (tc.name == "gauss" && up.Moves)
				if !row.Differentiable {
					unchecked++
				}
				if row.Differentiable == want {
					t.Errorf("%s: differentiable %v", row.Name, row.Differentiable)
				}
				// The rounding floor may decide only rows whose gradient
				// changes the loss by less than 1e-8 of itself per step:
				// there the difference cannot resolve 1e-6 of it.
				if row.Differentiable && row.Note != "" && math.Abs(*row.Analytic)*row.Step > 1e-8*math.Abs(r.Value) {
					t.Errorf("%s: passed only by the difference's rounding floor (%s)", row.Name, row.Note)
				}
			}
			if !r.OK() {
				t.Errorf("gradient check failed:\n%s", b.String())
			} else {
				t.Logf("%d of %d parameters checked:\n%s", len(r.Rows)-unchecked, len(r.Rows), b.String())
			}
		})
	}
}

// TestLossGradients: the squared-residual, Poisson and Gaussian losses,
// with and without a weight mask and a background, differentiate through
// the same program: every
// parameter of a triclinic model against an image of a crystal 0.05 Å
// longer along a (for Poisson, the counts are that image rounded).
func TestLossGradients(t *testing.T) {
	m := model(t, triclinic("-polar", "0.6")...)
	obs := image(t, must(m.With("a", 70.05)))
	counts := make([]float64, len(obs))
	mask := make([]float64, len(obs))
	for i, v := range obs {
		counts[i] = math.Round(v)
		if (i/40)%3 != 0 {
			mask[i] = 1
		}
	}
	// A background of 0.5–1.5 photons a pixel, varying across the image.
	bg := make([]float64, len(obs))
	for i := range bg {
		bg[i] = 1 + 0.5*math.Sin(float64(i)/37)
	}
	for _, l := range []Loss{{Kind: LossSSE, Observed: obs}, {Kind: LossSSE, Observed: obs, Weights: mask},
		{Kind: LossPoisson, Observed: counts}, {Kind: LossPoisson, Observed: counts, Weights: mask},
		{Kind: LossPoisson, Observed: counts, Background: bg}, {Kind: LossSSE, Observed: obs, Weights: mask, Background: bg},
		{Kind: LossGauss, Observed: counts, ReadNoise: 2}, {Kind: LossGauss, Observed: counts, Weights: mask, Background: bg}} {
		p, x, _ := problem(t, m, l)
		r, err := gradcheck.Check(p, x, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		r.WriteTable(&b)
		for _, row := range r.Rows {
			if row.Differentiable && (!row.OK || (row.Note != "" && math.Abs(*row.Analytic)*row.Step > 1e-8*math.Abs(r.Value))) {
				t.Errorf("%s loss (weights %v): %s: %s", l.Kind, l.Weights != nil, row.Name, b.String())
				break
			}
		}
	}
}

func must(m *models.Model, err error) *models.Model {
	if err != nil {
		panic(err)
	}
	return m
}

func image(t *testing.T, m *models.Model) []float64 {
	t.Helper()
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	img, err := s.Image()
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestGraphLoss: a loss written with ordinary gorgonia ops on the image,
// Σ I², differentiates through the pixel op's own backward op
// (PixelGradOp) and agrees with the fused squared-residual loss against a
// zero image.
func TestGraphLoss(t *testing.T) {
	m := model(t, triclinic("-polar", "0.6", "-mosaic", "0.3", "-mosaic_domains", "3")...)
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]float64, m.Detector.FPixels*m.Detector.SPixels)
	want, wantGrad, err := s.Gradient(&Loss{Kind: LossSSE, Observed: zero})
	if err != nil {
		t.Fatal(err)
	}
	g := G.NewGraph()
	key := KeyOf(m)
	inputs, tables, pv, err := emit(g, key, m)
	if err != nil {
		t.Fatal(err)
	}
	img := G.Must(G.ApplyOp(physics.PixelOp{Cfg: key.Pixels}, pv, tables[0], tables[1], tables[2], tables[3]))
	loss := G.Must(G.Sum(G.Must(G.Square(img))))
	var wrt []*G.Node
	var at []int
	for i, in := range inputs {
		if g.To(in.ID()).Len() > 0 {
			wrt, at = append(wrt, in), append(at, i)
		}
	}
	grads, err := G.Grad(loss, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := s.let(inputs, tables); err != nil {
		t.Fatal(err)
	}
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := loss.Value().Data().(float64)
	if math.Abs(got-want) > 1e-12*want {
		t.Errorf("Σ I² = %.15g, fused loss %.15g", got, want)
	}
	nonzero := 0
	for j, d := range grads {
		v := d.Value().Data().(float64)
		w := wantGrad[at[j]]
		if w != 0 {
			nonzero++
		}
		if math.Abs(v-w) > 1e-9*math.Max(math.Abs(w), 1e-300) {
			t.Errorf("%s: graph-op loss gradient %.12g, fused %.12g", inputs[at[j]].Name(), v, w)
		}
	}
	if nonzero < 20 {
		t.Errorf("only %d non-zero gradients compared", nonzero)
	}
}

// TestFieldParamsJacobian: for every parameter inputJacobian takes from
// fieldParams (a constant, no model built), the column equals the
// fourth-order difference of the model's own map (numericJacobian,
// models.Model.With then the graph inputs) to 1e-9, on a cell crystal
// with mosaic domains and polarization, and on a -matrix crystal with
// and without -cell (whose a..γ are then no inputs: the difference
// decides). Every parameter of fieldParams is met at least once.
func TestFieldParamsJacobian(t *testing.T) {
	in := inputsDir()
	met := map[string]bool{}
	for _, argv := range [][]string{
		triclinic("-polar", "0.6", "-mosaic", "0.3", "-mosaic_domains", "3", "-phi", "2", "-fluence", "3e24"),
		{"-hkl", in + "/P1.hkl", "-matrix", in + "/A.mat", "-lambda", "6.2", "-N", "5", "-distance", "100", "-detpixels", "8"},
		{"-hkl", in + "/P1.hkl", "-matrix", in + "/A.mat", "-cell", "70", "80", "90", "75", "85", "95", "-lambda", "6.2",
			"-N", "5", "-distance", "100", "-detpixels", "8"},
	} {
		m := model(t, argv...)
		for _, n := range m.ParamNames() {
			v, _ := m.Get(n)
			got, err := inputJacobian(m, n, v, inputNames(m))
			if err != nil {
				t.Fatal(err)
			}
			want, err := numericJacobian(m, n, v)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d inputs, the difference %d", n, len(got), len(want))
			}
			for j := range want {
				if math.Abs(got[j]-want[j]) > 1e-9*math.Max(math.Abs(want[j]), 1e-300) {
					t.Errorf("%.40s… %s: ∂input[%d] %.17g, the difference %.17g", argv, n, j, got[j], want[j])
				}
			}
			if _, ok := fieldParams[n]; ok {
				met[n] = true
			}
		}
	}
	for n := range fieldParams {
		if !met[n] {
			t.Errorf("%s: no model above has it", n)
		}
	}
	// On the cell crystal every field is an input: a misspelt field would
	// leave its parameter to the difference unnoticed above.
	names := inputNames(model(t, triclinic()...))
	for n, fp := range fieldParams {
		if !slices.Contains(names, fp.field) {
			t.Errorf("%s: no graph input %q", n, fp.field)
		}
	}
}
