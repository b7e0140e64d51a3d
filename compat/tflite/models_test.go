package tflite_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// floats is the little-endian bytes of v.
func floats(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// xorModel is a two-layer network that computes XOR exactly:
// h = relu([a+b, a+b-1]), y = h0 - 2*h1.
func xorModel() []byte {
	b := modelbuild.New()
	in := b.Tensor("dense_input", tensor.Float32, []int{1, 2})
	w1 := b.Const("dense/kernel", tensor.Float32, []int{2, 2}, floats(1, 1, 1, 1))
	b1 := b.Const("dense/bias", tensor.Float32, []int{2}, floats(0, -1))
	h := b.Tensor("dense/Relu", tensor.Float32, []int{1, 2})
	w2 := b.Const("dense_1/kernel", tensor.Float32, []int{1, 2}, floats(1, -2))
	b2 := b.Const("dense_1/bias", tensor.Float32, []int{1}, floats(0))
	out := b.Tensor("dense_1", tensor.Float32, []int{1, 1})
	relu := modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions,
		&schema.FullyConnectedOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeRELU})
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{in, w1, b1}, []int{h}, relu)
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{h, w2, b2}, []int{out},
		modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{}))
	b.Inputs(in)
	b.Outputs(out)
	return b.Bytes()
}

// sinModel computes sin(x) for x of shape [1, 1] with the odd Taylor
// polynomial to x⁹ in Horner's form (within 4e-6 on [-π/2, π/2]).
func sinModel() []byte {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, []int{1, 1})
	x2 := b.Tensor("x2", tensor.Float32, []int{1, 1})
	b.Op(schema.BuiltinOperatorMUL, 1, []int{x, x}, []int{x2}, nil)
	acc := b.Const("c9", tensor.Float32, []int{1}, floats(1.0/362880))
	for i, c := range []float32{-1.0 / 5040, 1.0 / 120, -1.0 / 6, 1} {
		p := b.Tensor("p"+string(rune('0'+i)), tensor.Float32, []int{1, 1})
		b.Op(schema.BuiltinOperatorMUL, 1, []int{acc, x2}, []int{p}, nil)
		s := b.Tensor("s"+string(rune('0'+i)), tensor.Float32, []int{1, 1})
		k := b.Const("c"+string(rune('0'+i)), tensor.Float32, []int{1}, floats(c))
		b.Op(schema.BuiltinOperatorADD, 1, []int{p, k}, []int{s}, nil)
		acc = s
	}
	y := b.Tensor("y", tensor.Float32, []int{1, 1})
	b.Op(schema.BuiltinOperatorMUL, 1, []int{acc, x}, []int{y}, nil)
	b.Inputs(x)
	b.Outputs(y)
	return b.Bytes()
}

// writeModel writes a model into the test's directory and returns its path.
func writeModel(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
