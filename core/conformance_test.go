package core

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// The op conformance suite's checks that need whole models: the cases of
// testdata/gen/conformance/graph_tflite29.json.gz (made by
// graph_tflite29_gen.py there), run through the interpreter.

// graphCase is one whole-model case: subgraph 0's inputs, and TFLite 2.9's
// outputs or the stage at which it failed.
type graphCase struct {
	Name   string `json:"name"`
	Model  []byte `json:"model"`
	Inputs []struct {
		Type  string `json:"type"`
		Shape []int  `json:"shape"`
		Data  []byte `json:"data"`
	} `json:"inputs"`
	Outputs []struct {
		Shape []int  `json:"shape"`
		Data  []byte `json:"data"`
	} `json:"outputs"`
	Error string `json:"error"`
}

func loadGraphCases(t *testing.T) []graphCase {
	t.Helper()
	var cases []graphCase
	kerneltest.DecodeRecording(t, filepath.Join("conformance", "graph_tflite29.json.gz"), &cases)
	return cases
}

// runGraphCase runs c's model once on its inputs.
func runGraphCase(c *graphCase) (*Interpreter, error) {
	m, err := model.New(c.Model)
	if err != nil {
		return nil, err
	}
	it, err := NewInterpreter(m, nil)
	if err != nil {
		return nil, err
	}
	if err := it.AllocateTensors(); err != nil {
		it.Close()
		return nil, err
	}
	for i, in := range c.Inputs {
		if err := it.Input(i).CopyFrom(in.Data); err != nil {
			it.Close()
			return nil, err
		}
	}
	if err := it.Invoke(context.Background()); err != nil {
		it.Close()
		return nil, err
	}
	return it, nil
}

func TestConformanceGraphsAgainstTFLite29(t *testing.T) {
	cases := loadGraphCases(t)
	if len(cases) < 40 {
		t.Fatalf("only %d whole-model cases", len(cases))
	}
	for i := range cases {
		c := &cases[i]
		it, err := runGraphCase(c)
		if c.Error != "" {
			if err == nil {
				it.Close()
				t.Errorf("%s: TFLite fails (%s), delego runs it", c.Name, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		for j, want := range c.Outputs {
			out := it.Output(j)
			got := &tensor.Tensor{Type: out.Type(), Shape: out.Shape(), Data: out.Data()}
			kerneltest.CompareTFLite29(t, c.Name, j, got, want.Shape, want.Data)
		}
		it.Close()
	}
}
