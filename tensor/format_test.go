package tensor

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

func TestFormatShape(t *testing.T) {
	for _, c := range []struct {
		shape []int
		want  string
	}{{nil, "[]"}, {[]int{}, "[]"}, {[]int{1, 224, 224, 3}, "[1,224,224,3]"}, {[]int{7}, "[7]"}} {
		if got := FormatShape(c.shape); got != c.want {
			t.Errorf("FormatShape(%#v) = %q, want %q", c.shape, got, c.want)
		}
	}
}

func TestFormatValues(t *testing.T) {
	f32 := make([]byte, 12)
	for i, v := range []float32{1.5, float32(math.NaN()), -0.25} {
		binary.LittleEndian.PutUint32(f32[4*i:], math.Float32bits(v))
	}
	for _, c := range []struct {
		typ  DType
		data []byte
		n    int
		want string
	}{
		{Float32, f32, 10, "1.5 NaN -0.25"},
		{Float32, f32, 2, "1.5 NaN ..."},
		{Uint8, []byte{0, 255}, 10, "0 255"},
		{Int8, []byte{0x80, 127}, 10, "-128 127"},
		{Bool, []byte{0, 1}, 10, "false true"},
		{Int16, []byte{0xff, 0xff}, 10, "-1"},
		{Int32, []byte{0xfe, 0xff, 0xff, 0xff}, 10, "-2"},
		{Uint32, []byte{0xff, 0xff, 0xff, 0xff}, 10, "4294967295"},
		{Int64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 10, "-1"},
		{Uint64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 10, "18446744073709551615"},
		{Float16, []byte{0x00, 0x3c}, 10, "003c"},
		{String, []byte("abc"), 10, "(3 bytes of STRING)"},
		{Uint8, nil, 10, ""},
	} {
		if got := FormatValues(c.typ, c.data, c.n); got != c.want {
			t.Errorf("FormatValues(%s, %v, %d) = %q, want %q", c.typ, c.data, c.n, got, c.want)
		}
	}
}

func TestFormatFloats(t *testing.T) {
	if got, want := FormatFloats([]float32{1.0 / 3, 2, 1e-7}, 2), "0.333333 2 ..."; got != want {
		t.Errorf("FormatFloats = %q, want %q", got, want)
	}
	if got, want := FormatFloats([]float32{0.5}, 2), "0.5"; got != want {
		t.Errorf("FormatFloats = %q, want %q", got, want)
	}
}

func TestFormatQuantization(t *testing.T) {
	for _, c := range []struct {
		q    *Quantization
		want string
	}{
		{nil, "-"},
		{&Quantization{Scale: []float32{0.0078125}, ZeroPoint: []int64{128}}, "scale 0.0078125 zp 128"},
		{&Quantization{Scale: []float32{0.5}}, "scale 0.5 zp 0"},
		{&Quantization{Scale: []float32{0.1, 0.2, 0.3, 0.4, 0.5}, ZeroPoint: []int64{0, 0, 0, 0, 0}, Axis: 3},
			"per-channel axis 3: 5 scales [0.1 0.2 0.3 ... 0.5] zps [0 (all 5)]"},
		{&Quantization{Scale: []float32{0.1, 0.2}, ZeroPoint: []int64{1, 2}},
			"per-channel axis 0: 2 scales [0.1 0.2] zps [1 2]"},
	} {
		if got := FormatQuantization(c.q, 4); got != c.want {
			t.Errorf("FormatQuantization(%+v) = %q, want %q", c.q, got, c.want)
		}
	}
}

// TestFormatStrings: STRING data shows its strings, quoted and cut at 40
// bytes; data that is no string buffer shows its size.
func TestFormatStrings(t *testing.T) {
	data := EncodeStrings([]string{"a", "tab\there", strings.Repeat("x", 45)})
	want := `"a" "tab\there" "` + strings.Repeat("x", 40) + `"...`
	if got := FormatValues(String, data, 10); got != want {
		t.Errorf("FormatValues = %s, want %s", got, want)
	}
	if got := FormatValues(String, data, 1); got != `"a" ...` {
		t.Errorf("FormatValues of 1 = %s", got)
	}
	if got := FormatValues(String, []byte{1, 2}, 10); got != "(2 bytes of STRING)" {
		t.Errorf("FormatValues of a broken buffer = %s", got)
	}
}
