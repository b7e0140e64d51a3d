package random

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
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/random/random_tflite29.json.gz holds one-operator
// RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL cases with nonzero
// seeds (see kerneltest/replay.go), made by
// testdata/gen/random/random_tflite29_gen.py: the first Invoke's outputs,
// which ReplayTFLite29 compares, and those of the second and third Invokes
// of the same interpreter ("later"), which TestLaterInvokesAgainstTFLite29
// compares.
const replayFile = "random/random_tflite29.json.gz"

func TestRandomAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        replayFile,
		Ops:         Ops(),
		MinCases:    120,
		ThreadCycle: 2,
	})
}

// laterCase is what TestLaterInvokesAgainstTFLite29 reads of a case.
type laterCase struct {
	Name   string `json:"name"`
	Model  string `json:"model"`
	Inputs []struct {
		Type  string `json:"type"`
		Shape []int  `json:"shape"`
		Const bool   `json:"const"`
		Data  string `json:"data"`
	} `json:"inputs"`
	Outputs []laterOutput   `json:"outputs"`
	Later   [][]laterOutput `json:"later"`
}

type laterOutput struct {
	Type  string `json:"type"`
	Shape []int  `json:"shape"`
	Data  string `json:"data"`
}

// TestLaterInvokesAgainstTFLite29: one node Evaluated three times gives the
// three Invokes of one TFLite 2.9 interpreter: the generator's state
// carries over. Uniform and multinomial outputs are byte-identical; normal
// ones, which go through log, sin and cos, within 1e-5 (relative above 1),
// and the test reports how many are not bit-identical.
func TestLaterInvokesAgainstTFLite29(t *testing.T) {
	cases := loadLater(t)
	reg := kernel.NewRegistry(Ops()...)
	checked, values, inexact := 0, 0, 0
	for _, c := range cases {
		if c.Later == nil {
			continue
		}
		op, node := buildNode(t, reg, c)
		if err := op.Prepare(node); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		out := node.Outputs[0]
		if !out.Dynamic {
			out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
		}
		for k, want := range append([][]laterOutput{c.Outputs}, c.Later...) {
			if err := op.Eval(node); err != nil {
				t.Fatalf("%s: Invoke %d: %v", c.Name, k+1, err)
			}
			if !slices.Equal(out.Shape, want[0].Shape) {
				t.Fatalf("%s: Invoke %d: shape %v, want %v", c.Name, k+1, out.Shape, want[0].Shape)
			}
			wd, _ := base64.StdEncoding.DecodeString(want[0].Data)
			n, diff := compareOutput(t, c.Name, k+1, out, wd)
			values += n
			inexact += diff
		}
		checked++
	}
	if checked < 90 {
		t.Fatalf("only %d cases with later Invokes", checked)
	}
	t.Logf("%d cases, 3 Invokes each, %d values: %d normal values not bit-identical", checked, values, inexact)
}

// compareOutput compares Invoke k's output with TFLite's bytes want and
// returns how many values it held and how many differ in their bits.
func compareOutput(t *testing.T, name string, k int, out *tensor.Tensor, want []byte) (n, inexact int) {
	t.Helper()
	if out.Type != tensor.Float32 || len(want) != len(out.Data) {
		if string(out.Data) != string(want) {
			t.Errorf("%s: Invoke %d: got %v, want %v", name, k, out.Data, want)
		}
		return len(want) / max(1, out.Type.Size()), 0
	}
	got := out.Float32s()
	for i := range got {
		w := math.Float32frombits(binary.LittleEndian.Uint32(want[4*i:]))
		if got[i] == w {
			continue
		}
		inexact++
		if math.Abs(float64(got[i]-w)) > 1e-5*math.Max(1, math.Abs(float64(w))) {
			t.Errorf("%s: Invoke %d: out[%d] = %v, want %v", name, k, i, got[i], w)
			return len(got), inexact
		}
	}
	return len(got), inexact
}

// loadLater reads the replay file's cases.
func loadLater(t *testing.T) []laterCase {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "gen", replayFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cases []laterCase
	if err := json.NewDecoder(zr).Decode(&cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// buildNode makes the kernel of the case's one operator, and its node.
func buildNode(t *testing.T, reg *kernel.Registry, c laterCase) (kernel.Op, *kernel.Node) {
	t.Helper()
	mb, err := base64.StdEncoding.DecodeString(c.Model)
	if err != nil {
		t.Fatal(err)
	}
	m := schema.GetRootAsModel(mb, 0)
	var sg schema.SubGraph
	var op schema.Operator
	var oc schema.OperatorCode
	m.Subgraphs(&sg, 0)
	sg.Operators(&op, 0)
	m.OperatorCodes(&oc, 0)
	r, ok := reg.Lookup(oc.BuiltinCode(), "")
	if !ok {
		t.Fatalf("%s: no kernel for %s", c.Name, kernel.OpName(oc.BuiltinCode()))
	}
	k, err := r.New(kernel.OpInfo{Version: int(oc.Version()), Operator: &op})
	if err != nil {
		t.Fatal(err)
	}
	node := &kernel.Node{Threads: 1}
	for _, in := range c.Inputs {
		typ, _ := tensor.TypeNamed(in.Type)
		tt := tensor.NewTensor(typ, in.Shape...)
		d, err := base64.StdEncoding.DecodeString(in.Data)
		if err != nil {
			t.Fatal(err)
		}
		copy(tt.Data, d)
		tt.Const = in.Const
		node.Inputs = append(node.Inputs, tt)
	}
	typ, _ := tensor.TypeNamed(c.Outputs[0].Type)
	node.Outputs = []*tensor.Tensor{{Type: typ}}
	return k, node
}
