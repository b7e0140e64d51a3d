package model

import (
	"testing"
	"unsafe"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TestOnlyWideConstantsAreCopied: with the file one byte off alignment in
// memory, a byte-wide constant is used where it lies in the file, while an
// int32 one is copied to an aligned place (typed views need it).
func TestOnlyWideConstantsAreCopied(t *testing.T) {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Uint8, []int{4}, modelbuild.Quant(1, 0))
	w := b.Const("w", tensor.Uint8, []int{4}, []byte{1, 2, 3, 4}, modelbuild.Quant(1, 0))
	bias := b.Const("bias", tensor.Int32, []int{4}, make([]byte, 16))
	y := b.Tensor("y", tensor.Uint8, []int{4}, modelbuild.Quant(1, 0))
	z := b.Tensor("z", tensor.Int32, []int{4})
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, w}, []int{y}, nil)
	b.Op(schema.BuiltinOperatorADD, 1, []int{bias, bias}, []int{z}, nil)
	b.Inputs(x)
	b.Outputs(y, z)
	raw := b.Bytes()
	mem := make([]byte, len(raw)+32)
	for off := range 16 {
		data := mem[off : off+len(raw) : off+len(raw)]
		copy(data, raw)
		m, err := New(data)
		if err != nil {
			t.Fatal(err)
		}
		sg := m.Subgraph(0)
		wb, bb := m.Buffer(sg.Tensor(w).Buffer), m.Buffer(sg.Tensor(bias).Buffer)
		lo, hi := uintptr(unsafe.Pointer(&data[0])), uintptr(unsafe.Pointer(&data[len(data)-1]))
		if p := uintptr(unsafe.Pointer(&wb[0])); p < lo || p > hi {
			t.Errorf("offset %d: the uint8 constant was copied", off)
		}
		if p := uintptr(unsafe.Pointer(&bb[0])); p%4 != 0 {
			t.Errorf("offset %d: the int32 constant is at %#x, not 4-byte aligned", off, p)
		}
	}
}
