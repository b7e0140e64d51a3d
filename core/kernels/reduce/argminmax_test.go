package reduce

import (
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// The expectations in these tests are worked out by hand from TFLite 2.9's
// rules (noted next to each case); the tricky ones were also confirmed by
// running the same single-op models through the real TFLite 2.9 library.

func TestArgMinMaxRegistrations(t *testing.T) {
	// The version ranges TFLite 2.9's BuiltinOpResolver registers (each
	// max+1 was also checked to be rejected by the real library).
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorARG_MAX: {Min: 1, Max: 3},
		schema.BuiltinOperatorARG_MIN: {Min: 1, Max: 3},
	}
	kerneltest.CheckRegistrations(t, argMinMaxOps(), want)
}

func TestArgMinMax(t *testing.T) {
	cases := []struct {
		name  string
		isMax bool
		outT  tensor.DType
		in    *tensor.Tensor
		axis  *tensor.Tensor
		shp   []int
		want  []float64
	}{
		// Ties keep the lowest index.
		{"argmax ties", true, tensor.Int32, kerneltest.ValsT(tensor.Float32, []int{3}, 3, 1, 3), kerneltest.ValsT(tensor.Int32, []int{1}, 0), []int{}, []float64{0}},
		{"argmin ties", false, tensor.Int64, kerneltest.ValsT(tensor.Int8, []int{3}, 2, 1, 1), kerneltest.ValsT(tensor.Int64, []int{1}, 0), []int{}, []float64{1}},
		{"argmax axis 0", true, tensor.Int32, kerneltest.ValsT(tensor.Int32, []int{2, 2}, 1, 5, 4, 5), kerneltest.ValsT(tensor.Int32, []int{1}, 0), []int{2}, []float64{1, 0}},
		{"argmin axis -1", false, tensor.Int32, kerneltest.ValsT(tensor.Uint8, []int{2, 3}, 9, 0, 0, 7, 8, 6), kerneltest.ValsT(tensor.Int32, []int{1}, -1), []int{2}, []float64{1, 2}},
		{"argmax bool", true, tensor.Int32, kerneltest.ValsT(tensor.Bool, []int{4}, 0, 0, 1, 1), kerneltest.ValsT(tensor.Int32, []int{1}, 0), []int{}, []float64{2}},
		{"argmax middle axis", true, tensor.Int64, kerneltest.ValsT(tensor.Float32, []int{2, 2, 2}, 1, 2, 3, 0, -1, -2, -3, -4), kerneltest.ValsT(tensor.Int32, []int{1}, 1), []int{2, 2}, []float64{1, 0, 0, 0}},
	}
	for _, c := range cases {
		for _, constAxis := range []bool{true, false} {
			a := &ArgMinMax{IsMax: c.isMax, Params: ArgMinMaxParams{OutputType: c.outT}}
			axis := *c.axis
			axis.Const = constAxis
			out := tensor.NewTensor(c.outT)
			if err := kerneltest.Run1(a, out, c.in, &axis); err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if out.Dynamic == constAxis {
				t.Errorf("%s: Dynamic = %v with constant axis %v", c.name, out.Dynamic, constAxis)
			}
			kerneltest.CheckOutput(t, c.name, out, c.shp, c.want)
		}
	}
	bad := []struct {
		name string
		a    *ArgMinMax
		in   *tensor.Tensor
		axis *tensor.Tensor
		out  *tensor.Tensor
	}{
		{"float index type", &ArgMinMax{IsMax: true, Params: ArgMinMaxParams{OutputType: tensor.Float32}}, kerneltest.ValsT(tensor.Float32, []int{2}, 1, 2), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 0)), tensor.NewTensor(tensor.Float32)},
		{"axis out of range", &ArgMinMax{IsMax: true, Params: ArgMinMaxParams{OutputType: tensor.Int32}}, kerneltest.ValsT(tensor.Float32, []int{2}, 1, 2), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 1)), tensor.NewTensor(tensor.Int32)},
		{"int64 input", &ArgMinMax{Params: ArgMinMaxParams{OutputType: tensor.Int32}}, kerneltest.ValsT(tensor.Int64, []int{2}, 1, 2), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 0)), tensor.NewTensor(tensor.Int32)},
		{"two axis values", &ArgMinMax{Params: ArgMinMaxParams{OutputType: tensor.Int32}}, kerneltest.ValsT(tensor.Float32, []int{2}, 1, 2), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 0, 0)), tensor.NewTensor(tensor.Int32)},
	}
	for _, c := range bad {
		if err := kerneltest.Run1(c.a, c.out, c.in, c.axis); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestArgMinMaxOptionsFromModel(t *testing.T) {
	// Without a model the options take the schema defaults: ARG_MAX and
	// ARG_MIN then have no valid index type.
	for _, r := range argMinMaxOps() {
		op, err := r.New(kernel.OpInfo{Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		err = kerneltest.Run1(op, tensor.NewTensor(tensor.Int32), kerneltest.ValsT(tensor.Float32, []int{2}, 1, 2), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 0)))
		if err == nil {
			t.Errorf("%s: no error without an output_type", r.Name())
		}
	}
}
