package core

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// fp16le encodes v as little-endian FLOAT16 values.
func fp16le(v ...float32) []byte {
	out := make([]byte, 2*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint16(out[2*i:], tensor.Float32ToFloat16(f))
	}
	return out
}

// dequantizeModel is x [1,4] -> FULLY_CONNECTED with weights [2,4] that a
// DEQUANTIZE makes float from a constant (fp16, or int8 at scale 0.5 and
// zero point 1) -> y [1,2]. With asOutput, the dequantized weights (tensor
// 1) are a graph output too.
func dequantizeModel(typ tensor.DType, asOutput bool) []byte {
	b := modelbuild.New()
	var w int
	if typ == tensor.Float16 {
		w = b.Const("w16", tensor.Float16, []int{2, 4}, fp16le(1, -2, 0.5, 3, -0.25, 4, 8, -1))
	} else {
		w = b.Const("w8", tensor.Int8, []int{2, 4}, []byte{3, 0xfb, 2, 7, 0, 9, 17, 255}, modelbuild.Quant(0.5, 1))
	}
	wf := b.Tensor("w", tensor.Float32, []int{2, 4})
	x := b.Tensor("x", tensor.Float32, []int{1, 4})
	y := b.Tensor("y", tensor.Float32, []int{1, 2})
	b.Op(schema.BuiltinOperatorDEQUANTIZE, 2, []int{w}, []int{wf}, nil)
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{x, wf, -1}, []int{y},
		modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{}))
	b.Inputs(x)
	if asOutput {
		b.Outputs(y, wf)
	} else {
		b.Outputs(y)
	}
	return b.Bytes()
}

// dequantized are the weights of dequantizeModel as float32, per type.
var dequantized = map[tensor.DType][]float32{
	tensor.Float16: {1, -2, 0.5, 3, -0.25, 4, 8, -1},
	// 0.5 * (q - 1) for q = 3, -5, 2, 7, 0, 9, 17, -1.
	tensor.Int8: {1, -3, 0.5, 3, -0.5, 4, 8, -1},
}

// runDequantizeModel runs it on x = 1, 2, 3, 4 and returns y.
func runDequantizeModel(t *testing.T, it *Interpreter) []float32 {
	t.Helper()
	if err := it.Input(0).CopyFrom(f32le(1, 2, 3, 4)); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(it.Output(0).Float32s())
}

// countOps is a Profiler that counts the nodes reported per op, and the
// time they took.
type countOps struct {
	n    map[string]int
	took map[string]int64
}

func (c *countOps) NodeDone(_ *model.Model, _ int, op string, elapsed time.Duration) {
	c.n[op]++
	c.took[op] += int64(elapsed)
}

// TestConstantDequantizeFolded checks that a DEQUANTIZE of a constant is
// computed once for every interpreter of the model: its output holds the
// dequantized weights before any Invoke, in memory every interpreter of
// the model shares and none can overwrite, the node costs nothing at
// Invoke (the profile lists it at zero), the report says it is folded,
// and the results are the per-Invoke ones.
func TestConstantDequantizeFolded(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.Float16, tensor.Int8} {
		t.Run(typ.String(), func(t *testing.T) {
			m, err := model.New(dequantizeModel(typ, false))
			if err != nil {
				t.Fatal(err)
			}
			w := dequantized[typ]
			want := []float32{w[0] + 2*w[1] + 3*w[2] + 4*w[3], w[4] + 2*w[5] + 3*w[6] + 4*w[7]}
			var data [2]*byte
			for i := range data {
				prof := &countOps{n: map[string]int{}, took: map[string]int64{}}
				it, err := NewInterpreter(m, &Options{Profiler: prof})
				if err != nil {
					t.Fatal(err)
				}
				defer it.Close()
				if err := it.AllocateTensors(); err != nil {
					t.Fatal(err)
				}
				wf := it.Tensor(1)
				if got := wf.Float32s(); !slices.Equal(got, w) {
					t.Fatalf("interpreter %d: dequantized weights before Invoke are %v, want %v", i, got, w)
				}
				data[i] = unsafe.SliceData(wf.Data())
				if err := wf.CopyFrom(f32le(0, 0, 0, 0, 0, 0, 0, 0)); err == nil || !strings.Contains(err.Error(), "constant") {
					t.Errorf("interpreter %d: overwriting the folded weights gave %v, want an error naming a constant", i, err)
				}
				for range 2 {
					if got := runDequantizeModel(t, it); !slices.Equal(got, want) {
						t.Errorf("interpreter %d: y = %v, want %v", i, got, want)
					}
				}
				if prof.n["DEQUANTIZE"] != 2 || prof.took["DEQUANTIZE"] != 0 {
					t.Errorf("interpreter %d: the profile has DEQUANTIZE %d times taking %dns over 2 runs, want twice at 0",
						i, prof.n["DEQUANTIZE"], prof.took["DEQUANTIZE"])
				}
				r := it.Report()
				if !r.CPUNodes[0].Folded || r.CPUNodes[1].Folded {
					t.Errorf("interpreter %d: report marks folded %v, %v; want node 0 only",
						i, r.CPUNodes[0].Folded, r.CPUNodes[1].Folded)
				}
				if !strings.Contains(r.Text(), "folded") {
					t.Errorf("interpreter %d: the plan's text does not say node 0 is folded:\n%s", i, r.Text())
				}
			}
			if data[0] != data[1] {
				t.Error("two interpreters of one model hold the dequantized weights in different memory, want one shared copy")
			}
		})
	}
}

// TestDequantizeOutputNotFolded checks that a DEQUANTIZE whose output is a
// graph output stays a node that runs (the caller owns its outputs'
// memory) and still gives the right values.
func TestDequantizeOutputNotFolded(t *testing.T) {
	m, err := model.New(dequantizeModel(tensor.Float16, true))
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
	if it.Report().CPUNodes[0].Folded {
		t.Error("a DEQUANTIZE whose output is a graph output was folded")
	}
	runDequantizeModel(t, it)
	if got, w := it.Output(1).Float32s(), dequantized[tensor.Float16]; !slices.Equal(got, w) {
		t.Errorf("graph output of DEQUANTIZE = %v, want %v", got, w)
	}
}
