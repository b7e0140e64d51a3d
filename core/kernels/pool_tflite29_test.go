package kernels

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/delego/delego/core/schema"
)

// testdata/gen/pool/pool_tflite29.json.gz holds one-operator models of this family
// with pseudo-random inputs and what the real TensorFlow Lite 2.9 library
// (tfjs-tflite-node@0.0.2, x86-64, builtin kernels, 1 thread) returned for
// them: the output bytes, or the stage at which it failed. It is made by
// testdata/gen/pool/pool_tflite29_gen.py with the runner testdata/gen/pool/pool_tflite29_run.c.

type poolGoldenTensor struct {
	Type  string   `json:"type"`
	Shape []int    `json:"shape"`
	Const bool     `json:"const"`
	Scale *float64 `json:"scale"`
	ZP    int64    `json:"zp"`
	Data  string   `json:"data"`
}

type poolGoldenCase struct {
	Name    string              `json:"name"`
	Model   string              `json:"model"`
	Inputs  []*poolGoldenTensor `json:"inputs"`
	Outputs []*poolGoldenTensor `json:"outputs"`
	Error   string              `json:"error"` // "prepare" or "eval"; "load" for an unregistered version
}

func poolGoldenType(s string) DType {
	for i, n := range dtypeNames {
		if n == s {
			return DType(i)
		}
	}
	return -1
}

func poolLoadGolden(t *testing.T) []poolGoldenCase {
	t.Helper()
	f, err := os.Open("../../testdata/gen/pool/pool_tflite29.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cases []poolGoldenCase
	if err := json.NewDecoder(zr).Decode(&cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// poolRunGolden builds the case's node from its model and inputs and runs it
// through this family's registration, as the interpreter would.
func poolRunGolden(c *poolGoldenCase, reg *Registry, threads int) (*Node, error) {
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
	if !ok {
		return nil, Unsupported("no kernel for %s", OpName(code))
	}
	if !r.Versions.Contains(int(oc.Version())) {
		return nil, Unsupported("%s version %d", OpName(code), oc.Version())
	}
	node := &Node{Threads: threads}
	for _, gt := range c.Inputs {
		if gt == nil {
			node.Inputs = append(node.Inputs, nil)
			continue
		}
		tt := NewTensor(poolGoldenType(gt.Type), gt.Shape...)
		d, err := base64.StdEncoding.DecodeString(gt.Data)
		if err != nil {
			return nil, err
		}
		copy(tt.Data, d)
		tt.Const = gt.Const
		if gt.Scale != nil {
			poolQ(tt, float32(*gt.Scale), gt.ZP)
		}
		node.Inputs = append(node.Inputs, tt)
	}
	for i := range op.OutputsLength() {
		var st schema.Tensor
		sg.Tensors(&st, int(op.Outputs(i)))
		ot := &Tensor{Type: DType(st.Type())}
		var q schema.QuantizationParameters
		if st.Quantization(&q) != nil && q.ScaleLength() > 0 {
			poolQ(ot, q.Scale(0), q.ZeroPoint(0))
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
		if !o.Dynamic {
			o.Data = NewTensor(o.Type, o.Shape...).Data
		}
	}
	return node, k.Eval(node)
}

func TestPoolAgainstTFLite29(t *testing.T) {
	reg := NewRegistry()
	for _, r := range poolOps() {
		reg.Register(r)
	}
	cases := poolLoadGolden(t)
	if len(cases) < 900 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for i := range cases {
		c := &cases[i]
		threads := 1 + i%3 // the thread count must not matter
		node, err := poolRunGolden(c, reg, threads)
		if c.Error != "" {
			if err == nil {
				t.Errorf("%s: TFLite fails in %s, we succeed", c.Name, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		for j, want := range c.Outputs {
			got := node.Outputs[j]
			if !slices.Equal(got.Shape, want.Shape) {
				t.Errorf("%s: output shape %v, want %v", c.Name, got.Shape, want.Shape)
				continue
			}
			wd, _ := base64.StdEncoding.DecodeString(want.Data)
			if got.Type != Float32 {
				if string(wd) != string(got.Data) {
					t.Errorf("%s: output bytes differ:\ngot  %v\nwant %v", c.Name, got.Data, wd)
				}
				continue
			}
			w, g := view[float32](wd), got.Float32s()
			for k := range w {
				wk, gk := float64(w[k]), float64(g[k])
				if math.IsNaN(wk) && math.IsNaN(gk) {
					continue
				}
				if math.Abs(wk-gk) > 1e-5*math.Max(1, math.Abs(wk)) {
					t.Errorf("%s: out[%d] = %v, want %v", c.Name, k, gk, wk)
					break
				}
			}
		}
	}
}
