package tflite_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
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

// irisRegression is a logistic regression on the iris data set: one row
// of weights and a bias per species (setosa, versicolor, virginica) over
// sepal length, sepal width, petal length and petal width in cm.
func irisRegression() (w [3][4]float32, b [3]float32) {
	return [3][4]float32{
		{-0.42, 0.97, -2.52, -1.08},
		{0.53, -0.32, -0.21, -0.94},
		{-0.11, -0.65, 2.73, 2.02},
	}, [3]float32{9.85, 2.24, -12.09}
}

// irisModel is irisRegression as softmax(W·x + b) for x of shape [1, 4].
func irisModel() []byte {
	w, bias := irisRegression()
	b := modelbuild.New()
	x := b.Tensor("features", tensor.Float32, []int{1, 4})
	var ws []float32
	for _, row := range w {
		ws = append(ws, row[:]...)
	}
	k := b.Const("dense/kernel", tensor.Float32, []int{3, 4}, floats(ws...))
	bc := b.Const("dense/bias", tensor.Float32, []int{3}, floats(bias[:]...))
	logits := b.Tensor("dense", tensor.Float32, []int{1, 3})
	y := b.Tensor("species", tensor.Float32, []int{1, 3})
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{x, k, bc}, []int{logits},
		modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{}))
	b.Op(schema.BuiltinOperatorSOFTMAX, 1, []int{logits}, []int{y},
		modelbuild.Options(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 1}))
	b.Inputs(x)
	b.Outputs(y)
	return b.Bytes()
}

// fizzBuzzModel maps n (1 to 127), given as 7 bits least significant
// first in a [1, 7] float32 input (as go-tflite's fizzbuzz example feeds
// its model), to one-hot scores [1, 4] for n itself, Fizz, Buzz and
// FizzBuzz, exactly:
//
//	n = bits · (1, 2, 4, ...)
//	f3 = 1 - min(n - 3·floor(n/3), 1), f5 likewise
//	scores = (1-f3-f5+f3·f5, f3-f3·f5, f5-f3·f5, f3·f5)
func fizzBuzzModel() []byte {
	b := modelbuild.New()
	scalar := []int{1, 1}
	const width = 7
	bits := b.Tensor("bits", tensor.Float32, []int{1, width})
	var pow []float32
	for i := range width {
		pow = append(pow, float32(int(1)<<i))
	}
	n := b.Tensor("n", tensor.Float32, scalar)
	fc := modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{})
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{bits, b.Const("powers", tensor.Float32, []int{1, width}, floats(pow...)), -1}, []int{n}, fc)
	one := b.Const("one", tensor.Float32, []int{1}, floats(1))
	divides := func(d int) int {
		name := strconv.Itoa(d)
		c := b.Const("c"+name, tensor.Float32, []int{1}, floats(float32(d)))
		q := b.Tensor("q"+name, tensor.Float32, scalar)
		b.Op(schema.BuiltinOperatorFLOOR_DIV, 1, []int{n, c}, []int{q}, nil)
		qd := b.Tensor("qd"+name, tensor.Float32, scalar)
		b.Op(schema.BuiltinOperatorMUL, 1, []int{q, c}, []int{qd}, nil)
		m := b.Tensor("mod"+name, tensor.Float32, scalar)
		b.Op(schema.BuiltinOperatorSUB, 1, []int{n, qd}, []int{m}, nil)
		nz := b.Tensor("nonzero"+name, tensor.Float32, scalar)
		b.Op(schema.BuiltinOperatorMINIMUM, 1, []int{m, one}, []int{nz}, nil)
		f := b.Tensor("f"+name, tensor.Float32, scalar)
		b.Op(schema.BuiltinOperatorSUB, 1, []int{one, nz}, []int{f}, nil)
		return f
	}
	f3, f5 := divides(3), divides(5)
	f15 := b.Tensor("f15", tensor.Float32, scalar)
	b.Op(schema.BuiltinOperatorMUL, 1, []int{f3, f5}, []int{f15}, nil)
	v := b.Tensor("features", tensor.Float32, []int{1, 3})
	b.Op(schema.BuiltinOperatorCONCATENATION, 1, []int{f3, f5, f15}, []int{v},
		modelbuild.Options(schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: 1}))
	w := b.Const("scores/kernel", tensor.Float32, []int{4, 3}, floats(
		-1, -1, 1,
		1, 0, -1,
		0, 1, -1,
		0, 0, 1))
	bias := b.Const("scores/bias", tensor.Float32, []int{4}, floats(1, 0, 0, 0))
	scores := b.Tensor("scores", tensor.Float32, []int{1, 4})
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{v, w, bias}, []int{scores}, fc)
	b.Inputs(bits)
	b.Outputs(scores)
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

// textVocabulary is the text classification program's vocabulary, and
// textEmbedding each word's [negative, positive] score: the model averages
// the scores of a sentence's eight slots (<START>, the words, <PAD>) and
// takes their softmax.
var (
	textVocabulary = []string{"<PAD>", "<START>", "<UNKNOWN>", "good", "great", "bad", "awful", "movie", "the"}
	textEmbedding  = [][2]float32{{0, 0}, {0, 0}, {0, 0}, {-1, 1}, {-2, 2}, {1, -1}, {2, -2}, {0, 0.25}, {0, 0}}
)

// textModel is a text classifier in the shape of TensorFlow Lite's
// example: int32 word ids [1, 8] -> GATHER from an embedding -> MEAN over
// the words -> SOFTMAX [1, 2].
func textModel() []byte {
	b := modelbuild.New()
	ids := b.Tensor("ids", tensor.Int32, []int{1, 8})
	var table []float32
	for _, e := range textEmbedding {
		table = append(table, e[:]...)
	}
	emb := b.Const("embedding", tensor.Float32, []int{len(textEmbedding), 2}, floats(table...))
	vectors := b.Tensor("vectors", tensor.Float32, []int{1, 8, 2})
	b.Op(schema.BuiltinOperatorGATHER, 1, []int{emb, ids}, []int{vectors},
		modelbuild.Options(schema.BuiltinOptionsGatherOptions, &schema.GatherOptionsT{Axis: 0}))
	axis := make([]byte, 4)
	binary.LittleEndian.PutUint32(axis, 1)
	mean := b.Tensor("mean", tensor.Float32, []int{1, 2})
	b.Op(schema.BuiltinOperatorMEAN, 1, []int{vectors, b.Const("axis", tensor.Int32, []int{1}, axis)}, []int{mean},
		modelbuild.Options(schema.BuiltinOptionsReducerOptions, &schema.ReducerOptionsT{KeepDims: false}))
	y := b.Tensor("sentiment", tensor.Float32, []int{1, 2})
	b.Op(schema.BuiltinOperatorSOFTMAX, 1, []int{mean}, []int{y},
		modelbuild.Options(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 1}))
	b.Inputs(ids)
	b.Outputs(y)
	return b.Bytes()
}
