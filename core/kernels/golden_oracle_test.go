//go:build tfliteoracle

package kernels

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/core/kernels/quantize"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
	"github.com/delego/delego/testsupport/shared"
)

// oracleModelTensor makes a kernel tensor from a model tensor's metadata.
func oracleModelTensor(sg *schema.SubGraph, i int) *tensor.Tensor {
	var mt schema.Tensor
	sg.Tensors(&mt, i)
	shape := make([]int, mt.ShapeLength())
	for j := range shape {
		shape[j] = int(mt.Shape(j))
	}
	t := tensor.NewTensor(tensor.DType(mt.Type()), shape...)
	if q := mt.Quantization(nil); q != nil && q.ScaleLength() > 0 {
		t.Quant = &tensor.Quantization{Axis: int(q.QuantizedDimension())}
		for j := range q.ScaleLength() {
			t.Quant.Scale = append(t.Quant.Scale, q.Scale(j))
			t.Quant.ZeroPoint = append(t.Quant.ZeroPoint, q.ZeroPoint(j))
		}
	}
	return t
}

// TestOracleGolden checks the activation-family operators of the golden
// models: TFLite computes the operator's input (the model's output is
// redirected to it), our kernels compute the rest, and the result must be the
// golden output.
func TestOracleGolden(t *testing.T) {
	goldens := []struct{ model, input, output string }{
		{"mobilenet_v1_0.25_128_quant", "mobilenet_v1_0.25_128_quant__cat_128", ""},
		{"mobilenet_v1_0.25_128_quant", "mobilenet_v1_0.25_128_quant__seed1", ""},
		{"mobilenet_v2_1.0_224_quant", "mobilenet_v2_1.0_224_quant__cat_224", ""},
		{"tf2_mobilenet_v2_1.0_224_ptq", "tf2_mobilenet_v2_1.0_224_ptq__cat_224", ""},
		{"keras_lstm_mnist_ptq", "keras_lstm_mnist_ptq__digit7", ""},
		{"keras_lstm_mnist_ptq", "keras_lstm_mnist_ptq__seed1", ""},
		{"mobilenet_v1_0.25_128_float", "mobilenet_v1_0.25_128_float__cat_128_f32", ""},
		{"mobilenet_v2_1.0_224_float", "mobilenet_v2_1.0_224_float__cat_224_f32", ""},
	}
	kerneltest.OracleSkip(t)
	dir := t.TempDir()
	for _, g := range goldens {
		buf, err := os.ReadFile(shared.Model(t, g.model+".tflite"))
		if err != nil {
			t.Fatal(err)
		}
		input := shared.ReadGolden(t, g.input+".input.raw")
		golden := shared.ReadGolden(t, g.input+".output.raw")
		m := schema.GetRootAsModel(buf, 0)
		var sg schema.SubGraph
		m.Subgraphs(&sg, 0)
		// Operators from the first activation-family op on.
		type step struct {
			op   *schema.Operator
			code schema.BuiltinOperator
			ver  int
		}
		var steps []step
		for i := range sg.OperatorsLength() {
			op := new(schema.Operator)
			sg.Operators(op, i)
			var oc schema.OperatorCode
			m.OperatorCodes(&oc, int(op.OpcodeIndex()))
			code := oc.BuiltinCode()
			if dc := schema.BuiltinOperator(oc.DeprecatedBuiltinCode()); dc > code {
				code = dc
			}
			if code == schema.BuiltinOperatorSOFTMAX || len(steps) > 0 {
				steps = append(steps, step{op, code, int(oc.Version())})
			}
		}
		if len(steps) == 0 {
			t.Fatalf("%s: no SOFTMAX", g.model)
		}
		oracleFirstQuantize(t, dir, g.input, buf, input)
		// Redirect the model's output to the softmax input.
		mod := append([]byte(nil), buf...)
		mm := schema.GetRootAsModel(mod, 0)
		var msg schema.SubGraph
		mm.Subgraphs(&msg, 0)
		softIn := steps[0].op.Inputs(0)
		msg.MutateOutputs(0, softIn)
		path := filepath.Join(dir, "m.tflite")
		os.WriteFile(path, mod, 0o644)
		os.WriteFile(filepath.Join(dir, "in.raw"), input, 0o644)
		outPath := filepath.Join(dir, "out.raw")
		if out, err := exec.Command(kerneltest.OracleBench(t), path, filepath.Join(dir, "in.raw"), "1", "0", "1", outPath).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", g.input, err, out)
		}
		cur := oracleModelTensor(&sg, int(softIn))
		cur.Data, _ = os.ReadFile(outPath)
		for _, s := range steps {
			reg, _ := Builtins().Lookup(s.code, "")
			k, err := reg.New(kernel.OpInfo{Version: s.ver, Operator: s.op})
			if err != nil {
				t.Fatal(err)
			}
			out := oracleModelTensor(&sg, int(s.op.Outputs(0)))
			n := &kernel.Node{Inputs: []*tensor.Tensor{cur}, Outputs: []*tensor.Tensor{out}, Threads: 1}
			if err := k.Prepare(n); err != nil {
				t.Fatalf("%s: %v", g.input, err)
			}
			out.SetShape(out.Shape)
			if err := k.Eval(n); err != nil {
				t.Fatal(err)
			}
			cur = out
		}
		if cur.Type == tensor.Float32 {
			maxDiff := 0.0
			got, want := cur.Float32s(), tensor.View[float32](golden)
			for i := range want {
				maxDiff = max(maxDiff, math.Abs(float64(got[i]-want[i])))
			}
			t.Logf("%s: %d steps from SOFTMAX, float max abs diff %g", g.input, len(steps), maxDiff)
			if maxDiff > 1e-6 {
				t.Errorf("%s: max diff %g", g.input, maxDiff)
			}
			continue
		}
		if !bytes.Equal(cur.Data, golden) {
			t.Errorf("%s: %d steps from SOFTMAX differ from the golden output", g.input, len(steps))
		} else {
			t.Logf("%s: %d steps from SOFTMAX match the golden output byte for byte", g.input, len(steps))
		}
	}
}

// oracleFirstQuantize checks a model's leading QUANTIZE on the golden input
// against TFLite's result for it.
func oracleFirstQuantize(t *testing.T, dir, name string, buf, input []byte) {
	m := schema.GetRootAsModel(buf, 0)
	var sg schema.SubGraph
	m.Subgraphs(&sg, 0)
	op := new(schema.Operator)
	sg.Operators(op, 0)
	var oc schema.OperatorCode
	m.OperatorCodes(&oc, int(op.OpcodeIndex()))
	if oc.DeprecatedBuiltinCode() != int8(schema.BuiltinOperatorQUANTIZE) {
		return
	}
	mod := append([]byte(nil), buf...)
	mm := schema.GetRootAsModel(mod, 0)
	var msg schema.SubGraph
	mm.Subgraphs(&msg, 0)
	msg.MutateOutputs(0, op.Outputs(0))
	path := filepath.Join(dir, "q.tflite")
	os.WriteFile(path, mod, 0o644)
	os.WriteFile(filepath.Join(dir, "in.raw"), input, 0o644)
	outPath := filepath.Join(dir, "qout.raw")
	if out, err := exec.Command(kerneltest.OracleBench(t), path, filepath.Join(dir, "in.raw"), "1", "0", "1", outPath).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	want, _ := os.ReadFile(outPath)
	in := oracleModelTensor(&sg, int(op.Inputs(0)))
	copy(in.Data, input)
	out := oracleModelTensor(&sg, int(op.Outputs(0)))
	k, _ := quantize.NewQuantizeOp(kernel.OpInfo{Operator: op})
	n := &kernel.Node{Inputs: []*tensor.Tensor{in}, Outputs: []*tensor.Tensor{out}, Threads: 1}
	if err := k.Prepare(n); err != nil {
		t.Fatal(err)
	}
	if err := k.Eval(n); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Data, want) {
		t.Errorf("%s: leading QUANTIZE differs from TFLite", name)
	} else {
		t.Logf("%s: leading QUANTIZE %s->%s matches TFLite", name, in.Type, out.Type)
	}
}
