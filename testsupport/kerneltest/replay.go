package kerneltest

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// This file replays the testdata/gen/<family>/<family>_tflite29.json.gz
// files: one-operator models with pseudo-random inputs and what the real
// TensorFlow Lite 2.9 library (tfjs-tflite-node@0.0.2, x86-64, builtin
// kernels, 1 thread) returned for them, the output bytes or the stage at
// which it failed. The files are made by the family's
// testdata/gen/<family>/<family>_tflite29_gen.py with the shared runner
// testdata/gen/tflite29_run.c.

// replayTensor is one input or output of a replay case. The conv file gives
// quantization as lists (Scales, ZPs, Axis); the pool file as one Scale
// (read as a float64, then rounded to float32) and ZP.
type replayTensor struct {
	Type   string    `json:"type"`
	Shape  []int     `json:"shape"`
	Const  bool      `json:"const"`
	Scales []float32 `json:"scales"`
	ZPs    []int64   `json:"zps"`
	Axis   int       `json:"axis"`
	Scale  *float64  `json:"scale"`
	ZP     int64     `json:"zp"`
	Data   string    `json:"data"` // absent for the conv file's constants: they are in the model's buffers
}

type ReplayCase struct {
	Name    string          `json:"name"`
	Model   string          `json:"model"`
	Inputs  []*replayTensor `json:"inputs"`
	Outputs []*replayTensor `json:"outputs"`
	Error   string          `json:"error"` // "prepare", "eval", or "load" (TFLite crashed, or an unregistered version)
}

// replayType returns the DType named s, or -1.
func replayType(s string) tensor.DType {
	if t, ok := tensor.TypeNamed(s); ok {
		return t
	}
	return -1
}

// tensor returns the input rt describes, with its data when the case holds
// it.
func (rt *replayTensor) tensor() (*tensor.Tensor, error) {
	t := tensor.NewTensor(replayType(rt.Type), rt.Shape...)
	d, err := base64.StdEncoding.DecodeString(rt.Data)
	if err != nil {
		return nil, err
	}
	copy(t.Data, d)
	t.Const = rt.Const
	if t.Type == tensor.String {
		// A string buffer, sized by its contents; the interpreter keeps
		// non-constant ones Dynamic.
		t.Data, t.Dynamic = d, !rt.Const
	}
	switch {
	case len(rt.Scales) > 0:
		t.Quant = &tensor.Quantization{Scale: rt.Scales, ZeroPoint: rt.ZPs, Axis: rt.Axis}
	case rt.Scale != nil:
		t.Quant = &tensor.Quantization{Scale: []float32{float32(*rt.Scale)}, ZeroPoint: []int64{rt.ZP}}
	}
	return t, nil
}

// replayLoad reads the replay cases of testdata/gen/<file>.
func replayLoad(t *testing.T, file string) []ReplayCase {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "testdata", "gen", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cases []ReplayCase
	if err := json.NewDecoder(zr).Decode(&cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// replayRun builds the case's node from its model and inputs and runs it
// through the registration reg has for its op, as the interpreter would.
func replayRun(c *ReplayCase, reg *kernel.Registry, threads int) (*kernel.Node, error) {
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
	r, ok := reg.Lookup(code, string(oc.CustomCode()))
	if !ok {
		return nil, kernel.Unsupported("no kernel for %s %s", kernel.OpName(code), oc.CustomCode())
	}
	if !r.Versions.Contains(int(oc.Version())) {
		return nil, kernel.Unsupported("%s version %d", r.Name(), oc.Version())
	}
	node := &kernel.Node{Threads: threads}
	for i, rt := range c.Inputs {
		if rt == nil {
			node.Inputs = append(node.Inputs, nil)
			continue
		}
		tt, err := rt.tensor()
		if err != nil {
			return nil, err
		}
		if rt.Const && rt.Data == "" {
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
		ot := &tensor.Tensor{Type: tensor.DType(st.Type())}
		ot.Dynamic = ot.Type == tensor.String // as the interpreter makes them
		var q schema.QuantizationParameters
		if st.Quantization(&q) != nil && q.ScaleLength() > 0 {
			ot.Quant = &tensor.Quantization{Scale: []float32{q.Scale(0)}, ZeroPoint: []int64{q.ZeroPoint(0)}}
		}
		node.Outputs = append(node.Outputs, ot)
	}
	k, err := r.New(kernel.OpInfo{Version: int(oc.Version()), Operator: &op})
	if err != nil {
		return node, err
	}
	if err := k.Prepare(node); err != nil {
		return node, err
	}
	for _, o := range node.Outputs {
		if !o.Dynamic {
			o.Data = tensor.NewTensor(o.Type, o.Shape...).Data
		}
	}
	return node, k.Eval(node)
}

// ReplaySpec says how to replay one family's file.
type ReplaySpec struct {
	File     string                // under testdata/gen
	Ops      []kernel.Registration // the family's registrations
	MinCases int                   // fewer cases means a broken file
	// Case i runs with 1 + i%threadCycle threads: the count must not matter.
	ThreadCycle int
	// Outputs is how many outputs to compare (0: all).
	Outputs int
	// Tolerated reports the failing cases in which the family knowingly
	// succeeds; nil: none.
	Tolerated func(*ReplayCase) bool
}

// ReplayTFLite29 runs every case of the spec's file and compares the results
// with TFLite's: the same failures, the same output shapes, the same bytes
// for non-float outputs and float outputs (FLOAT32, FLOAT64 and the parts
// of COMPLEX64 and COMPLEX128) within 1e-5 (relative above 1).
func ReplayTFLite29(t *testing.T, spec ReplaySpec) {
	reg := kernel.NewRegistry(spec.Ops...)
	cases := replayLoad(t, spec.File)
	if len(cases) < spec.MinCases {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for i := range cases {
		c := &cases[i]
		node, err := replayRun(c, reg, 1+i%spec.ThreadCycle)
		if c.Error != "" {
			if err == nil && (spec.Tolerated == nil || !spec.Tolerated(c)) {
				t.Errorf("%s: TFLite fails in %s, we succeed", c.Name, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		outputs := c.Outputs
		if spec.Outputs > 0 {
			outputs = outputs[:spec.Outputs]
		}
		for j, want := range outputs {
			replayCompare(t, c.Name, j, node.Outputs[j], want)
		}
	}
}

// replayCompare compares output j of case name with TFLite's.
func replayCompare(t *testing.T, name string, j int, got *tensor.Tensor, want *replayTensor) {
	t.Helper()
	if !slices.Equal(got.Shape, want.Shape) {
		t.Errorf("%s: output %d shape %v, want %v", name, j, got.Shape, want.Shape)
		return
	}
	wd, _ := base64.StdEncoding.DecodeString(want.Data)
	var w, g []float64
	switch got.Type {
	case tensor.Float32, tensor.Complex64, tensor.Float64, tensor.Complex128:
		w, g = floats(wd, got.Type), floats(got.Data, got.Type)
	default:
		if string(wd) != string(got.Data) {
			diff := 0
			for k := range wd {
				if wd[k] != got.Data[k] {
					diff++
				}
			}
			t.Errorf("%s: output %d: %d of %d bytes differ", name, j, diff, len(wd))
			if len(wd) <= 256 {
				t.Logf("got  %v\nwant %v", got.Data, wd)
			}
		}
		return
	}
	for k := range w {
		wk, gk := w[k], g[k]
		if math.IsNaN(wk) || math.IsNaN(gk) {
			if math.IsNaN(wk) != math.IsNaN(gk) {
				t.Errorf("%s: output %d: out[%d] = %v, want %v", name, j, k, gk, wk)
				return
			}
			continue
		}
		if wk != gk && math.Abs(wk-gk) > 1e-5*math.Max(1, math.Abs(wk)) {
			t.Errorf("%s: output %d: out[%d] = %v, want %v", name, j, k, gk, wk)
			return
		}
	}
}

// floats reads b's little-endian FLOAT32 or FLOAT64 values (complex ones
// as their parts) as float64s. It reads byte by byte: a decoded case's
// bytes may sit at any address, and 32-bit ARM faults on a float load that
// is not aligned.
func floats(b []byte, t tensor.DType) []float64 {
	if t == tensor.Float64 || t == tensor.Complex128 {
		out := make([]float64, len(b)/8)
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		return out
	}
	out := make([]float64, len(b)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return out
}

// repoRoot is the module's root folder, failing the test when none is
// found.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := shared.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}
