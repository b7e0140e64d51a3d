package mediapipe

import (
	"encoding/binary"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
)

// cStruct packs int32 fields as a C struct of TFLite's builtin parameters.
func cStruct(fields ...int32) []byte {
	b := make([]byte, 4*len(fields))
	for i, f := range fields {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(f))
	}
	return b
}

// customOperator builds a CUSTOM operator carrying opts as its custom
// options (nil: none).
func customOperator(opts []byte) *schema.Operator {
	b := flatbuffers.NewBuilder(64)
	var custom flatbuffers.UOffsetT
	if opts != nil {
		custom = b.CreateByteVector(opts)
	}
	schema.OperatorStart(b)
	if opts != nil {
		schema.OperatorAddCustomOptions(b, custom)
	}
	b.Finish(schema.OperatorEnd(b))
	return schema.GetRootAsOperator(b.FinishedBytes(), 0)
}

// newOp makes the kernel of the custom op name, at its first registered
// version, from a node carrying opts.
func newOp(t *testing.T, name string, opts []byte) (kernel.Op, error) {
	t.Helper()
	reg, ok := kernel.NewRegistry(Ops()...).Lookup(schema.BuiltinOperatorCUSTOM, name)
	if !ok {
		t.Fatalf("%s is not registered", name)
	}
	return reg.New(kernel.OpInfo{Version: reg.Versions.Min, Operator: customOperator(opts)})
}

// mustOp is newOp that ends the test on an error.
func mustOp(t *testing.T, name string, opts []byte) kernel.Op {
	t.Helper()
	op, err := newOp(t, name, opts)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// TestRegistrations: every op of the family by the name models carry, at
// the versions MediaPipe's op resolver registers, and each can be made
// without a model.
func TestRegistrations(t *testing.T) {
	want := map[string]int{
		"Convolution2DTransposeBias": 1,
		"MaxPoolingWithArgmax2D":     1,
		"MaxUnpooling2D":             1,
		"TransformLandmarks":         2,
		"TransformTensorBilinear":    2,
		"Landmarks2TransformMatrix":  2,
	}
	regs := Ops()
	if len(regs) != len(want) {
		t.Errorf("%d registrations, want %d", len(regs), len(want))
	}
	for _, r := range regs {
		v, ok := want[r.Custom]
		if r.Code != schema.BuiltinOperatorCUSTOM || !ok || r.Versions.Min != v || r.Versions.Max != v {
			t.Errorf("%s (code %d): versions %v, want custom op at version %d only", r.Name(), r.Code, r.Versions, v)
		}
		if _, err := r.New(kernel.OpInfo{Version: v}); err != nil {
			t.Errorf("%s: New without a model: %v", r.Name(), err)
		}
	}
}
