package core

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// whereThenCumsum is x (FLOAT32 [2, 3]) -> WHERE -> coords (INT64 [n, 2],
// sized by the values) -> CUMSUM along axis 0: the WHERE output is sized in
// Eval, and the CUMSUM after it is prepared again on every Invoke.
func whereThenCumsum() []byte {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, []int{2, 3})
	coords := b.Tensor("coords", tensor.Int64, nil)
	axis := b.Const("axis", tensor.Int32, nil, []byte{0, 0, 0, 0})
	out := b.Tensor("sums", tensor.Int64, nil)
	b.Op(schema.BuiltinOperatorWHERE, 2, []int{x}, []int{coords}, nil)
	b.Op(schema.BuiltinOperatorCUMSUM, 1, []int{coords, axis}, []int{out},
		modelbuild.Options(schema.BuiltinOptionsCumsumOptions, &schema.CumsumOptionsT{}))
	b.Inputs(x)
	b.Outputs(out)
	return b.Bytes()
}

// TestValueSizedOutputs: an output whose size depends on the input's values
// follows them from one Invoke to the next, and an Invoke that keeps the
// sizes allocates nothing (no arena is planned for such tensors).
func TestValueSizedOutputs(t *testing.T) {
	m, err := model.New(whereThenCumsum())
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewInterpreter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x    []float32
		want []int64 // the running sums of the coordinates
	}{
		{[]float32{0, 1, 0, 2, 0, 3}, []int64{0, 1, 1, 1, 2, 3}},
		{[]float32{0, 0, 0, 0, 0, 0}, nil},
		{[]float32{1, 1, 1, 1, 1, -1}, []int64{0, 0, 0, 1, 0, 3, 1, 3, 2, 4, 3, 6}},
	} {
		in := make([]byte, 4*len(c.x))
		for i, v := range c.x {
			binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(v))
		}
		if err := it.Input(0).CopyFrom(in); err != nil {
			t.Fatal(err)
		}
		if err := it.Invoke(context.Background()); err != nil {
			t.Fatal(err)
		}
		out := it.Output(0)
		if want := []int{len(c.want) / 2, 2}; !slices.Equal(out.Shape(), want) {
			t.Errorf("x %v: shape %v, want %v", c.x, out.Shape(), want)
			continue
		}
		got := make([]int64, len(c.want))
		for i := range got {
			got[i] = int64(binary.LittleEndian.Uint64(out.Data()[8*i:]))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("x %v: sums %v, want %v", c.x, got, c.want)
		}
	}
	allocs := testing.AllocsPerRun(10, func() {
		if err := it.Invoke(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Invoke with unchanged sizes", allocs)
	}
}
