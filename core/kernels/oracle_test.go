//go:build tfliteoracle

package kernels

// This test compares the activation family (and QUANTIZE/DEQUANTIZE) against
// a TensorFlow Lite 2.9 library on this machine: it writes one-operator
// models with flatc, runs them with the tflbench tool (TFLITE_BENCH, default
// .tflite-ref/bin/tflbench) and checks that our kernels give the same bytes.
// Run it with: go test -tags tfliteoracle -run Oracle ./core/kernels

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

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

type oracleTensor struct {
	Name  string
	Type  tensor.DType
	Shape []int
	Scale []float32
	ZP    []int64
	Axis  int
	Data  []byte // input data (or constant data when Const)
	Const bool
}

type oracleCase struct {
	Name    string
	Code    schema.BuiltinOperator
	Version int
	OptType string
	Options map[string]any
	Inputs  []*oracleTensor
	Output  *oracleTensor
	// FloatTol > 0 compares float32 outputs with this absolute tolerance.
	FloatTol float64

	tfliteErr string
}

func oracleBench() string {
	if p := os.Getenv("TFLITE_BENCH"); p != "" {
		return p
	}
	return "../../.tflite-ref/bin/tflbench" // made by scripts/bench-vs-tflite.sh
}

func f32json(v float32) json.Number {
	return json.Number(strconv.FormatFloat(float64(v), 'g', -1, 32))
}

func (c *oracleCase) modelJSON() ([]byte, []int) {
	tensors := []map[string]any{}
	buffers := []map[string]any{{}}
	var inputs, outputs []int
	var opIn []int
	add := func(t *oracleTensor) int {
		m := map[string]any{
			"name":  t.Name,
			"type":  t.Type.String(),
			"shape": t.Shape,
		}
		if t.Scale != nil {
			sc := []json.Number{}
			for _, s := range t.Scale {
				sc = append(sc, f32json(s))
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
func (c *oracleCase) runTFLite(t *testing.T, dir string) ([]byte, *schema.Operator) {
	js, _ := c.modelJSON()
	jsonPath := filepath.Join(dir, "model.json")
	if err := os.WriteFile(jsonPath, js, 0o644); err != nil {
		t.Fatal(err)
	}
	schemaPath, _ := filepath.Abs("../schema/schema.fbs")
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
	cmd = exec.Command(oracleBench(), modelPath, inPath, "1", "0", "1", outPath)
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

func (c *oracleCase) runOurs(op *schema.Operator) ([]byte, error) {
	reg, ok := Builtins().Lookup(c.Code, "")
	if !ok {
		return nil, fmt.Errorf("no kernel")
	}
	if !reg.Versions.Contains(c.Version) {
		return nil, fmt.Errorf("version %d not in %v", c.Version, reg.Versions)
	}
	k, err := reg.New(OpInfo{Version: c.Version, Operator: op})
	if err != nil {
		return nil, err
	}
	mk := func(ot *oracleTensor) *tensor.Tensor {
		t := tensor.NewTensor(ot.Type, ot.Shape...)
		t.Name = ot.Name
		if ot.Scale != nil {
			t.Quant = &tensor.Quantization{Scale: ot.Scale, ZeroPoint: ot.ZP, Axis: ot.Axis}
		}
		return t
	}
	n := &Node{Threads: 1}
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

// oracleSkip fails the test when the TFLite tool or flatc is missing: the
// tfliteoracle tag asks for this comparison, so it must not pass silently.
func oracleSkip(t *testing.T) {
	if _, err := os.Stat(oracleBench()); err != nil {
		t.Fatalf("no TFLite tool (run scripts/bench-vs-tflite.sh once, or set TFLITE_BENCH): %v", err)
	}
	if _, err := exec.LookPath("flatc"); err != nil {
		t.Fatal("no flatc (apt-get install flatbuffers-compiler)")
	}
}

func runOracle(t *testing.T, cases []*oracleCase) {
	oracleSkip(t)
	dir := t.TempDir()
	fails, compared, accepted, bothFail := 0, 0, 0, 0
	for _, c := range cases {
		want, op := c.runTFLite(t, dir)
		got, err := c.runOurs(op)
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

func oracleEqual(c *oracleCase, got, want []byte) bool {
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

func oracleDiff(c *oracleCase, got, want []byte) string {
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

func allBytes(t tensor.DType) []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func randInt16s(r *rand.Rand, n int, lo, hi int) []byte {
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

func floatBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func randFloats(r *rand.Rand, n int, lo, hi float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float32()
	}
	return v
}

func randScale(r *rand.Rand, lo, hi float64) float32 {
	return float32(math.Exp(math.Log(lo) + (math.Log(hi)-math.Log(lo))*r.Float64()))
}

func randZP(r *rand.Rand, t tensor.DType) int64 {
	switch t {
	case tensor.Uint8:
		return int64(r.IntN(256))
	case tensor.Int8:
		return int64(r.IntN(256) - 128)
	}
	return 0
}

func qt(name string, t tensor.DType, shape []int, scale float32, zp int64, data []byte) *oracleTensor {
	return &oracleTensor{Name: name, Type: t, Shape: shape, Scale: []float32{scale}, ZP: []int64{zp}, Data: data}
}

func ft(name string, t tensor.DType, shape []int, data []byte) *oracleTensor {
	return &oracleTensor{Name: name, Type: t, Shape: shape, Data: data}
}

func TestOracleSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var cases []*oracleCase
	for i := range 300 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
		outT := in
		if i%5 == 4 {
			outT = tensor.Int16
		}
		shape := [][]int{{1, 1001}, {3, 7, 11}, {4, 256}, {1}, {2, 1, 5}}[i%5]
		n := tensor.NumElements(shape)
		beta := []float32{1, 1, 0.5, 2.7, 1e-3}[r.IntN(5)]
		outScale := float32(1.0 / 256)
		outZP := int64(0)
		if outT == tensor.Int8 {
			outZP = -128
		}
		if i%7 == 3 {
			outScale = randScale(r, 1e-3, 0.02)
			outZP = randZP(r, outT)
		}
		if outT == tensor.Int16 {
			outScale, outZP = randScale(r, 1e-5, 1e-3), int64(r.IntN(100)-50)
		}
		data := randBytes(r, n)
		if i < 20 {
			// Few distinct values, as after a ReLU.
			for j := range data {
				data[j] &= 0xf0
			}
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("softmax%d_%s_%s", i, in, outT), Code: schema.BuiltinOperatorSOFTMAX, Version: 2,
			OptType: "SoftmaxOptions", Options: map[string]any{"beta": f32json(beta)},
			Inputs: []*oracleTensor{qt("in", in, shape, randScale(r, 1e-3, 2), randZP(r, in), data)},
			Output: qt("out", outT, shape, outScale, outZP, nil),
		})
	}
	for i := range 60 {
		shape := [][]int{{1, 1001}, {3, 7, 11}, {2, 2, 2, 33}, {9}}[i%4]
		n := tensor.NumElements(shape)
		beta := []float32{1, 0.5, 2.7}[r.IntN(3)]
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("softmax16_%d", i), Code: schema.BuiltinOperatorSOFTMAX, Version: 3,
			OptType: "SoftmaxOptions", Options: map[string]any{"beta": f32json(beta)},
			Inputs: []*oracleTensor{qt("in", tensor.Int16, shape, randScale(r, 1e-5, 1e-2), 0, randInt16s(r, n, -32768, 32767))},
			Output: qt("out", tensor.Int16, shape, []float32{1.0 / 32768, randScale(r, 1e-5, 1e-3)}[i%2], 0, nil),
		})
	}
	for i := range 20 {
		shape := [][]int{{1, 1001}, {3, 7, 11}, {5}}[i%3]
		n := tensor.NumElements(shape)
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("softmaxf_%d", i), Code: schema.BuiltinOperatorSOFTMAX, Version: 1,
			OptType: "SoftmaxOptions", Options: map[string]any{"beta": f32json([]float32{1, 0.3, 4}[i%3])},
			Inputs: []*oracleTensor{ft("in", tensor.Float32, shape, floatBytes(randFloats(r, n, -20, 20)))},
			Output: ft("out", tensor.Float32, shape, nil), FloatTol: 1e-6,
		})
	}
	runOracle(t, cases)
}

func TestOracleLogisticTanh(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var cases []*oracleCase
	for _, code := range []schema.BuiltinOperator{schema.BuiltinOperatorLOGISTIC, schema.BuiltinOperatorTANH} {
		for i := range 200 {
			in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
			outScale, outZP := float32(1.0/256), int64(0)
			if in == tensor.Int8 {
				outZP = -128
			}
			if code == schema.BuiltinOperatorTANH {
				outScale, outZP = 1.0/128, 128
				if in == tensor.Int8 {
					outZP = 0
				}
				if i%3 == 0 {
					outScale, outZP = randScale(r, 1e-3, 0.05), randZP(r, in)
				}
			}
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("%s%d_%s", schema.EnumNamesBuiltinOperator[code], i, in), Code: code, Version: 2,
				Inputs: []*oracleTensor{qt("in", in, []int{256}, randScale(r, 1e-3, 0.5), randZP(r, in), allBytes(in))},
				Output: qt("out", in, []int{256}, outScale, outZP, nil),
			})
		}
		for i := range 60 {
			var s float32
			switch i % 4 {
			case 0:
				s = 1.0 / 4096
			case 1:
				s = 1.0 / 2048
			default:
				s = randScale(r, 1e-5, 1e-2)
			}
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("%s16_%d_s%g", schema.EnumNamesBuiltinOperator[code], i, s), Code: code, Version: 3,
				Inputs: []*oracleTensor{qt("in", tensor.Int16, []int{2000}, s, 0, randInt16s(r, 2000, -32768, 32767))},
				Output: qt("out", tensor.Int16, []int{2000}, 1.0/32768, 0, nil),
			})
		}
		cases = append(cases, &oracleCase{
			Name: "float", Code: code, Version: 1,
			Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{500}, floatBytes(randFloats(r, 500, -12, 12)))},
			Output: ft("out", tensor.Float32, []int{500}, nil), FloatTol: 2e-6,
		})
	}
	// Quantization TFLite rejects.
	for i, c := range []struct {
		code    schema.BuiltinOperator
		in      tensor.DType
		inScale float32
		scale   float32
		zp      int64
	}{
		{schema.BuiltinOperatorLOGISTIC, tensor.Uint8, 0.1, 1.0 / 128, 0},
		{schema.BuiltinOperatorLOGISTIC, tensor.Int8, 0.1, 1.0 / 256, 0},
		{schema.BuiltinOperatorLOGISTIC, tensor.Int16, 1.0 / 4096, 1.0 / 16384, 0},
		{schema.BuiltinOperatorLOGISTIC, tensor.Int16, 1.0 / 4096, 1.0 / 32768, 3},
		{schema.BuiltinOperatorTANH, tensor.Int16, 1.0 / 4096, 1.0 / 16384, 0},
		{schema.BuiltinOperatorTANH, tensor.Int16, 1.0 / 4096, 1.0 / 30000, 0},
		{schema.BuiltinOperatorTANH, tensor.Int8, 0.1, 1.0 / 30000, 5},
	} {
		n := 256
		data := allBytes(c.in)
		if c.in == tensor.Int16 {
			data = randInt16s(r, 128, -32768, 32767)
			n = 128
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("reject%d", i), Code: c.code, Version: 3,
			Inputs: []*oracleTensor{qt("in", c.in, []int{n}, c.inScale, 0, data)},
			Output: qt("out", c.in, []int{n}, c.scale, c.zp, nil),
		})
	}
	runOracle(t, cases)
}

func TestOracleRelu(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var cases []*oracleCase
	for _, code := range []schema.BuiltinOperator{schema.BuiltinOperatorRELU, schema.BuiltinOperatorRELU6, schema.BuiltinOperatorRELU_N1_TO_1} {
		for i := range 60 {
			in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("%s%d_%s", schema.EnumNamesBuiltinOperator[code], i, in), Code: code, Version: 1,
				Inputs: []*oracleTensor{qt("in", in, []int{256}, randScale(r, 1e-3, 0.5), randZP(r, in), allBytes(in))},
				Output: qt("out", in, []int{256}, randScale(r, 1e-3, 0.5), randZP(r, in), nil),
			})
		}
		for i := range 20 {
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("%s16_%d", schema.EnumNamesBuiltinOperator[code], i), Code: code, Version: 3,
				Inputs: []*oracleTensor{qt("in", tensor.Int16, []int{1000}, randScale(r, 1e-5, 1e-2), 0, randInt16s(r, 1000, -32768, 32767))},
				Output: qt("out", tensor.Int16, []int{1000}, randScale(r, 1e-5, 1e-2), 0, nil),
			})
		}
		cases = append(cases, &oracleCase{
			Name: "float", Code: code, Version: 1,
			Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{500}, floatBytes(randFloats(r, 500, -8, 8)))},
			Output: ft("out", tensor.Float32, []int{500}, nil), FloatTol: 1e-7,
		})
	}
	runOracle(t, cases)
}

func TestOracleLeakyHardSwishPrelu(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var cases []*oracleCase
	for i := range 80 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16}[i%3]
		alpha := []float32{0.1, 0.2, -0.5, 1.5, 0.01}[r.IntN(5)]
		n := 256
		data := allBytes(in)
		var izp, ozp int64
		if in == tensor.Int16 {
			n = 1000
			data = randInt16s(r, n, -32768, 32767)
		} else {
			izp, ozp = randZP(r, in), randZP(r, in)
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("leaky%d_%s", i, in), Code: schema.BuiltinOperatorLEAKY_RELU, Version: 2,
			OptType: "LeakyReluOptions", Options: map[string]any{"alpha": f32json(alpha)},
			Inputs: []*oracleTensor{qt("in", in, []int{n}, randScale(r, 1e-3, 0.5), izp, data)},
			Output: qt("out", in, []int{n}, randScale(r, 1e-3, 0.5), ozp, nil),
		})
	}
	cases = append(cases, &oracleCase{
		Name: "leakyf", Code: schema.BuiltinOperatorLEAKY_RELU, Version: 1,
		OptType: "LeakyReluOptions", Options: map[string]any{"alpha": f32json(0.2)},
		Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{500}, floatBytes(randFloats(r, 500, -8, 8)))},
		Output: ft("out", tensor.Float32, []int{500}, nil), FloatTol: 1e-7,
	})
	for i := range 120 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
		inScale := randScale(r, 1e-3, 0.2)
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("hardswish%d_%s", i, in), Code: schema.BuiltinOperatorHARD_SWISH, Version: 1,
			Inputs: []*oracleTensor{qt("in", in, []int{256}, inScale, randZP(r, in), allBytes(in))},
			Output: qt("out", in, []int{256}, inScale*float32(0.3+r.Float64()*3), randZP(r, in), nil),
		})
	}
	cases = append(cases, &oracleCase{
		Name: "hardswishf", Code: schema.BuiltinOperatorHARD_SWISH, Version: 1,
		Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{500}, floatBytes(randFloats(r, 500, -8, 8)))},
		Output: ft("out", tensor.Float32, []int{500}, nil), FloatTol: 1e-7,
	})
	for i := range 40 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Float32}[i%3]
		shape := []int{2, 3, 4, 5}
		ashape := [][]int{{5}, {1, 1, 5}, {4, 5}, {3, 1, 1}, {2, 3, 4, 5}}[i%5]
		an := tensor.NumElements(ashape)
		if in == tensor.Float32 {
			cases = append(cases, &oracleCase{
				Name: fmt.Sprintf("preluf%d", i), Code: schema.BuiltinOperatorPRELU, Version: 1,
				Inputs: []*oracleTensor{ft("in", in, shape, floatBytes(randFloats(r, 120, -3, 3))),
					{Name: "alpha", Type: in, Shape: ashape, Data: floatBytes(randFloats(r, an, -1, 1)), Const: true}},
				Output: ft("out", in, shape, nil), FloatTol: 1e-7,
			})
			continue
		}
		alpha := qt("alpha", in, ashape, randScale(r, 1e-3, 0.05), randZP(r, in), randBytes(r, an))
		alpha.Const = true
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("prelu%d_%s", i, in), Code: schema.BuiltinOperatorPRELU, Version: 1,
			Inputs: []*oracleTensor{qt("in", in, shape, randScale(r, 1e-3, 0.5), randZP(r, in), randBytes(r, 120)), alpha},
			Output: qt("out", in, shape, randScale(r, 1e-3, 0.5), randZP(r, in), nil),
		})
	}
	runOracle(t, cases)
}

func TestOracleQuantize(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var cases []*oracleCase
	special := []float32{0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1e10, -1e10, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3e9, -3e9, 0}
	for i := range 90 {
		out := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16}[i%3]
		scale := randScale(r, 1e-4, 1)
		vals := randFloats(r, 300, -200*scale, 200*scale)
		copy(vals, special)
		// Exact ties.
		for j := 20; j < 40; j++ {
			vals[j] = (float32(r.IntN(200)-100) + 0.5) * scale
		}
		zp := randZP(r, out)
		if i%9 == 0 {
			scale = 1
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("quantize%d_%s", i, out), Code: schema.BuiltinOperatorQUANTIZE, Version: 2,
			Inputs: []*oracleTensor{ft("in", tensor.Float32, []int{300}, floatBytes(vals))},
			Output: qt("out", out, []int{300}, scale, zp, nil),
		})
	}
	pairs := [][2]tensor.DType{{tensor.Uint8, tensor.Int8}, {tensor.Int8, tensor.Uint8}, {tensor.Int8, tensor.Int8}, {tensor.Uint8, tensor.Uint8}, {tensor.Int16, tensor.Int8}, {tensor.Int16, tensor.Int16}}
	for i := range 120 {
		p := pairs[i%len(pairs)]
		inScale := randScale(r, 1e-4, 1)
		outScale := randScale(r, 1e-4, 1)
		if i%4 == 0 {
			outScale = inScale
		}
		n := 256
		data := allBytes(p[0])
		if p[0] == tensor.Int16 {
			n = 1000
			data = randInt16s(r, n, -32768, 32767)
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("requant%d_%s_%s", i, p[0], p[1]), Code: schema.BuiltinOperatorQUANTIZE, Version: 3,
			Inputs: []*oracleTensor{qt("in", p[0], []int{n}, inScale, randZP(r, p[0]), data)},
			Output: qt("out", p[1], []int{n}, outScale, randZP(r, p[1]), nil),
		})
	}
	for i := range 40 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Float16}[i%4]
		n := 256
		data := allBytes(in)
		if in == tensor.Int16 || in == tensor.Float16 {
			n = 1000
			data = randInt16s(r, n, -32768, 32767)
		}
		it := qt("in", in, []int{n}, randScale(r, 1e-4, 10), randZP(r, in), data)
		if in == tensor.Float16 {
			it = ft("in", in, []int{n}, data)
		} else if in == tensor.Int16 {
			it.ZP = []int64{int64(r.IntN(200) - 100)}
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("dequant%d_%s", i, in), Code: schema.BuiltinOperatorDEQUANTIZE, Version: 4,
			Inputs: []*oracleTensor{it},
			Output: ft("out", tensor.Float32, []int{n}, nil),
		})
	}
	for i := range 20 {
		in := []tensor.DType{tensor.Uint8, tensor.Int8}[i%2]
		shape := []int{3, 4, 5}
		axis := i % 3
		ch := shape[axis]
		it := &oracleTensor{Name: "in", Type: in, Shape: shape, Axis: axis, Data: randBytes(r, 60)}
		for range ch {
			it.Scale = append(it.Scale, randScale(r, 1e-4, 10))
			it.ZP = append(it.ZP, randZP(r, in))
		}
		cases = append(cases, &oracleCase{
			Name: fmt.Sprintf("dequantpc%d_%s", i, in), Code: schema.BuiltinOperatorDEQUANTIZE, Version: 5,
			Inputs: []*oracleTensor{it},
			Output: ft("out", tensor.Float32, shape, nil),
		})
	}
	runOracle(t, cases)
}

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
	oracleSkip(t)
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
		if out, err := exec.Command(oracleBench(), path, filepath.Join(dir, "in.raw"), "1", "0", "1", outPath).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", g.input, err, out)
		}
		cur := oracleModelTensor(&sg, int(softIn))
		cur.Data, _ = os.ReadFile(outPath)
		for _, s := range steps {
			reg, _ := Builtins().Lookup(s.code, "")
			k, err := reg.New(OpInfo{Version: s.ver, Operator: s.op})
			if err != nil {
				t.Fatal(err)
			}
			out := oracleModelTensor(&sg, int(s.op.Outputs(0)))
			n := &Node{Inputs: []*tensor.Tensor{cur}, Outputs: []*tensor.Tensor{out}, Threads: 1}
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
	if out, err := exec.Command(oracleBench(), path, filepath.Join(dir, "in.raw"), "1", "0", "1", outPath).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	want, _ := os.ReadFile(outPath)
	in := oracleModelTensor(&sg, int(op.Inputs(0)))
	copy(in.Data, input)
	out := oracleModelTensor(&sg, int(op.Outputs(0)))
	k, _ := newQuantizeOp(OpInfo{Operator: op})
	n := &Node{Inputs: []*tensor.Tensor{in}, Outputs: []*tensor.Tensor{out}, Threads: 1}
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
