package random

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
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
// bytes of the three Invokes of one TFLite 2.9 interpreter, normal values
// included: the generator's state carries over from one Eval to the next.
func TestLaterInvokesAgainstTFLite29(t *testing.T) {
	cases := loadLater(t)
	reg := kernel.NewRegistry(Ops()...)
	checked := 0
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
			wd, err := base64.StdEncoding.DecodeString(want[0].Data)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(out.Shape, want[0].Shape) || string(out.Data) != string(wd) {
				t.Errorf("%s: Invoke %d: %s, want TFLite's %s", c.Name, k+1, describe(out.Shape, out.Data), describe(want[0].Shape, wd))
			}
		}
		checked++
	}
	if checked < 90 {
		t.Fatalf("only %d cases with later Invokes", checked)
	}
}

// describe says what an output holds, briefly.
func describe(shape []int, data []byte) string {
	return fmt.Sprintf("shape %v, %d bytes starting % x", shape, len(data), data[:min(len(data), 16)])
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
