package model

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// tinyModel is ADD(in, w) -> out, all quantized, w constant in buffer 1.
func tinyModel() []byte {
	b := modelbuild.New()
	q := modelbuild.Quant(0.5, 1)
	in := b.Tensor("in", tensor.Uint8, []int{1, 4}, q)
	w := b.Const("w", tensor.Uint8, []int{1, 4}, []byte{1, 2, 3, 4}, q)
	out := b.Tensor("out", tensor.Uint8, []int{1, 4}, q)
	b.Op(schema.BuiltinOperatorADD, 1, []int{in, w}, []int{out},
		modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Inputs(in)
	b.Outputs(out)
	return b.Bytes()
}

// fieldAt returns where field slot of tbl is stored in the buffer.
func fieldAt(t *testing.T, tbl flatbuffers.Table, slot int) int {
	t.Helper()
	o := tbl.Offset(flatbuffers.VOffsetT(4 + 2*slot))
	if o == 0 {
		t.Fatalf("slot %d is absent", slot)
	}
	return int(tbl.Pos) + int(o)
}

// target returns where the uoffset stored at pos points.
func target(b []byte, pos int) int { return pos + int(binary.LittleEndian.Uint32(b[pos:])) }

func put32(b []byte, pos, v int) { binary.LittleEndian.PutUint32(b[pos:], uint32(v)) }

// TestStructureMessages breaks one structure of a small model at a time
// and checks the message names it and where it points.
func TestStructureMessages(t *testing.T) {
	good := tinyModel()
	n := len(good)
	fb := schema.GetRootAsModel(good, 0)
	var sg schema.SubGraph
	fb.Subgraphs(&sg, 0)
	var t0, t1 schema.Tensor
	sg.Tensors(&t0, 0)
	sg.Tensors(&t1, 1)
	var op schema.Operator
	sg.Operators(&op, 0)
	var buf schema.Buffer
	fb.Buffers(&buf, 1)

	shape := target(good, fieldAt(t, t1.Table(), 0))
	inputs := fieldAt(t, op.Table(), 1)
	options := fieldAt(t, op.Table(), 4)
	data := target(good, fieldAt(t, buf.Table(), 0))
	quant := target(good, fieldAt(t, t0.Table(), 4))

	for _, c := range []struct {
		name    string
		corrupt func(b []byte)
		want    string
	}{
		{"root offset", func(b []byte) { put32(b, 0, n+8) },
			fmt.Sprintf("malformed model: root table at offset %d is past the end of the %d-byte file", n+8, n)},
		{"shape length", func(b []byte) { put32(b, shape, 1<<24) },
			fmt.Sprintf("malformed model: subgraph 0: tensor 1: shape vector (offset %d, 16777216 elements of 4 bytes) runs past the end of the %d-byte file", shape, n)},
		{"inputs offset", func(b []byte) { put32(b, inputs, n+100-inputs) },
			fmt.Sprintf("malformed model: subgraph 0: op 0: inputs vector at offset %d is past the end of the %d-byte file", n+100, n)},
		{"options offset", func(b []byte) { put32(b, options, n-options) },
			fmt.Sprintf("malformed model: subgraph 0: op 0: builtin_options table (AddOptions) at offset %d is past the end of the %d-byte file", n, n)},
		{"buffer data length", func(b []byte) { put32(b, data, 1<<20) },
			fmt.Sprintf("malformed model: buffer 1: data vector (offset %d, 1048576 bytes) runs past the end of the %d-byte file", data, n)},
		{"quantization vtable", func(b []byte) { put32(b, quant, -2*n) },
			fmt.Sprintf("malformed model: subgraph 0: tensor 0: quantization: table at offset %d has its vtable at offset %d, outside the %d-byte file", quant, quant+2*n, n)},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := slices.Clone(good)
			c.corrupt(b)
			_, err := New(b)
			if err == nil || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s", err, c.want)
			}
			var me *Error
			if !errors.As(err, &me) || !errors.Is(err, ErrMalformed) {
				t.Errorf("%v is not a *Error wrapping ErrMalformed", err)
			}
		})
	}
}

// TestStructureShared: a file whose offsets point at one table over and
// over is refused in bounded work, and says why. Here every one of 100,000
// operator codes is the same table, whose custom_code is a 1000-byte
// string: 400 KB of file that would decode to 100 MB of strings.
func TestStructureShared(t *testing.T) {
	const entries, size = 100_000, 1000
	oc := 36 + 4*entries // the shared OperatorCode table
	b := make([]byte, oc+12+size)
	put32(b, 0, 16) // root table at 16
	copy(b[4:], "TFL3")
	for i, v := range []uint16{8, 8, 0, 4} { // Model vtable: operator_codes at byte 4
		binary.LittleEndian.PutUint16(b[8+2*i:], v)
	}
	put32(b, 16, 16-8)                       // the root table's vtable is at 8
	put32(b, 20, 32-20)                      // operator_codes vector at 32
	for i, v := range []uint16{8, 8, 0, 4} { // OperatorCode vtable: custom_code at byte 4
		binary.LittleEndian.PutUint16(b[24+2*i:], v)
	}
	put32(b, 32, entries)
	for i := range entries {
		put32(b, 36+4*i, oc-(36+4*i))
	}
	put32(b, oc, oc-24)  // the operator code's vtable is at 24
	put32(b, oc+4, 4)    // custom_code string at oc+8
	put32(b, oc+8, size) // its length
	_, err := New(b)
	if err == nil || !strings.Contains(err.Error(), "offsets point at the same tables and vectors so often") {
		t.Fatalf("err = %v", err)
	}
	checkMessage(t, "shared", err.Error())
}

// TestDecodeRecover: the decoder's last-resort recover names the structure
// and says it is malformed, without the runtime's words.
func TestDecodeRecover(t *testing.T) {
	good := tinyModel()
	d := decoder{raw: good[: len(good)/2 : len(good)/2]} // unchecked: the accessors panic
	_, err := d.decode()
	if err == nil {
		t.Fatal("decoded half a model")
	}
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "is malformed in a way the structure checks missed") {
		t.Errorf("err = %v", err)
	}
	checkMessage(t, "decode", err.Error())
}

// TestExtractRecover: Extract's last-resort recover names the operator whose
// table it was reading, without the runtime's words.
func TestExtractRecover(t *testing.T) {
	m, err := New(tinyModel())
	if err != nil {
		t.Fatal(err)
	}
	bad := new(schema.Operator)
	bad.Init([]byte{0x9c, 0xff, 0xff, 0xff}, 0) // vtable 100 bytes on, past the end
	m.subgraphs[0].operators[0].fb = bad
	_, err = m.Extract([]int{0}, []int{0}, []int{2}, nil)
	want := "malformed model: subgraph 0: op 0: table is malformed in a way the structure checks missed (found while extracting a partition)"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	checkMessage(t, "extract", fmt.Sprint(err))
}
