package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// twoSignatureModel has two signatures over two subgraphs, each with two
// inputs whose signature order differs from the tensor order:
//   - "scale" (subgraph 0): product = x*y, shifted = x+10, of FLOAT32 [3];
//   - "offset" (subgraph 1): out = b-a, of FLOAT32 [2].
func twoSignatureModel() []byte {
	b := modelbuild.New()
	x := b.Tensor("x_tensor", tensor.Float32, []int{3})
	y := b.Tensor("y_tensor", tensor.Float32, []int{3})
	ten := b.Const("ten", tensor.Float32, []int{1}, f32le(10))
	prod := b.Tensor("prod_tensor", tensor.Float32, []int{3})
	shift := b.Tensor("shift_tensor", tensor.Float32, []int{3})
	b.Op(schema.BuiltinOperatorMUL, 1, []int{x, y}, []int{prod}, modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{}))
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, ten}, []int{shift}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Inputs(x, y)
	b.Outputs(prod, shift)
	b.Signature("scale", 0,
		[]modelbuild.SignatureTensor{{Name: "y", Tensor: y}, {Name: "x", Tensor: x}},
		[]modelbuild.SignatureTensor{{Name: "shifted", Tensor: shift}, {Name: "product", Tensor: prod}})

	sg := b.AddSubgraph("offset")
	a := b.Tensor("a_tensor", tensor.Float32, []int{2})
	bb := b.Tensor("b_tensor", tensor.Float32, []int{2})
	out := b.Tensor("out_tensor", tensor.Float32, []int{2})
	b.Op(schema.BuiltinOperatorSUB, 1, []int{bb, a}, []int{out}, modelbuild.Options(schema.BuiltinOptionsSubOptions, &schema.SubOptionsT{}))
	b.Inputs(a, bb)
	b.Outputs(out)
	b.Signature("offset", sg,
		[]modelbuild.SignatureTensor{{Name: "a", Tensor: a}, {Name: "b", Tensor: bb}},
		[]modelbuild.SignatureTensor{{Name: "out", Tensor: out}})
	return b.Bytes()
}

// f32le is the little-endian bytes of v.
func f32le(v ...float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// TestRunSignature runs each signature of a two-signature model by name,
// with its inputs given by name in another order than the signature's,
// and checks the outputs it reports (--json), writes (--output) and
// prints, in the signature's order and by its names.
func TestRunSignature(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "two.tflite", twoSignatureModel())
	in := func(name string, v ...float32) string { return writeFile(t, dir, name+".raw", f32le(v...)) }
	x, y := in("x", 1, 2, 3), in("y", 4, 5, 6)
	a, b := in("a", 1, 2), in("b", 10, 30)
	for _, c := range []struct {
		sig    string
		inputs []string
		names  []string
		values [][]float64
	}{
		{"scale", []string{"x=" + x, "y=" + y}, []string{"shifted", "product"}, [][]float64{{11, 12, 13}, {4, 10, 18}}},
		{"offset", []string{"b=" + b, "a=" + a}, []string{"out"}, [][]float64{{9, 28}}},
	} {
		t.Run(c.sig, func(t *testing.T) {
			args := []string{"run", m, "--signature", c.sig}
			for _, i := range c.inputs {
				args = append(args, "--input", i)
			}
			raw := filepath.Join(dir, c.sig+".out")
			code, out, errOut := cli(t, append(args, "--json", "--output", raw)...)
			if code != 0 {
				t.Fatalf("status %d: %s", code, errOut)
			}
			var rep struct {
				Signature string
				Outputs   []struct {
					Name   string
					Values []float64
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var names []string
			var want []float32
			for i, o := range rep.Outputs {
				names = append(names, o.Name)
				if !slices.Equal(o.Values, c.values[i]) {
					t.Errorf("output %q: %v, want %v", o.Name, o.Values, c.values[i])
				}
				for _, v := range c.values[i] {
					want = append(want, float32(v))
				}
			}
			if rep.Signature != c.sig || !slices.Equal(names, c.names) {
				t.Errorf("signature %q, outputs %q; want %q and %q", rep.Signature, names, c.sig, c.names)
			}
			if got, err := os.ReadFile(raw); err != nil || string(got) != string(f32le(want...)) {
				t.Errorf("--output holds %v (%v), want the bytes of %v", got, err, want)
			}
			code, out, _ = cli(t, args...)
			if code != 0 || !strings.HasPrefix(out, "output 0 "+`"`+c.names[0]+`" FLOAT32`) {
				t.Errorf("summary: status %d, %q", code, out)
			}
		})
	}
}

// TestRunSignatureErrors: a signature the model lacks, an input it lacks,
// a missing or doubled input, a plain --input, a file of the wrong size
// and flags that read the model's own tensors are refused with a message
// that names what is wrong, and nothing runs.
func TestRunSignatureErrors(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "two.tflite", twoSignatureModel())
	two := writeFile(t, dir, "two.raw", f32le(1, 2))
	three := writeFile(t, dir, "three.raw", f32le(1, 2, 3))
	plain := writeFile(t, dir, "plain.tflite", plainModel())
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown signature", []string{m, "--signature", "nope", "--input", "a=" + two},
			`--signature "nope": the model has no such signature; its signatures are "scale", "offset"`},
		{"no signatures", []string{plain, "--signature", "scale", "--input", "a=" + two},
			`--signature "scale": the model has no signature defs`},
		{"unknown input", []string{m, "--signature", "offset", "--input", "c=" + two},
			`signature "offset" has no input "c"; its inputs are "a", "b"`},
		{"missing input", []string{m, "--signature", "offset", "--input", "a=" + two},
			`signature "offset" needs an --input NAME=FILE for each of its inputs ("a", "b"); "b" has none`},
		{"input twice", []string{m, "--signature", "offset", "--input", "a=" + two, "--input", "a=" + two},
			`--input a=...: given twice`},
		{"plain input", []string{m, "--signature", "offset", "--input", two},
			`with --signature, give --input NAME=FILE`},
		{"wrong size", []string{m, "--signature", "offset", "--input", "a=" + three, "--input", "b=" + two},
			`signature "offset" input "a" (tensor 0, FLOAT32 [2]): file ` + three + ` is 12 bytes long; the tensor needs 8`},
		{"image", []string{m, "--signature", "offset", "--image", three},
			`--image feeds the model's own inputs; with --signature, give --input NAME=FILE`},
		{"task", []string{m, "--signature", "offset", "--input", "a=" + two, "--input", "b=" + two, "--top", "1"},
			`--task, --top and --labels read the model's own outputs; they do not apply to --signature`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.raw")
			code, stdout, stderr := cli(t, append([]string{"run", "--output", out}, c.args...)...)
			if code == 0 || stdout != "" || !strings.Contains(stderr, c.want) {
				t.Errorf("status %d, stdout %q, stderr %q; want a failure saying %q", code, stdout, stderr, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("--output exists after a failed run (%v)", err)
			}
		})
	}
}

// plainModel is one ADD of FLOAT32 [2], without signature defs.
func plainModel() []byte {
	b := modelbuild.New()
	a := b.Tensor("a", tensor.Float32, []int{2})
	out := b.Tensor("out", tensor.Float32, []int{2})
	b.Op(schema.BuiltinOperatorADD, 1, []int{a, a}, []int{out}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Inputs(a)
	b.Outputs(out)
	return b.Bytes()
}
