package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// inspectJSON runs "inspect --json" on a shared model and decodes its output
// with encoding/json, the way a script would.
func inspectJSON(t *testing.T, file string) (report inspectReport, raw map[string]any) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := inspectCmd(context.Background(), []string{"--json", shared.Model(t, file)}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&report); err != nil {
		t.Fatalf("decode: %v\n%s", err, stdout.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	return report, raw
}

func inspectText(t *testing.T, file string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	// The flag after the model, as users type it.
	if err := inspectCmd(context.Background(), []string{shared.Model(t, file)}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	return stdout.String()
}

type opWant struct {
	index   int
	op      string
	version int
}

func checkOps(t *testing.T, sg model.SubgraphSummary, want []opWant) {
	t.Helper()
	for _, w := range want {
		if w.index >= len(sg.Operators) {
			t.Errorf("no op %d", w.index)
			continue
		}
		o := sg.Operators[w.index]
		if o.Index != w.index || o.Op != w.op || o.Version != w.version {
			t.Errorf("op %d = %s v%d (index %d), want %s v%d", w.index, o.Op, o.Version, o.Index, w.op, w.version)
		}
	}
}

// opLine matches the text form's row for an op: index, name, version.
func opLine(w opWant) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(strconv.Itoa(w.index)) + `\s+` + regexp.QuoteMeta(w.op) + `\s+` + strconv.Itoa(w.version) + `\s+\[`)
}

// checkText checks that inspect's text form has a row for each of ops and
// contains each of wants.
func checkText(t *testing.T, text string, ops []opWant, wants ...string) {
	t.Helper()
	for _, w := range ops {
		if !opLine(w).MatchString(text) {
			t.Errorf("text lacks op row %v", w)
		}
	}
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
}

func TestInspectMobilenet(t *testing.T) {
	const file = "mobilenet_v1_0.25_128_quant.tflite"
	r, raw := inspectJSON(t, file)
	if r.Version != 3 || r.MinRuntimeVersion != "1.5.0" || len(r.Subgraphs) != 1 {
		t.Fatalf("version %d, min runtime %q, %d subgraphs", r.Version, r.MinRuntimeVersion, len(r.Subgraphs))
	}
	sg := r.Subgraphs[0]
	if len(sg.Operators) != 31 || len(sg.Tensors) != 89 || r.Totals.Operators != 31 || r.Totals.Tensors != 89 {
		t.Errorf("%d ops, %d tensors (totals %d, %d); want 31 and 89", len(sg.Operators), len(sg.Tensors), r.Totals.Operators, r.Totals.Tensors)
	}
	ops := []opWant{{0, "CONV_2D", 1}, {1, "DEPTHWISE_CONV_2D", 1}, {27, "AVERAGE_POOL_2D", 1}, {29, "RESHAPE", 1}, {30, "SOFTMAX", 1}}
	checkOps(t, sg, ops)
	wantCounts := []model.OpCount{{Op: "CONV_2D", Count: 15}, {Op: "DEPTHWISE_CONV_2D", Count: 13}, {Op: "AVERAGE_POOL_2D", Count: 1}, {Op: "RESHAPE", Count: 1}, {Op: "SOFTMAX", Count: 1}}
	if !reflect.DeepEqual(r.Totals.OpCounts, wantCounts) {
		t.Errorf("op counts %v, want %v", r.Totals.OpCounts, wantCounts)
	}
	in := sg.Tensors[0]
	if sg.Inputs[0].Tensor != 0 || in.Name != "input" || in.Type != "UINT8" || !reflect.DeepEqual(in.Shape, []int{1, 128, 128, 3}) ||
		in.Quantization == nil || in.Quantization.Scale[0] != 0.0078125 || in.Quantization.ZeroPoint[0] != 128 || in.ConstBytes != 0 {
		t.Errorf("input tensor %+v", in)
	}
	if out := sg.Outputs[0]; out.Tensor != 88 || out.Name != "MobilenetV1/Predictions/Reshape_1" || !reflect.DeepEqual(out.Shape, []int{1, 1001}) {
		t.Errorf("output %+v", out)
	}
	if c := sg.Tensors[2]; c.ConstBytes != 4004 || c.Type != "INT32" {
		t.Errorf("bias tensor 2: %d const bytes of %s, want 4004 of INT32", c.ConstBytes, c.Type)
	}
	if r.Totals.ParamsBytes == 0 || r.Totals.ParamsBytes > r.Totals.BufferBytes || r.Totals.ConstantTensors != 57 {
		t.Errorf("totals %+v", r.Totals)
	}
	if len(r.Metadata) != 2 || r.Metadata[0].Name != "min_runtime_version" || r.Metadata[0].Value != "1.5.0" || r.Metadata[1].Name != "TFLITE_METADATA" {
		t.Errorf("metadata %+v", r.Metadata)
	}
	// Stable names in the JSON itself, and [] rather than null for empty lists.
	for _, k := range []string{"file", "file_bytes", "version", "description", "subgraphs", "metadata", "signature_defs", "totals"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if sigs, ok := raw["signature_defs"].([]any); !ok || len(sigs) != 0 {
		t.Errorf("signature_defs = %#v, want []", raw["signature_defs"])
	}

	checkText(t, inspectText(t, file), ops,
		"min runtime version:  1.5.0",
		"1 subgraphs, 31 ops, 89 tensors (57 constant)",
		"CONV_2D x15, DEPTHWISE_CONV_2D x13",
		`input 0:   tensor 0   "input"`,
		"scale 0.0078125 zp 128",
		`min_runtime_version  buffer 90  16 bytes   "1.5.0"`,
		"signature defs: none",
	)
}

func TestInspectLSTM(t *testing.T) {
	const file = "keras_lstm_mnist_ptq.tflite"
	r, _ := inspectJSON(t, file)
	sg := r.Subgraphs[0]
	if len(sg.Operators) != 6 || len(sg.Tensors) != 29 {
		t.Fatalf("%d ops, %d tensors; want 6 and 29", len(sg.Operators), len(sg.Tensors))
	}
	ops := []opWant{{0, "QUANTIZE", 1}, {1, "UNIDIRECTIONAL_SEQUENCE_LSTM", 1}, {2, "RESHAPE", 1},
		{3, "FULLY_CONNECTED", 4}, {4, "SOFTMAX", 2}, {5, "QUANTIZE", 1}}
	checkOps(t, sg, ops)
	lstm := sg.Operators[1]
	if len(lstm.Inputs) != 24 || lstm.Inputs[9] != -1 || !reflect.DeepEqual(lstm.Intermediates, []int{19, 20, 21, 22, 23}) {
		t.Errorf("LSTM op inputs %v intermediates %v", lstm.Inputs, lstm.Intermediates)
	}
	for _, ti := range []int{17, 18} {
		if !sg.Tensors[ti].Variable {
			t.Errorf("tensor %d is not marked variable", ti)
		}
	}
	if q := sg.Tensors[17].Quantization; q == nil || q.ZeroPoint[0] != -1 || sg.Tensors[17].Type != "INT8" {
		t.Errorf("LSTM output state %+v", sg.Tensors[17])
	}
	want := []model.SignatureSummary{{Key: "serving_default", Subgraph: 0,
		Inputs: []model.SignatureTensor{{Name: "x", Tensor: 0}}, Outputs: []model.SignatureTensor{{Name: "output_0", Tensor: 28}}}}
	if !reflect.DeepEqual(r.Signatures, want) {
		t.Errorf("signatures %+v, want %+v", r.Signatures, want)
	}
	if r.MinRuntimeVersion != "1.14.0" {
		t.Errorf("min runtime version %q", r.MinRuntimeVersion)
	}

	checkText(t, inspectText(t, file), ops,
		"1 subgraphs, 6 ops, 29 tensors",
		"intermediates [19,20,21,22,23]",
		"INT8 variable",
		"INT16 variable",
		`"serving_default"  subgraph 0  inputs [x=0]  outputs [output_0=28]`,
	)
}

func TestInspectEdgeTPU(t *testing.T) {
	const file = "split_concat_edgetpu.tflite"
	r, _ := inspectJSON(t, file)
	sg := r.Subgraphs[0]
	if len(sg.Operators) != 1 || len(sg.Tensors) != 8 || len(sg.Inputs) != 3 || len(sg.Outputs) != 5 {
		t.Fatalf("%d ops, %d tensors, %d inputs, %d outputs; want 1, 8, 3, 5", len(sg.Operators), len(sg.Tensors), len(sg.Inputs), len(sg.Outputs))
	}
	checkOps(t, sg, []opWant{{0, "edgetpu-custom-op", 1}})
	if o := sg.Operators[0]; !o.Custom || o.CustomOptionsBytes == 0 || !reflect.DeepEqual(o.Outputs, []int{3, 4, 5, 6, 7}) {
		t.Errorf("op %+v", o)
	}
	names := []string{}
	for _, o := range sg.Outputs {
		names = append(names, o.Name)
	}
	if want := []string{"concat/split0", "concat/split2", "concat/split4", "outputs/rnn1", "outputs/rnn2"}; !reflect.DeepEqual(names, want) {
		t.Errorf("outputs %q, want %q", names, want)
	}
	if r.Totals.ParamsBytes != 0 || len(r.Metadata) != 0 || r.MinRuntimeVersion != "" {
		t.Errorf("totals %+v metadata %+v", r.Totals, r.Metadata)
	}

	text := inspectText(t, file)
	if !opLine(opWant{0, "edgetpu-custom-op", 1}).MatchString(text) || !strings.Contains(text, "custom options 57380 bytes") {
		t.Errorf("text lacks the custom op row:\n%s", text)
	}
	if !regexp.MustCompile(`output 4:\s+tensor 7\s+"outputs/rnn2"\s+UINT8\s+\[1,8,8,2\]`).MatchString(text) {
		t.Errorf("text lacks output 4:\n%s", text)
	}
	checkText(t, text, nil, "1 subgraphs, 1 ops, 8 tensors (0 constant)", "metadata: none")
}

func TestInspectPerChannel(t *testing.T) {
	r, _ := inspectJSON(t, "tf2_mobilenet_v2_1.0_224_ptq.tflite")
	q := r.Subgraphs[0].Tensors[3].Quantization
	if q == nil || !q.PerChannel || q.Axis != 0 || len(q.Scale) != 32 || len(q.ZeroPoint) != 32 {
		t.Errorf("tensor 3 quantization %+v, want 32 per-channel scales on axis 0", q)
	}
	text := inspectText(t, "tf2_mobilenet_v2_1.0_224_ptq.tflite")
	if !strings.Contains(text, "per-channel axis 0: 32 scales [0.00956331 0.0272396 0.019717 ... 0.0015901] zps [0 (all 32)]") {
		t.Error("text does not summarise the per-channel scales")
	}
}

func TestInspectCorruptModel(t *testing.T) {
	p := writeFile(t, t.TempDir(), "bad.tflite", []byte("0123456789abcdef"))
	code, out, errOut := cli(t, "inspect", p, "--json")
	if code != exitError || out != "" || !strings.Contains(errOut, "malformed model") || !strings.Contains(errOut, filepath.Base(p)) {
		t.Errorf("status %d, stdout %q, stderr %q", code, out, errOut)
	}
	var me *model.Error
	err := inspectCmd(context.Background(), []string{p}, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.As(err, &me) {
		t.Errorf("err = %v, want a *model.Error inside", err)
	}
}

// TestInspectCyclicModel: a model whose operators form a cycle is refused
// when it is loaded, with a message naming the subgraph, the op and the
// tensor; inspect and run exit with status 1 and print nothing else.
func TestInspectCyclicModel(t *testing.T) {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{1})
	a := b.Tensor("a", tensor.Float32, []int{1})
	back := b.Tensor("back", tensor.Float32, []int{1})
	b.Op(schema.BuiltinOperatorADD, 1, []int{in, back}, []int{a}, nil)
	b.Op(schema.BuiltinOperatorMUL, 1, []int{a, in}, []int{back}, nil)
	b.Inputs(in)
	b.Outputs(back)
	dir := t.TempDir()
	p := writeFile(t, dir, "cycle.tflite", b.Bytes())
	input := writeFile(t, dir, "in.raw", make([]byte, 4))
	want := "delego: load model " + p + `: malformed model: subgraph 0: op 0: tensor 2: ADD reads tensor "back" before op 1 (MUL) writes it: the graph has a cycle, or its operators are out of order (they run in the order listed)` + "\n"
	for _, args := range [][]string{
		{"inspect", p},
		{"inspect", p, "--json"},
		{"run", p, "--input", input},
	} {
		code, out, errOut := cli(t, args...)
		if code != exitError || out != "" || errOut != want {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want %d and %q", args, code, out, errOut, exitError, want)
		}
	}
	var me *model.Error
	err := inspectCmd(context.Background(), []string{p}, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.As(err, &me) || me.Subgraph != 0 || me.Operator != 0 || me.Tensor != back {
		t.Errorf("err = %v, want a *model.Error at subgraph 0, op 0, tensor %d", err, back)
	}
}
