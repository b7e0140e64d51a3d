package core

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// stringModel is a model with a STRING input of shape [2], a constant
// STRING tensor and a node reading both, whose kernel the test's registry
// may lack: the tests here check the tensors, not the op.
func stringModel(t *testing.T) *model.Model {
	t.Helper()
	b := modelbuild.New()
	in := b.Tensor("words", tensor.String, []int{2})
	c := b.ConstStrings("vocab", []int{3}, []string{"a", "bb", "ccc"})
	out := b.Tensor("same", tensor.Bool, []int{2})
	b.Op(schema.BuiltinOperatorEQUAL, 3, []int{in, c}, []int{out}, nil)
	b.Inputs(in)
	b.Outputs(out)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStringTensors: a STRING input has no memory in the arena and takes
// its strings from SetStrings or CopyFrom; a constant STRING tensor reads
// the model's buffer as it is; wrong types, counts and buffers are refused
// with errors that say what is wrong.
func TestStringTensors(t *testing.T) {
	m := stringModel(t)
	g, err := newGraph(m, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	in, vocab := g.public[0], g.public[1]
	if !g.tensors[0].Dynamic || g.tensors[1].Dynamic || !g.tensors[1].Const {
		t.Fatalf("input dynamic %v, constant dynamic %v const %v; want a dynamic input and a constant",
			g.tensors[0].Dynamic, g.tensors[1].Dynamic, g.tensors[1].Const)
	}
	if lives := g.lifetimes([]stepUse{{reads: []int{0, 1}, writes: []int{2}}}, []int{0, 2}, nil); len(lives) != 1 || lives[0].tensor != 2 {
		t.Errorf("the arena plans %v, want the BOOL output only", lives)
	}
	if got, err := vocab.Strings(); err != nil || !slices.Equal(got, []string{"a", "bb", "ccc"}) {
		t.Errorf("constant: %q, %v", got, err)
	}
	if _, err := in.Strings(); err == nil || !strings.Contains(err.Error(), `tensor 0: STRING tensor "words": string buffer of 0 bytes`) {
		t.Errorf("unset input: %v", err)
	}
	if err := in.SetStrings([]string{"x", "yé"}); err != nil {
		t.Fatal(err)
	}
	if got, err := in.Strings(); err != nil || !slices.Equal(got, []string{"x", "yé"}) || in.ByteSize() != 4*4+4 {
		t.Errorf("after SetStrings: %q (%d bytes), %v", got, in.ByteSize(), err)
	}
	if err := in.CopyFrom(in.Data()); err != nil {
		t.Errorf("CopyFrom its own buffer: %v", err)
	}
	if got, _ := in.Strings(); !slices.Equal(got, []string{"x", "yé"}) {
		t.Errorf("after CopyFrom of its own buffer: %q", got)
	}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"too few", in.SetStrings([]string{"x"}), `tensor 0 ("words") of shape [2] holds 2 strings, got 1`},
		{"constant", vocab.SetStrings([]string{"a", "b", "c"}), `tensor 1 ("vocab") is a constant of the model`},
		{"not STRING", g.public[2].SetStrings([]string{"a", "b"}), `tensor 2 ("same") is BOOL, not STRING`},
		{"bad buffer", in.CopyFrom([]byte{9, 0, 0, 0}), `tensor 0 ("words"): string buffer's count 9 needs a 44-byte header`},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, c.err, c.want)
		}
	}
}

// TestStringsEndToEnd: STRING tensors flow through an interpreter: a STRING
// input, GATHER of it by an INT32 input into an intermediate STRING tensor,
// RESHAPE of that to the STRING output, and EQUAL of the gathered strings
// with a constant, from one Invoke to the next with other strings and
// another input shape. No STRING tensor takes arena memory.
func TestStringsEndToEnd(t *testing.T) {
	b := modelbuild.New()
	words := b.Tensor("words", tensor.String, []int{3})
	pos := b.Tensor("pos", tensor.Int32, []int{4})
	picked := b.Tensor("picked", tensor.String, []int{4})
	shape := b.Const("shape", tensor.Int32, []int{2}, []byte{2, 0, 0, 0, 2, 0, 0, 0})
	grid := b.Tensor("grid", tensor.String, []int{2, 2})
	hello := b.ConstStrings("hello", []int{1}, []string{"hello"})
	same := b.Tensor("is_hello", tensor.Bool, []int{4})
	b.Op(schema.BuiltinOperatorGATHER, 1, []int{words, pos}, []int{picked},
		modelbuild.Options(schema.BuiltinOptionsGatherOptions, &schema.GatherOptionsT{}))
	b.Op(schema.BuiltinOperatorRESHAPE, 1, []int{picked, shape}, []int{grid}, nil)
	b.Op(schema.BuiltinOperatorEQUAL, 3, []int{picked, hello}, []int{same}, nil)
	b.Inputs(words, pos)
	b.Outputs(grid, same)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewInterpreter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	run := func(values []string, positions ...int32) ([]string, []bool) {
		t.Helper()
		if err := it.ResizeInput(0, []int{len(values)}); err != nil {
			t.Fatal(err)
		}
		if err := it.AllocateTensors(); err != nil {
			t.Fatal(err)
		}
		if err := it.Input(0).SetStrings(values); err != nil {
			t.Fatal(err)
		}
		copy(it.Input(1).Int32s(), positions)
		if err := it.Invoke(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, err := it.Output(0).Strings()
		if err != nil {
			t.Fatal(err)
		}
		if shape := it.Output(0).Shape(); !slices.Equal(shape, []int{2, 2}) {
			t.Errorf("output shape %v, want [2 2]", shape)
		}
		return got, slices.Clone(tensor.View[bool](it.Output(1).Data()))
	}
	got, eq := run([]string{"hello", "wörld", ""}, 2, 0, 1, 0)
	if want := []string{"", "hello", "wörld", "hello"}; !slices.Equal(got, want) || !slices.Equal(eq, []bool{false, true, false, true}) {
		t.Errorf("first Invoke: %q %v, want %q [false true false true]", got, eq, want)
	}
	got, eq = run([]string{"x", "hello"}, 1, 1, 0, 1)
	if want := []string{"hello", "hello", "x", "hello"}; !slices.Equal(got, want) || !slices.Equal(eq, []bool{true, true, false, true}) {
		t.Errorf("second Invoke: %q %v, want %q [true true false true]", got, eq, want)
	}
	for _, i := range []int{0, 2, 4} {
		if !it.tensors[i].Dynamic {
			t.Errorf("STRING tensor %d is not Dynamic: the arena plans it", i)
		}
	}
}
