package lstm

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// This file checks UNIDIRECTIONAL_SEQUENCE_LSTM against outputs of the
// TensorFlow Lite 2.9.0 C library (libtensorflowlite_c.so of the npm package
// tfjs-tflite-node@0.0.2, the build that made shared/golden): the
// testdata/gen/lstm/lstm_*.tflite models hold one LSTM operator each (written as
// flatbuffer JSON and compiled with flatc), lstm_*.input.raw is the input
// and lstm_*.out1.raw / out2.raw the outputs of a first and a second Invoke
// on one interpreter (the state persists between them).

// lstmModelNode builds the Node of operator opIndex of subgraph 0 from a
// .tflite file: constant tensors get their buffer's data, the others zeroed
// memory; variable tensors are reset as TFLite does (int8 to their zero
// point, others to zero bytes).
func lstmModelNode(t *testing.T, model []byte, opIndex int) (*kernel.Node, kernel.OpInfo, schema.BuiltinOperator) {
	t.Helper()
	m := schema.GetRootAsModel(model, 0)
	var sg schema.SubGraph
	if !m.Subgraphs(&sg, 0) {
		t.Fatal("no subgraph")
	}
	var op schema.Operator
	if !sg.Operators(&op, opIndex) {
		t.Fatalf("no operator %d", opIndex)
	}
	var oc schema.OperatorCode
	m.OperatorCodes(&oc, int(op.OpcodeIndex()))
	code := oc.BuiltinCode()
	if dep := schema.BuiltinOperator(oc.DeprecatedBuiltinCode()); dep > code {
		code = dep
	}
	tensors := map[int32]*tensor.Tensor{}
	get := func(i int32) *tensor.Tensor {
		if i < 0 {
			return nil
		}
		if tt, ok := tensors[i]; ok {
			return tt
		}
		var st schema.Tensor
		if !sg.Tensors(&st, int(i)) {
			t.Fatalf("no tensor %d", i)
		}
		shape := make([]int, st.ShapeLength())
		for j := range shape {
			shape[j] = int(st.Shape(j))
		}
		tt := tensor.NewTensor(tensor.DType(st.Type()), shape...)
		tt.Name = string(st.Name())
		tt.Variable = st.IsVariable()
		if q := st.Quantization(nil); q != nil && q.ScaleLength() > 0 {
			tt.Quant = &tensor.Quantization{Axis: int(q.QuantizedDimension())}
			for j := range q.ScaleLength() {
				tt.Quant.Scale = append(tt.Quant.Scale, q.Scale(j))
			}
			for j := range q.ZeroPointLength() {
				tt.Quant.ZeroPoint = append(tt.Quant.ZeroPoint, q.ZeroPoint(j))
			}
		}
		var buf schema.Buffer
		if m.Buffers(&buf, int(st.Buffer())) && buf.DataLength() > 0 {
			if buf.DataLength() != len(tt.Data) {
				t.Fatalf("tensor %d: %d bytes of data for shape %v", i, buf.DataLength(), shape)
			}
			copy(tt.Data, buf.DataBytes())
			tt.Const = true
		}
		if tt.Variable && tt.Type == tensor.Int8 {
			for j := range tt.Data {
				tt.Data[j] = byte(tt.ZeroPoint())
			}
		}
		tensors[i] = tt
		return tt
	}
	n := &kernel.Node{Threads: 1}
	for j := range op.InputsLength() {
		n.Inputs = append(n.Inputs, get(op.Inputs(j)))
	}
	for j := range op.OutputsLength() {
		n.Outputs = append(n.Outputs, get(op.Outputs(j)))
	}
	for j := range op.IntermediatesLength() {
		n.Intermediates = append(n.Intermediates, get(op.Intermediates(j)))
	}
	return n, kernel.OpInfo{Version: int(oc.Version()), Operator: &op}, code
}

// lstmRunModel prepares and runs the node twice on input, returning the
// output bytes of each Eval.
func lstmRunModel(t *testing.T, n *kernel.Node, info kernel.OpInfo, input []byte) (out1, out2 []byte) {
	t.Helper()
	reg := Ops()[0]
	if !reg.Versions.Contains(info.Version) {
		t.Fatalf("version %d not registered", info.Version)
	}
	k, err := reg.New(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Prepare(n); err != nil {
		t.Fatal(err)
	}
	out := n.Outputs[0]
	out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
	in := n.Inputs[0]
	if len(input) != len(in.Data) {
		t.Fatalf("input has %d bytes, want %d", len(input), len(in.Data))
	}
	copy(in.Data, input)
	if err := k.Eval(n); err != nil {
		t.Fatal(err)
	}
	out1 = bytes.Clone(out.Data)
	if err := k.Eval(n); err != nil {
		t.Fatal(err)
	}
	return out1, bytes.Clone(out.Data)
}

func lstmReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lstmCompare checks got against want: bytes exactly for integer outputs,
// float32 values within tol.
func lstmCompare(t *testing.T, what string, typ tensor.DType, got, want []byte, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	if typ != tensor.Float32 {
		diffs := 0
		for i := range got {
			if got[i] != want[i] {
				if diffs < 10 {
					t.Errorf("%s: byte %d = %d, want %d", what, i, int8(got[i]), int8(want[i]))
				}
				diffs++
			}
		}
		if diffs > 0 {
			t.Errorf("%s: %d of %d bytes differ", what, diffs, len(got))
		}
		return
	}
	maxDiff := 0.0
	for i := 0; i < len(got); i += 4 {
		g := float64(math.Float32frombits(binary.LittleEndian.Uint32(got[i:])))
		w := float64(math.Float32frombits(binary.LittleEndian.Uint32(want[i:])))
		maxDiff = max(maxDiff, math.Abs(g-w))
		if math.IsNaN(g) || math.Abs(g-w) > tol {
			t.Errorf("%s: value %d = %g, want %g", what, i/4, g, w)
			return
		}
	}
	t.Logf("%s: max abs diff %.3g", what, maxDiff)
}

func TestLSTMMatchesTFLite(t *testing.T) {
	cases, err := filepath.Glob("../../../testdata/gen/lstm/lstm_*.tflite")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no test models: %v", err)
	}
	for _, path := range cases {
		name := filepath.Base(path[:len(path)-len(".tflite")])
		t.Run(name, func(t *testing.T) {
			n, info, code := lstmModelNode(t, lstmReadFile(t, path), 0)
			if code != schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM {
				t.Fatalf("operator %s", kernel.OpName(code))
			}
			base := path[:len(path)-len(".tflite")]
			out1, out2 := lstmRunModel(t, n, info, lstmReadFile(t, base+".input.raw"))
			typ := n.Outputs[0].Type
			lstmCompare(t, "invoke 1", typ, out1, lstmReadFile(t, base+".out1.raw"), 2e-6)
			lstmCompare(t, "invoke 2", typ, out2, lstmReadFile(t, base+".out2.raw"), 2e-6)
		})
	}
}

// TestLSTMKerasModel runs the LSTM of keras_lstm_mnist_ptq.tflite in
// isolation on the golden inputs. Its input is what the model's QUANTIZE
// makes of the uint8 image (same scale, zero point 0 -> -128: x - 128); the
// expected LSTM outputs (testdata/gen/lstm/lstm_keras_*.lstmout{1,2}.raw) come from
// TFLite 2.9 running the model with the LSTM's output made the model output.
func TestLSTMKerasModel(t *testing.T) {
	model := lstmReadFile(t, shared.Model(t, "keras_lstm_mnist_ptq.tflite"))
	for _, c := range []string{"digit7", "seed1"} {
		t.Run(c, func(t *testing.T) {
			raw := shared.ReadGolden(t, "keras_lstm_mnist_ptq__"+c+".input.raw")
			n, info, code := lstmModelNode(t, model, 1)
			if code != schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM {
				t.Fatalf("operator 1 is %s", kernel.OpName(code))
			}
			input := make([]byte, len(raw))
			for i, v := range raw {
				input[i] = byte(int8(int(v) - 128))
			}
			out1, out2 := lstmRunModel(t, n, info, input)
			lstmCompare(t, "invoke 1", tensor.Int8, out1, lstmReadFile(t, "../../../testdata/gen/lstm/lstm_keras_"+c+".lstmout1.raw"), 0)
			lstmCompare(t, "invoke 2", tensor.Int8, out2, lstmReadFile(t, "../../../testdata/gen/lstm/lstm_keras_"+c+".lstmout2.raw"), 0)
		})
	}
}
