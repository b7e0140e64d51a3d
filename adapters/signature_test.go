package adapters

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// signatureModel has signature "scale" over its subgraph: inputs y then x
// (the reverse of the tensor order), outputs shifted = x+10 then
// product = x*y, all FLOAT32 [3]; and "text", whose one input is STRING.
func signatureModel(t *testing.T) *model.Model {
	t.Helper()
	b := modelbuild.New()
	x := b.Tensor("x_tensor", tensor.Float32, []int{3})
	y := b.Tensor("y_tensor", tensor.Float32, []int{3})
	ten := b.Const("ten", tensor.Float32, []int{1}, f32le(10))
	prod := b.Tensor("prod_tensor", tensor.Float32, []int{3})
	shift := b.Tensor("shift_tensor", tensor.Float32, []int{3})
	words := b.Tensor("words", tensor.String, []int{2})
	b.Op(schema.BuiltinOperatorMUL, 1, []int{x, y}, []int{prod}, modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{}))
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, ten}, []int{shift}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Inputs(x, y)
	b.Outputs(prod, shift)
	b.Signature("scale", 0,
		[]modelbuild.SignatureTensor{{Name: "y", Tensor: y}, {Name: "x", Tensor: x}},
		[]modelbuild.SignatureTensor{{Name: "shifted", Tensor: shift}, {Name: "product", Tensor: prod}})
	b.Signature("text", 0, []modelbuild.SignatureTensor{{Name: "w", Tensor: words}}, nil)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// f32le is the little-endian bytes of v.
func f32le(v ...float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// TestFindSignature finds a signature by key, and names the ones a model
// has when the key is not one of them.
func TestFindSignature(t *testing.T) {
	m := signatureModel(t)
	if s, err := FindSignature(m, "scale"); err != nil || s.Key != "scale" || len(s.Inputs) != 2 {
		t.Errorf("scale: %+v, %v", s, err)
	}
	_, err := FindSignature(m, "nope")
	if want := `the model has no such signature; its signatures are "scale", "text"`; err == nil || err.Error() != want {
		t.Errorf("nope: %v, want %q", err, want)
	}
	b := modelbuild.New()
	a := b.Tensor("a", tensor.Float32, []int{1})
	b.Inputs(a)
	b.Outputs(a)
	plain, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FindSignature(plain, "scale"); err == nil || err.Error() != "the model has no signature defs" {
		t.Errorf("no signatures: %v", err)
	}
}

// TestReadSignatureInputs reads one file per input in the signature's
// order and refuses a wrong count, a wrong size (naming the input by the
// signature's name) and a STRING input.
func TestReadSignatureInputs(t *testing.T) {
	m := signatureModel(t)
	sig, err := FindSignature(m, "scale")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	y, x, short := file("y", f32le(4, 5, 6)), file("x", f32le(1, 2, 3)), file("short", f32le(1))
	ctx := context.Background()
	data, err := ReadSignatureInputs(ctx, m, sig, []string{y, x})
	if err != nil || len(data) != 2 || !bytes.Equal(data[0], f32le(4, 5, 6)) || !bytes.Equal(data[1], f32le(1, 2, 3)) {
		t.Errorf("read %v, %v; want y's then x's bytes", data, err)
	}
	if ins := SignatureInputs(m, sig); len(ins) != 2 || ins[0].Name != "y" || ins[0].Info.Name != "y_tensor" || ins[1].Pos != 1 {
		t.Errorf("SignatureInputs: %+v", ins)
	}
	_, err = ReadSignatureInputs(ctx, m, sig, []string{y, short})
	if want := `signature "scale" input "x" (tensor 0, FLOAT32 [3]): file ` + short + ` is 4 bytes long; the tensor needs 12`; err == nil || err.Error() != want {
		t.Errorf("short file: %v, want %q", err, want)
	}
	if _, err := ReadSignatureInputs(ctx, m, sig, []string{y}); err == nil || err.Error() != `signature "scale" has 2 inputs, 1 files given` {
		t.Errorf("one file: %v", err)
	}
	text, err := FindSignature(m, "text")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadSignatureInputs(ctx, m, text, []string{y})
	if want := `signature "text" input "w" (tensor 5, STRING [2]): raw input files are not supported for STRING tensors`; err == nil || err.Error() != want {
		t.Errorf("STRING input: %v, want %q", err, want)
	}
}

// TestSignatureOutputs runs a signature and reads its outputs in the
// signature's order under its names, and the interpreter's own outputs
// under their tensors' names; WriteRaw writes their bytes one after the
// other.
func TestSignatureOutputs(t *testing.T) {
	m := signatureModel(t)
	it, err := core.NewInterpreter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	r, err := it.Signature("scale")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if err := r.SetInputs([][]byte{f32le(4, 5, 6), f32le(1, 2, 3)}); err != nil {
		t.Fatal(err)
	}
	if err := r.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	outs, err := SignatureOutputs(r)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range outs {
		names = append(names, o.Name())
	}
	if !slices.Equal(names, []string{"shifted", "product"}) || !slices.Equal(outs[0].Dequantize(), []float32{11, 12, 13}) {
		t.Errorf("signature outputs %q, first %v", names, outs[0].Dequantize())
	}
	if own := Outputs(it); len(own) != 2 || own[0].Name() != "prod_tensor" || !slices.Equal(own[0].Dequantize(), []float32{4, 10, 18}) {
		t.Errorf("interpreter outputs: %v", own)
	}
	var buf bytes.Buffer
	n, err := WriteRaw(&buf, outs)
	if want := append(f32le(11, 12, 13), f32le(4, 10, 18)...); err != nil || n != 24 || !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("WriteRaw: %d, %v, %v; want %v", n, err, buf.Bytes(), want)
	}
	if _, err := WriteRaw(failWriter{}, outs); !errors.Is(err, errFull) {
		t.Errorf("WriteRaw to a failing writer: %v", err)
	}
	if f := InputFrame(it); f != (Frame{}) {
		t.Errorf("InputFrame of a [3] input: %+v, want the zero Frame", f)
	}
}

var errFull = errors.New("disk full")

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFull }

// TestCheckScores accepts a numeric first output and refuses a STRING one
// and a model without outputs, naming the output.
func TestCheckScores(t *testing.T) {
	if err := CheckScores(signatureModel(t)); err != nil {
		t.Errorf("FLOAT32 scores: %v", err)
	}
	for _, c := range []struct {
		outputs []int
		want    string
	}{
		{[]int{1}, `output 0 (tensor 1 "words", STRING [2]) has no numeric scores`},
		{nil, "the model has no outputs"},
	} {
		b := modelbuild.New()
		a := b.Tensor("a", tensor.Float32, []int{1})
		b.Tensor("words", tensor.String, []int{2})
		b.Inputs(a)
		b.Outputs(c.outputs...)
		m, err := model.New(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckScores(m); err == nil || err.Error() != c.want {
			t.Errorf("CheckScores: %v, want %q", err, c.want)
		}
	}
}

// TestInputFrame: an interpreter whose first input is [1,H,W,C] gives its
// W by H as the frame.
func TestInputFrame(t *testing.T) {
	b := modelbuild.New()
	a := b.Tensor("image", tensor.Uint8, []int{1, 2, 3, 1})
	b.Inputs(a)
	b.Outputs(a)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	it, err := core.NewInterpreter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if f := InputFrame(it); f != (Frame{Width: 3, Height: 2}) {
		t.Errorf("InputFrame: %+v, want 3 by 2", f)
	}
}
