package kernels

import (
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// conformanceFamilies are the files of testdata/gen/conformance, made by
// conformance_tflite29_gen.py there: its table of ops, one file per family.
var conformanceFamilies = []string{"elementwise", "activation", "shape", "reduce", "quantize", "conv"}

// TestConformanceAgainstTFLite29 replays the conformance table's
// recordings through every built-in kernel: for each (op, version, type),
// TFLite 2.9's outputs or its refusal.
func TestConformanceAgainstTFLite29(t *testing.T) {
	for _, fam := range conformanceFamilies {
		t.Run(fam, func(t *testing.T) {
			kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
				File:        "conformance/" + fam + "_tflite29.json.gz",
				Ops:         Builtins().All(),
				MinCases:    50,
				ThreadCycle: 2,
				Differs:     knownDifferences,
			})
		})
	}
}

// knownDifferences are the cases where delego answers otherwise than TFLite
// 2.9:
//   - a STRIDED_SLICE that shrinks an axis it steps backwards along: 2.9
//     stops at start+1 whatever the stride, so its loop never runs and it
//     writes nothing; delego takes the element at begin, as TensorFlow does;
//   - TILE of an empty INT16 tensor: 2.9 checks the type only when there is
//     something to tile and so "runs" it; delego refuses INT16 up front, as
//     2.9 does for every INT16 tensor that has data.
func knownDifferences(c *kerneltest.ReplayCase) bool {
	name, _, types, err := c.Op()
	if err != nil {
		return false
	}
	if name == "TILE" {
		return types[0] == tensor.Int16 && c.Error == ""
	}
	op, err := c.Operator()
	if err != nil || op.BuiltinOptionsType() != schema.BuiltinOptionsStridedSliceOptions {
		return false
	}
	var tbl flatbuffers.Table
	var o schema.StridedSliceOptions
	op.BuiltinOptions(&tbl)
	o.Init(tbl.Bytes, tbl.Pos)
	strides, err := c.Input(3)
	if err != nil || strides == nil {
		return false
	}
	for axis, s := range strides.Int32s() {
		if s < 0 && o.ShrinkAxisMask()&(1<<axis) != 0 {
			return true
		}
	}
	return false
}
