package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TestConstantStrings: a constant STRING tensor's buffer is read as it is,
// and one that is not a well-formed string buffer of one string per element
// is a malformed model, the error naming the tensor and what is wrong.
func TestConstantStrings(t *testing.T) {
	build := func(data []byte) []byte {
		b := modelbuild.New()
		c := b.Const("words", tensor.String, []int{2}, data)
		out := b.Tensor("out", tensor.String, []int{2})
		b.Op(schema.BuiltinOperatorRESHAPE, 1, []int{c}, []int{out}, nil)
		b.Outputs(out)
		return b.Bytes()
	}
	good := tensor.EncodeStrings([]string{"hello", "wörld"})
	m, err := New(build(good))
	if err != nil {
		t.Fatal(err)
	}
	info := m.Subgraph(0).Tensors()[0]
	s, err := tensor.ParseStrings(m.Buffer(info.Buffer))
	if err != nil || s.String(0) != "hello" || s.String(1) != "wörld" {
		t.Fatalf("constant strings read back as %q, %v", s.All(), err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"wrong count", tensor.EncodeStrings([]string{"a", "b", "c"}), "tensor 0: buffer 1 holds 3 strings; shape [2] needs 2"},
		{"offset past the end", good[:len(good)-1], "tensor 0: buffer 1: string buffer's offset 2 (27) is past its end (26 bytes)"},
		{"short", []byte{1, 0}, "tensor 0: buffer 1: string buffer of 2 bytes has no room for its 4-byte count"},
	} {
		_, err := New(build(c.data))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a malformed model saying %q", c.name, err, c.want)
		}
	}
}
