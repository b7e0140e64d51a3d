package core

import (
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/delego/delego/model"
)

// TestRandomOpsInvokeAsTFLite29 runs the random ops' recorded one-operator
// models (testdata/gen/random/random_tflite29.json.gz, made by
// random_tflite29_gen.py) through the interpreter, three Invokes each, and
// compares every output's shape and bytes with TFLite 2.9's three Invokes
// of one interpreter: the interpreter prepares a node once per
// AllocateTensors, as TFLite does, so the generator's stream carries on
// from Invoke to Invoke; a Dynamic output (a shape or logits that are not
// constant) is sized at each Invoke.
func TestRandomOpsInvokeAsTFLite29(t *testing.T) {
	f, err := os.Open("../testdata/gen/random/random_tflite29.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	type output struct {
		Shape []int  `json:"shape"`
		Data  []byte `json:"data"`
	}
	var cases []struct {
		Name   string `json:"name"`
		Model  []byte `json:"model"`
		Inputs []struct {
			Const bool   `json:"const"`
			Data  []byte `json:"data"`
		} `json:"inputs"`
		Outputs []output   `json:"outputs"`
		Later   [][]output `json:"later"`
	}
	if err := json.NewDecoder(zr).Decode(&cases); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, c := range cases {
		if c.Later == nil {
			continue
		}
		m, err := model.New(c.Model)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		it, err := NewInterpreter(m, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if err := it.AllocateTensors(); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		in := 0
		for _, x := range c.Inputs {
			if x.Const {
				continue
			}
			if err := it.Input(in).CopyFrom(x.Data); err != nil {
				t.Fatalf("%s: input %d: %v", c.Name, in, err)
			}
			in++
		}
		for k, want := range append([][]output{c.Outputs}, c.Later...) {
			if err := it.Invoke(context.Background()); err != nil {
				t.Fatalf("%s: Invoke %d: %v", c.Name, k+1, err)
			}
			out := it.Output(0)
			if got := out.Shape(); !slices.Equal(got, want[0].Shape) && len(got)+len(want[0].Shape) > 0 {
				t.Errorf("%s: Invoke %d: shape %v, TFLite %v", c.Name, k+1, got, want[0].Shape)
			}
			if got := out.Data(); string(got) != string(want[0].Data) {
				t.Errorf("%s: Invoke %d: bytes %s, TFLite %s", c.Name, k+1,
					base64.StdEncoding.EncodeToString(got[:min(len(got), 12)]), base64.StdEncoding.EncodeToString(want[0].Data[:min(len(want[0].Data), 12)]))
			}
		}
		it.Close()
		ran++
	}
	if ran < 90 {
		t.Fatalf("only %d cases with later Invokes", ran)
	}
}
