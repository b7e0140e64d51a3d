package reduce

import (
	"fmt"

	"github.com/delego/delego/core/kernels/internal/asm/argbytes"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// argMinMaxOps returns the registrations of ARG_MAX and ARG_MIN.
func argMinMaxOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorARG_MAX, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Bool}, New: newArgMinMaxFactory(true)},
		{Code: schema.BuiltinOperatorARG_MIN, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Bool}, New: newArgMinMaxFactory(false)},
	}
}

// ArgMinMaxParams are the options of ARG_MAX and ARG_MIN: the index type.
type ArgMinMaxParams struct {
	OutputType tensor.DType
}

// ArgMinMax is the kernel of ARG_MAX and ARG_MIN
// (tensorflow/lite/kernels/arg_min_max.cc): the index of the largest
// (smallest) value along one axis; ties keep the lowest index.
type ArgMinMax struct {
	IsMax  bool
	Params ArgMinMaxParams

	axis int
}

func (a *ArgMinMax) name() string {
	if a.IsMax {
		return "ARG_MAX"
	}
	return "ARG_MIN"
}

func newArgMinMaxFactory(isMax bool) func(kernel.OpInfo) (kernel.Op, error) {
	return func(info kernel.OpInfo) (kernel.Op, error) {
		a := &ArgMinMax{IsMax: isMax, Params: ArgMinMaxParams{OutputType: tensor.Float32}}
		want := schema.BuiltinOptionsArgMinOptions
		if isMax {
			want = schema.BuiltinOptionsArgMaxOptions
		}
		if tbl, ok := info.Options(want); ok {
			if isMax {
				var o schema.ArgMaxOptions
				o.Init(tbl.Bytes, tbl.Pos)
				a.Params.OutputType = tensor.DType(o.OutputType())
			} else {
				var o schema.ArgMinOptions
				o.Init(tbl.Bytes, tbl.Pos)
				a.Params.OutputType = tensor.DType(o.OutputType())
			}
		}
		return a, nil
	}
}

// axisValue reads the single axis value (INT32 or INT64) and normalizes it.
func (a *ArgMinMax) axisValue(in, axis *tensor.Tensor) (int, error) {
	var v int
	if axis.Type == tensor.Int64 {
		v = int(int32(axis.Int64s()[0]))
	} else {
		v = int(axis.Int32s()[0])
	}
	nd := len(in.Shape)
	if v < 0 {
		v += nd
	}
	if v < 0 || v >= nd {
		return 0, fmt.Errorf("axis %d out of range for %d-D input", v, nd)
	}
	return v, nil
}

func (a *ArgMinMax) resize(in, axis, out *tensor.Tensor) error {
	ax, err := a.axisValue(in, axis)
	if err != nil {
		return err
	}
	a.axis = ax
	var buf [8]int
	shape := buf[:0]
	for i, d := range in.Shape {
		if i != ax {
			shape = append(shape, d)
		}
	}
	kernel.SetShape(out, shape)
	return nil
}

// Prepare checks the tensors and sizes the output when the axis is constant.
func (a *ArgMinMax) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return fmt.Errorf("%s: want 2 inputs and 1 output, have %d and %d", a.name(), len(n.Inputs), len(n.Outputs))
	}
	in, axis, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if in == nil || axis == nil || out == nil {
		return fmt.Errorf("%s: missing tensor", a.name())
	}
	if axis.NumElements() != 1 {
		return fmt.Errorf("%s: axis must have 1 element, has %d", a.name(), axis.NumElements())
	}
	if axis.Type != tensor.Int32 && axis.Type != tensor.Int64 {
		return fmt.Errorf("%s: axis type %s, want INT32 or INT64", a.name(), axis.Type)
	}
	switch a.Params.OutputType {
	case tensor.Int32, tensor.Int64:
	default:
		return fmt.Errorf("%s: output index type %s, want INT32 or INT64", a.name(), a.Params.OutputType)
	}
	if out.Type != a.Params.OutputType {
		return fmt.Errorf("%s: output tensor type %s differs from output_type option %s", a.name(), out.Type, a.Params.OutputType)
	}
	switch in.Type {
	case tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int32, tensor.Bool:
	default:
		return fmt.Errorf("%s: input type %s is not supported by TFLite", a.name(), in.Type)
	}
	if !axis.Const {
		out.Dynamic = true
		return nil
	}
	if err := a.resize(in, axis, out); err != nil {
		return fmt.Errorf("%s: %w", a.name(), err)
	}
	return nil
}

// Eval writes the indices.
func (a *ArgMinMax) Eval(n *kernel.Node) error {
	in, axis, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if out.Dynamic {
		if err := a.resize(in, axis, out); err != nil {
			return fmt.Errorf("%s: %w", a.name(), err)
		}
	}
	outer, size, inner := a.extent(in.Shape)
	positions := outer * inner
	t := in.Type
	runs := (t == tensor.Uint8 || t == tensor.Int8 || t == tensor.Bool) && inner == 1 && size >= 1 && size <= 64
	return kernel.TryParallel(n.Workers, kernel.WorkersFor(n.Threads, positions, in.NumElements()), positions, func(_, lo, hi int) error {
		if runs { // bytes along the last axis: the row kernel
			i32, i64 := argIndices(out)
			argbytes.Runs(in.Data, size, a.IsMax, t == tensor.Int8, i32, i64, lo, hi)
			return nil
		}
		switch t {
		case tensor.Float32:
			argMinMaxRange(a.IsMax, in.Float32s(), size, inner, out, lo, hi)
		case tensor.Uint8, tensor.Bool: // false < true, as C++ compares bools
			argMinMaxRange(a.IsMax, in.Uint8s(), size, inner, out, lo, hi)
		case tensor.Int8:
			argMinMaxRange(a.IsMax, in.Int8s(), size, inner, out, lo, hi)
		case tensor.Int32:
			argMinMaxRange(a.IsMax, in.Int32s(), size, inner, out, lo, hi)
		default:
			return fmt.Errorf("%s: input type %s is not supported by TFLite", a.name(), in.Type)
		}
		return nil
	})
}

// extent splits shape around the axis: the elements before it, its length
// and the elements after it.
func (a *ArgMinMax) extent(shape []int) (outer, size, inner int) {
	outer, inner = 1, 1
	for i, d := range shape {
		switch {
		case i < a.axis:
			outer *= d
		case i > a.axis:
			inner *= d
		}
	}
	return outer, shape[a.axis], inner
}

// argIndices is the output's elements: INT64 (i64) or INT32 (i32).
func argIndices(out *tensor.Tensor) (i32 []int32, i64 []int64) {
	if out.Type == tensor.Int64 {
		return nil, out.Int64s()
	}
	return out.Int32s(), nil
}

// argMinMaxRange writes the index of the largest (isMax) or smallest value
// along the axis for output positions [lo, hi) (o*inner + i); the first
// such index on ties.
func argMinMaxRange[T ~uint8 | ~int8 | ~int32 | ~float32](isMax bool, src []T, size, inner int, out *tensor.Tensor, lo, hi int) {
	i32, i64 := argIndices(out)
	for p := lo; p < hi; p++ {
		o, i := p/inner, p%inner
		idx := 0
		if size > 0 {
			idx = argbytes.Along(isMax, src[o*size*inner+i:], size, inner)
		}
		if i64 != nil {
			i64[p] = int64(idx)
		} else {
			i32[p] = int32(idx)
		}
	}
}
