package kerneltest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	flatbuffers "github.com/google/flatbuffers/go"
)

// The test helpers every op family's tests use: making tensors, reading
// them back, building options tables and running an op as the interpreter
// does. Family-specific helpers stay in the family's test file.

// QT makes a tensor of the given type and shape; a scale of 0 leaves it
// unquantized, any other gives it per-tensor quantization.
func QT(typ tensor.DType, shape []int, scale float32, zp int64) *tensor.Tensor {
	t := tensor.NewTensor(typ, shape...)
	if scale != 0 {
		WithQ(t, scale, zp)
	}
	return t
}

// WithQ gives t per-tensor quantization and returns it.
func WithQ(t *tensor.Tensor, scale float32, zp int64) *tensor.Tensor {
	t.Quant = &tensor.Quantization{Scale: []float32{scale}, ZeroPoint: []int64{zp}}
	return t
}

// ConstT marks t constant (model data), as the interpreter does, and
// returns it.
func ConstT(t *tensor.Tensor) *tensor.Tensor { t.Const = true; return t }

// StringsT returns a STRING tensor of shape holding values, one per
// element, Dynamic as the interpreter keeps non-constant STRING tensors.
func StringsT(shape []int, values ...string) *tensor.Tensor {
	t := &tensor.Tensor{Type: tensor.String, Dynamic: true}
	t.SetStrings(shape, func(i int) []byte { return []byte(values[i]) })
	return t
}

// StringsOf returns the strings of STRING tensor t, failing the test when
// its data is not a string buffer of one string per element.
func StringsOf(t testing.TB, x *tensor.Tensor) []string {
	t.Helper()
	s, err := x.Strings()
	if err != nil {
		t.Fatal(err)
	}
	return s.All()
}

// OutT is an output tensor of type typ with neither shape nor data: Prepare
// sets the shape.
func OutT(typ tensor.DType) *tensor.Tensor { return &tensor.Tensor{Type: typ} }

// QOut is outT with quantization (none for a scale of 0).
func QOut(typ tensor.DType, scale float32, zp int64) *tensor.Tensor {
	t := OutT(typ)
	if scale != 0 {
		WithQ(t, scale, zp)
	}
	return t
}

// TensorOf makes a tensor of the given type and shape holding vals, Go
// values of the type's elements.
func TensorOf[T any](typ tensor.DType, shape []int, vals ...T) *tensor.Tensor {
	t := tensor.NewTensor(typ, shape...)
	copy(tensor.View[T](t.Data), vals)
	return t
}

func F32T(shape []int, v ...float32) *tensor.Tensor { return TensorOf(tensor.Float32, shape, v...) }

// ValsT makes a tensor of any numeric or BOOL type holding vals, one for
// each element (every type's values are exact in float64).
func ValsT(typ tensor.DType, shape []int, vals ...float64) *tensor.Tensor {
	t := tensor.NewTensor(typ, shape...)
	if len(vals) != t.NumElements() {
		panic(fmt.Sprintf("valsT: %d values for shape %v", len(vals), shape))
	}
	SetValues(t, vals)
	return t
}

// SetValues stores vals (converted) in t's first elements.
func SetValues(t *tensor.Tensor, vals []float64) {
	for i, v := range vals {
		switch t.Type {
		case tensor.Float32:
			t.Float32s()[i] = float32(v)
		case tensor.Int32:
			t.Int32s()[i] = int32(v)
		case tensor.Int64:
			t.Int64s()[i] = int64(v)
		case tensor.Int16:
			t.Int16s()[i] = int16(v)
		case tensor.Int8:
			t.Int8s()[i] = int8(v)
		case tensor.Uint8:
			t.Uint8s()[i] = uint8(v)
		case tensor.Uint32:
			t.Uint32s()[i] = uint32(v)
		case tensor.Bool:
			t.Data[i] = 0
			if v != 0 {
				t.Data[i] = 1
			}
		case tensor.Complex64:
			t.Float32s()[2*i] = float32(v)
		}
	}
}

// Values returns t's elements as float64 (the real parts of COMPLEX64).
func Values(t *tensor.Tensor) []float64 {
	n := t.NumElements()
	out := make([]float64, n)
	for i := range out {
		switch t.Type {
		case tensor.Float32:
			out[i] = float64(t.Float32s()[i])
		case tensor.Int32:
			out[i] = float64(t.Int32s()[i])
		case tensor.Int64:
			out[i] = float64(t.Int64s()[i])
		case tensor.Int16:
			out[i] = float64(t.Int16s()[i])
		case tensor.Int8:
			out[i] = float64(t.Int8s()[i])
		case tensor.Uint8:
			out[i] = float64(t.Uint8s()[i])
		case tensor.Uint32:
			out[i] = float64(t.Uint32s()[i])
		case tensor.Bool:
			out[i] = float64(t.Data[i])
		case tensor.Complex64:
			out[i] = float64(t.Float32s()[2*i])
		}
	}
	return out
}

// RunNode prepares and evaluates op on a node of ins and outs with the
// given thread count, giving every non-dynamic output fresh (zeroed) memory
// after Prepare, as the interpreter does; dynamic outputs are sized by Eval.
func RunNode(op kernel.Op, threads int, ins, outs []*tensor.Tensor) error {
	n := &kernel.Node{Inputs: ins, Outputs: outs, Threads: threads}
	if err := op.Prepare(n); err != nil {
		return err
	}
	for _, o := range outs {
		if !o.Dynamic {
			o.Data = tensor.NewTensor(o.Type, o.Shape...).Data
		}
	}
	return op.Eval(n)
}

// Run1 is runNode for one output and one thread.
func Run1(op kernel.Op, out *tensor.Tensor, ins ...*tensor.Tensor) error {
	return RunNode(op, 1, ins, []*tensor.Tensor{out})
}

// MustRun is runNode for one output that ends the test on an error.
func MustRun(t *testing.T, op kernel.Op, threads int, out *tensor.Tensor, ins ...*tensor.Tensor) {
	t.Helper()
	if err := RunNode(op, threads, ins, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
}

// PrepareErr returns the error of Prepare on a one-output node.
func PrepareErr(op kernel.Op, out *tensor.Tensor, ins ...*tensor.Tensor) error {
	return op.Prepare(&kernel.Node{Inputs: ins, Outputs: []*tensor.Tensor{out}, Threads: 1})
}

// OperatorWith builds an Operator table carrying builtin options of type
// typ, which build writes.
func OperatorWith(typ schema.BuiltinOptions, build func(b *flatbuffers.Builder) flatbuffers.UOffsetT) *schema.Operator {
	b := flatbuffers.NewBuilder(64)
	opts := build(b)
	schema.OperatorStart(b)
	schema.OperatorAddBuiltinOptionsType(b, typ)
	schema.OperatorAddBuiltinOptions(b, opts)
	b.Finish(schema.OperatorEnd(b))
	return schema.GetRootAsOperator(b.FinishedBytes(), 0)
}

// CheckRegistrations checks a family's registrations against the version
// ranges of TFLite 2.9's builtin resolver, and that each kernel can be made
// without a model (from schema defaults).
func CheckRegistrations(t *testing.T, regs []kernel.Registration, want map[schema.BuiltinOperator]tensor.VersionRange) {
	t.Helper()
	if len(regs) != len(want) {
		t.Errorf("%d registrations, want %d", len(regs), len(want))
	}
	for _, r := range regs {
		if w, ok := want[r.Code]; !ok || w != r.Versions {
			t.Errorf("%s: versions %v, want %v", r.Name(), r.Versions, w)
		}
		if _, err := r.New(kernel.OpInfo{Version: 1}); err != nil {
			t.Errorf("%s: New without a model: %v", r.Name(), err)
		}
	}
}

// CheckOutput compares an output with the expected shape and values.
func CheckOutput(t *testing.T, name string, out *tensor.Tensor, shape []int, want []float64) {
	t.Helper()
	if !slices.Equal(out.Shape, shape) {
		t.Errorf("%s: shape %v, want %v", name, out.Shape, shape)
		return
	}
	got := Values(out)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
			t.Errorf("%s: values %v, want %v", name, got, want)
			return
		}
	}
}

// SeqFrom returns the n values from, from+1, from+2, ...
func SeqFrom(n int, from float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = from + float64(i)
	}
	return s
}

// LcgFill fills a tensor with a deterministic pseudo-random byte pattern.
func LcgFill(t *tensor.Tensor, seed uint32) *tensor.Tensor {
	s := seed
	for i := range t.Data {
		s = s*1664525 + 1013904223
		t.Data[i] = byte(s >> 24)
	}
	if t.Type == tensor.Float32 {
		f := t.Float32s()
		for i := range f {
			s = s*1664525 + 1013904223
			f[i] = float32(s>>8)/(1<<24)*2 - 1
		}
	}
	return t
}

// CheckThreadsInvariant runs each case with 1, 3 and 8 threads: every
// thread count must give the same output bytes. A case makes a fresh op,
// its inputs and its (unsized) output.
func CheckThreadsInvariant(t *testing.T, cases map[string]func() (kernel.Op, []*tensor.Tensor, *tensor.Tensor)) {
	t.Helper()
	for name, mkOp := range cases {
		var ref []byte
		for _, threads := range []int{1, 3, 8} {
			op, ins, out := mkOp()
			n := &kernel.Node{Inputs: ins, Outputs: []*tensor.Tensor{out}, Threads: threads}
			if err := op.Prepare(n); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
			if err := op.Eval(n); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if ref == nil {
				ref = out.Data
			} else if string(ref) != string(out.Data) {
				t.Errorf("%s: %d threads differ from 1", name, threads)
			}
		}
	}
}

// I32T is a constant INT32 tensor, as parameter inputs (block shapes,
// paddings, output shapes) are.
func I32T(shape []int, v ...int32) *tensor.Tensor { return ConstT(TensorOf(tensor.Int32, shape, v...)) }

// U8T and i8T are quantized 8-bit tensors holding v.
func U8T(shape []int, scale float32, zp int64, v ...uint8) *tensor.Tensor {
	return WithQ(TensorOf(tensor.Uint8, shape, v...), scale, zp)
}

func I8T(shape []int, scale float32, zp int64, v ...int8) *tensor.Tensor {
	return WithQ(TensorOf(tensor.Int8, shape, v...), scale, zp)
}

// CloseF32 reports whether a and b have the same length and differ by at
// most tol element by element.
func CloseF32(a, b []float32, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i])-float64(b[i])) > tol {
			return false
		}
	}
	return true
}
