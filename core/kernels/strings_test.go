package kernels

import (
	"errors"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

func stringsT(shape []int, values ...string) *tensor.Tensor {
	t := &tensor.Tensor{Name: "s", Type: tensor.String, Dynamic: true}
	t.SetStrings(shape, func(i int) []byte { return []byte(values[i]) })
	return t
}

// TestStringRefusals: a node mixing STRING element tensors with others, or
// taking STRING where the op wants indices, is refused as unsupported, the
// error naming op and tensor; so is a malformed string input.
func TestStringRefusals(t *testing.T) {
	reg := Builtins()
	op := func(code schema.BuiltinOperator) kernel.Op {
		r, _ := reg.Lookup(code, "")
		k, err := r.New(kernel.OpInfo{Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	out := func(typ tensor.DType) *tensor.Tensor { return &tensor.Tensor{Name: "out", Type: typ, Dynamic: true} }
	broken := stringsT([]int{2}, "a", "b")
	broken.Data[4] = 99 // offset 0 past the end
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"EQUAL of STRING and INT32", kerneltest.Run1(op(schema.BuiltinOperatorEQUAL), out(tensor.Bool),
			stringsT([]int{1}, "a"), kerneltest.I32T([]int{1}, 1)), `EQUAL: "" is INT32 beside STRING tensors`},
		{"GATHER by STRING", kerneltest.Run1(op(schema.BuiltinOperatorGATHER), out(tensor.Float32),
			kerneltest.F32T([]int{2}, 1, 2), stringsT([]int{1}, "a")), `GATHER: positions type STRING`},
		{"GATHER to INT32", kerneltest.Run1(op(schema.BuiltinOperatorGATHER), out(tensor.Int32),
			stringsT([]int{2}, "a", "b"), kerneltest.I32T([]int{1}, 1)), `GATHER: "out" is INT32 beside STRING tensors`},
		{"GATHER of 2-D strings", kerneltest.Run1(op(schema.BuiltinOperatorGATHER), out(tensor.String),
			stringsT([]int{1, 2}, "a", "b"), kerneltest.I32T([]int{1}, 0)), `GATHER: STRING input "s" has 2 dimensions`},
		{"malformed strings", kerneltest.Run1(op(schema.BuiltinOperatorTILE), out(tensor.String),
			broken, kerneltest.I32T([]int{1}, 2)), `TILE: STRING tensor "s": string buffer's offset 0 (99) is past its end`},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, c.err, c.want)
		}
		if c.name != "malformed strings" && !errors.Is(c.err, kernel.ErrUnsupported) {
			t.Errorf("%s: %v is not ErrUnsupported", c.name, c.err)
		}
	}
}
