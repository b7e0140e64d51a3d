//go:build tfliteoracle

package kerneltest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This test compares the activation family (and QUANTIZE/DEQUANTIZE) against
// a TensorFlow Lite 2.9 library on this machine: it writes one-operator
// models with flatc, runs them with the tflbench tool (TFLITE_BENCH, default
// .tflite-ref/bin/tflbench) and checks that our kernels give the same bytes.
// Run it with: go test -tags tfliteoracle -run Oracle ./core/kernels

type OracleTensor struct {
	Name  string
	Type  tensor.DType
	Shape []int
	Scale []float32
	ZP    []int64
	Axis  int
	Data  []byte // input data (or constant data when Const)
	Const bool
}

type OracleCase struct {
	Name    string
	Code    schema.BuiltinOperator
	Version int
	OptType string
	Options map[string]any
	Inputs  []*OracleTensor
	Output  *OracleTensor
	// FloatTol > 0 compares float32 outputs with this absolute tolerance.
	FloatTol float64

	tfliteErr string
}

func OracleBench(t *testing.T) string {
	if p := os.Getenv("TFLITE_BENCH"); p != "" {
		return p
	}
	return filepath.Join(repoRoot(t), ".tflite-ref", "bin", "tflbench") // made by scripts/bench-vs-tflite.sh
}

func F32json(v float32) json.Number {
	return json.Number(strconv.FormatFloat(float64(v), 'g', -1, 32))
}

func (c *OracleCase) modelJSON() ([]byte, []int) {
	tensors := []map[string]any{}
	buffers := []map[string]any{{}}
	var inputs, outputs []int
	var opIn []int
	add := func(t *OracleTensor) int {
		m := map[string]any{
			"name":  t.Name,
			"type":  t.Type.String(),
			"shape": t.Shape,
		}
		if t.Scale != nil {
			sc := []json.Number{}
			for _, s := range t.Scale {
				sc = append(sc, F32json(s))
			}
			m["quantization"] = map[string]any{"scale": sc, "zero_point": t.ZP, "quantized_dimension": t.Axis}
		}
		if t.Const {
			ints := make([]int, len(t.Data))
			for i, b := range t.Data {
				ints[i] = int(b)
			}
			buffers = append(buffers, map[string]any{"data": ints})
		} else {
			buffers = append(buffers, map[string]any{})
		}
		m["buffer"] = len(buffers) - 1
		tensors = append(tensors, m)
		return len(tensors) - 1
	}
	var liveIn []int
	for _, t := range c.Inputs {
		i := add(t)
		opIn = append(opIn, i)
		if !t.Const {
			inputs = append(inputs, i)
			liveIn = append(liveIn, i)
		}
	}
	o := add(c.Output)
	outputs = append(outputs, o)
	op := map[string]any{"opcode_index": 0, "inputs": opIn, "outputs": []int{o}}
	if c.OptType != "" {
		op["builtin_options_type"] = c.OptType
		op["builtin_options"] = c.Options
	}
	code := map[string]any{"builtin_code": schema.EnumNamesBuiltinOperator[c.Code], "version": c.Version}
	if c.Code < 127 {
		code["deprecated_builtin_code"] = int(c.Code)
	}
	model := map[string]any{
		"version":        3,
		"operator_codes": []any{code},
		"subgraphs": []any{map[string]any{
			"tensors": tensors, "inputs": inputs, "outputs": outputs, "operators": []any{op},
		}},
		"buffers": buffers,
	}
	b, err := json.MarshalIndent(model, "", " ")
	if err != nil {
		panic(err)
	}
	return b, liveIn
}

// runTFLite returns TFLite's output bytes and the operator table of the model.
func (c *OracleCase) runTFLite(t *testing.T, dir string) ([]byte, *schema.Operator) {
	js, _ := c.modelJSON()
	jsonPath := filepath.Join(dir, "model.json")
	if err := os.WriteFile(jsonPath, js, 0o644); err != nil {
		t.Fatal(err)
	}
	schemaPath := filepath.Join(repoRoot(t), "model", "schema", "schema.fbs")
	cmd := exec.Command("flatc", "-b", "-o", dir, schemaPath, jsonPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("flatc: %v\n%s", err, out)
	}
	modelPath := filepath.Join(dir, "model.tflite")
	var in bytes.Buffer
	for _, it := range c.Inputs {
		if !it.Const {
			in.Write(it.Data)
		}
	}
	inPath, outPath := filepath.Join(dir, "in.raw"), filepath.Join(dir, "out.raw")
	os.WriteFile(inPath, in.Bytes(), 0o644)
	os.Remove(outPath)
	cmd = exec.Command(OracleBench(t), modelPath, inPath, "1", "0", "1", outPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.tfliteErr = string(out)
		return nil, nil
	}
	got, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatalf("%s: no output: %v\n%s", c.Name, err, out)
	}
	buf, _ := os.ReadFile(modelPath)
	m := schema.GetRootAsModel(buf, 0)
	var sg schema.SubGraph
	m.Subgraphs(&sg, 0)
	op := new(schema.Operator)
	sg.Operators(op, 0)
	return got, op
}

func (c *OracleCase) runOurs(r *kernel.Registry, op *schema.Operator) ([]byte, error) {
	reg, ok := r.Lookup(c.Code, "")
	if !ok {
		return nil, fmt.Errorf("no kernel")
	}
	if !reg.Versions.Contains(c.Version) {
		return nil, fmt.Errorf("version %d not in %v", c.Version, reg.Versions)
	}
	k, err := reg.New(kernel.OpInfo{Version: c.Version, Operator: op})
	if err != nil {
		return nil, err
	}
	mk := func(ot *OracleTensor) *tensor.Tensor {
		t := tensor.NewTensor(ot.Type, ot.Shape...)
		t.Name = ot.Name
		if ot.Scale != nil {
			t.Quant = &tensor.Quantization{Scale: ot.Scale, ZeroPoint: ot.ZP, Axis: ot.Axis}
		}
		return t
	}
	n := &kernel.Node{Threads: 1}
	for _, it := range c.Inputs {
		t := mk(it)
		if it.Const {
			t.Const = true
			copy(t.Data, it.Data)
		}
		n.Inputs = append(n.Inputs, t)
	}
	out := mk(c.Output)
	out.Shape = nil
	n.Outputs = []*tensor.Tensor{out}
	if err := k.Prepare(n); err != nil {
		return nil, err
	}
	out.SetShape(out.Shape)
	for i, it := range c.Inputs {
		copy(n.Inputs[i].Data, it.Data)
	}
	if err := k.Eval(n); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// OracleSkip fails the test when the TFLite tool or flatc is missing: the
// tfliteoracle tag asks for this comparison, so it must not pass silently.
func OracleSkip(t *testing.T) {
	if _, err := os.Stat(OracleBench(t)); err != nil {
		t.Fatalf("no TFLite tool (run scripts/bench-vs-tflite.sh once, or set TFLITE_BENCH): %v", err)
	}
	if _, err := exec.LookPath("flatc"); err != nil {
		t.Fatal("no flatc (apt-get install flatbuffers-compiler)")
	}
}

func RunOracle(t *testing.T, regs []kernel.Registration, cases []*OracleCase) {
	reg := kernel.NewRegistry(regs...)
	OracleSkip(t)
	dir := t.TempDir()
	fails, compared, accepted, bothFail := 0, 0, 0, 0
	for _, c := range cases {
		want, op := c.runTFLite(t, dir)
		got, err := c.runOurs(reg, op)
		if want == nil {
			if err == nil {
				accepted++
				t.Logf("%s: TFLite fails, we accept: %s", c.Name, c.tfliteErr)
			} else if bothFail++; os.Getenv("ORACLE_VERBOSE") != "" {
				t.Logf("%s: both fail: ours %v; TFLite %s", c.Name, err, c.tfliteErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: TFLite runs, we fail: %v", c.Name, err)
			fails++
			continue
		}
		compared++
		if !oracleEqual(c, got, want) {
			fails++
			if fails < 30 {
				t.Errorf("%s: mismatch\n%s", c.Name, oracleDiff(c, got, want))
			}
		}
	}
	t.Logf("%d cases: %d compared, %d mismatches, %d both fail, %d only TFLite fails", len(cases), compared, fails, bothFail, accepted)
}

func oracleEqual(c *OracleCase, got, want []byte) bool {
	if len(got) != len(want) {
		return false
	}
	if c.FloatTol > 0 {
		for i := 0; i+4 <= len(got); i += 4 {
			a := math.Float32frombits(binary.LittleEndian.Uint32(got[i:]))
			b := math.Float32frombits(binary.LittleEndian.Uint32(want[i:]))
			if math.IsNaN(float64(a)) && math.IsNaN(float64(b)) {
				continue
			}
			if !(math.Abs(float64(a-b)) <= c.FloatTol) && a != b {
				return false
			}
		}
		return true
	}
	return bytes.Equal(got, want)
}

func oracleDiff(c *OracleCase, got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("len got %d want %d", len(got), len(want))
	}
	var b bytes.Buffer
	size := c.Output.Type.Size()
	shown := 0
	for i := 0; i < len(got); i += size {
		if bytes.Equal(got[i:i+size], want[i:i+size]) {
			continue
		}
		var gv, wv any
		switch c.Output.Type {
		case tensor.Uint8:
			gv, wv = got[i], want[i]
		case tensor.Int8:
			gv, wv = int8(got[i]), int8(want[i])
		case tensor.Int16:
			gv, wv = int16(binary.LittleEndian.Uint16(got[i:])), int16(binary.LittleEndian.Uint16(want[i:]))
		case tensor.Float32:
			gv, wv = math.Float32frombits(binary.LittleEndian.Uint32(got[i:])), math.Float32frombits(binary.LittleEndian.Uint32(want[i:]))
		}
		var iv any
		in := c.Inputs[0]
		j := i / size * in.Type.Size()
		switch in.Type {
		case tensor.Uint8:
			iv = in.Data[j]
		case tensor.Int8:
			iv = int8(in.Data[j])
		case tensor.Int16:
			iv = int16(binary.LittleEndian.Uint16(in.Data[j:]))
		case tensor.Float32:
			iv = math.Float32frombits(binary.LittleEndian.Uint32(in.Data[j:]))
		}
		fmt.Fprintf(&b, "  [%d] in %v: got %v want %v\n", i/size, iv, gv, wv)
		if shown++; shown > 8 {
			break
		}
	}
	return b.String()
}

// Input generators.

func AllBytes(t tensor.DType) []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func RandBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func RandInt16s(r *rand.Rand, n int, lo, hi int) []byte {
	b := make([]byte, 2*n)
	edges := []int{-32768, 32767, 0, 1, -1}
	for i := range n {
		v := lo + r.IntN(hi-lo+1)
		if i < len(edges) && edges[i] >= lo && edges[i] <= hi {
			v = edges[i]
		}
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(v)))
	}
	return b
}

func FloatBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func RandFloats(r *rand.Rand, n int, lo, hi float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float32()
	}
	return v
}

func RandScale(r *rand.Rand, lo, hi float64) float32 {
	return float32(math.Exp(math.Log(lo) + (math.Log(hi)-math.Log(lo))*r.Float64()))
}

func RandZP(r *rand.Rand, t tensor.DType) int64 {
	switch t {
	case tensor.Uint8:
		return int64(r.IntN(256))
	case tensor.Int8:
		return int64(r.IntN(256) - 128)
	}
	return 0
}

func Qt(name string, t tensor.DType, shape []int, scale float32, zp int64, data []byte) *OracleTensor {
	return &OracleTensor{Name: name, Type: t, Shape: shape, Scale: []float32{scale}, ZP: []int64{zp}, Data: data}
}

func Ft(name string, t tensor.DType, shape []int, data []byte) *OracleTensor {
	return &OracleTensor{Name: name, Type: t, Shape: shape, Data: data}
}
