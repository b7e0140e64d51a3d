package kernels

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core/schema"
)

// testdata/gen/conv/conv_tflite29.json.gz holds one-operator CONV_2D,
// DEPTHWISE_CONV_2D and FULLY_CONNECTED models with pseudo-random inputs and
// what the real TensorFlow Lite 2.9 library (tfjs-tflite-node@0.0.2, x86-64,
// builtin kernels, 1 thread) returned for them: the output bytes, or the
// stage at which it failed. It is made by testdata/gen/conv/conv_tflite29_gen.py with
// the runner testdata/gen/conv/conv_tflite29_run.c.

type convGoldenTensor struct {
	Type   string    `json:"type"`
	Shape  []int     `json:"shape"`
	Const  bool      `json:"const"`
	Scales []float32 `json:"scales"`
	ZPs    []int64   `json:"zps"`
	Axis   int       `json:"axis"`
	Data   string    `json:"data"`
}

type convGoldenCase struct {
	Name    string              `json:"name"`
	Model   string              `json:"model"`
	Inputs  []*convGoldenTensor `json:"inputs"`
	Outputs []*convGoldenTensor `json:"outputs"`
	Error   string              `json:"error"` // "prepare", "eval", or "load" (TFLite crashed)
}

func (gt *convGoldenTensor) tensor() *Tensor {
	typ := DType(-1)
	for i, n := range dtypeNames {
		if n == gt.Type {
			typ = DType(i)
		}
	}
	t := NewTensor(typ, gt.Shape...)
	if gt.Data != "" {
		d, _ := base64.StdEncoding.DecodeString(gt.Data)
		copy(t.Data, d)
	}
	t.Const = gt.Const
	if len(gt.Scales) > 0 {
		t.Quant = &Quantization{Scale: gt.Scales, ZeroPoint: gt.ZPs, Axis: gt.Axis}
	}
	return t
}

func convLoadGolden(t *testing.T) []convGoldenCase {
	t.Helper()
	f, err := os.Open("../../testdata/gen/conv/conv_tflite29.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cases []convGoldenCase
	if err := json.NewDecoder(zr).Decode(&cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// convRunGolden builds the case's node and runs it through this family's
// registration, as the interpreter would.
func convRunGolden(c *convGoldenCase, reg *Registry, threads int) (*Node, error) {
	mb, err := base64.StdEncoding.DecodeString(c.Model)
	if err != nil {
		return nil, err
	}
	model := schema.GetRootAsModel(mb, 0)
	var sg schema.SubGraph
	var op schema.Operator
	var oc schema.OperatorCode
	model.Subgraphs(&sg, 0)
	sg.Operators(&op, 0)
	model.OperatorCodes(&oc, 0)
	code := max(oc.BuiltinCode(), schema.BuiltinOperator(oc.DeprecatedBuiltinCode()))
	r, ok := reg.Lookup(code, "")
	if !ok || !r.Versions.Contains(int(oc.Version())) {
		return nil, Unsupported("%s version %d", OpName(code), oc.Version())
	}
	node := &Node{Threads: threads}
	for i, gt := range c.Inputs {
		if gt == nil {
			node.Inputs = append(node.Inputs, nil)
			continue
		}
		tt := gt.tensor()
		if gt.Const {
			// Constant data lives in the model's buffers.
			var st schema.Tensor
			var buf schema.Buffer
			sg.Tensors(&st, int(op.Inputs(i)))
			model.Buffers(&buf, int(st.Buffer()))
			copy(tt.Data, buf.DataBytes())
		}
		node.Inputs = append(node.Inputs, tt)
	}
	for i := range op.OutputsLength() {
		var st schema.Tensor
		sg.Tensors(&st, int(op.Outputs(i)))
		ot := &Tensor{Type: DType(st.Type())}
		var q schema.QuantizationParameters
		if st.Quantization(&q) != nil && q.ScaleLength() > 0 {
			ot.Quant = &Quantization{Scale: []float32{q.Scale(0)}, ZeroPoint: []int64{q.ZeroPoint(0)}}
		}
		node.Outputs = append(node.Outputs, ot)
	}
	k, err := r.New(OpInfo{Version: int(oc.Version()), Operator: &op})
	if err != nil {
		return node, err
	}
	if err := k.Prepare(node); err != nil {
		return node, err
	}
	for _, o := range node.Outputs {
		o.Data = NewTensor(o.Type, o.Shape...).Data
	}
	return node, k.Eval(node)
}

// convGoldenTolerated lists the cases where this family knowingly differs
// from TFLite 2.9: it accepts a missing bias (TFLite 2.9's CONV_2D requires
// one and its DEPTHWISE_CONV_2D crashes on an absent optional bias).
func convGoldenTolerated(c *convGoldenCase) bool {
	noBias := len(c.Inputs) < 3 || c.Inputs[2] == nil
	return c.Error != "" && noBias && !strings.HasPrefix(c.Name, "fc_")
}

func TestConvAgainstTFLite29(t *testing.T) {
	reg := NewRegistry()
	for _, r := range convOps() {
		reg.Register(r)
	}
	cases := convLoadGolden(t)
	if len(cases) < 600 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for i := range cases {
		c := &cases[i]
		threads := 1 + i%4 // the thread count must not matter
		node, err := convRunGolden(c, reg, threads)
		if c.Error != "" {
			if err == nil && !convGoldenTolerated(c) {
				t.Errorf("%s: TFLite fails (%s), we succeed", c.Name, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		// The shuffled FULLY_CONNECTED's second output is a workspace.
		want := c.Outputs[0]
		got := node.Outputs[0]
		if !slices.Equal(got.Shape, want.Shape) {
			t.Errorf("%s: output shape %v, want %v", c.Name, got.Shape, want.Shape)
			continue
		}
		wd, _ := base64.StdEncoding.DecodeString(want.Data)
		if got.Type != Float32 {
			if string(wd) != string(got.Data) {
				diff := 0
				for k := range wd {
					if wd[k] != got.Data[k] {
						diff++
					}
				}
				t.Errorf("%s: %d of %d output bytes differ", c.Name, diff, len(wd))
			}
			continue
		}
		w, g := view[float32](wd), got.Float32s()
		for k := range w {
			if d := math.Abs(float64(w[k]) - float64(g[k])); d > 1e-5*math.Max(1, math.Abs(float64(w[k]))) {
				t.Errorf("%s: out[%d] = %v, want %v", c.Name, k, g[k], w[k])
				break
			}
		}
	}
}
