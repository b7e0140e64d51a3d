package tensor

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

func le32(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// TestEncodeStringsLayout checks the encoder against the layout worked by
// hand: count, offsets from the buffer's start, then the bytes.
func TestEncodeStringsLayout(t *testing.T) {
	got := EncodeStrings([]string{"ab", "", "xyz"})
	want := append(le32(3, 20, 22, 22, 25), "abxyz"...)
	if !slices.Equal(got, want) {
		t.Fatalf("EncodeStrings = %v, want %v", got, want)
	}
	if got := EncodeStrings(nil); !slices.Equal(got, le32(0, 8)) {
		t.Fatalf("EncodeStrings(nil) = %v, want %v", got, le32(0, 8))
	}
}

func TestParseStringsRoundTrip(t *testing.T) {
	for _, values := range [][]string{nil, {""}, {"a"}, {"héllo", "", "wörld", strings.Repeat("z", 300)}} {
		s, err := ParseStrings(EncodeStrings(values))
		if err != nil {
			t.Fatalf("%q: %v", values, err)
		}
		if got := s.All(); s.Len() != len(values) || !slices.Equal(got, append([]string{}, values...)) {
			t.Errorf("round trip of %q = %q", values, got)
		}
	}
	// TFLite reads a buffer with bytes past its last string.
	s, err := ParseStrings(append(EncodeStrings([]string{"ab"}), 0, 0))
	if err != nil || s.String(0) != "ab" {
		t.Errorf("buffer with trailing bytes: %q, %v", s.All(), err)
	}
}

func TestParseStringsNamesWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		name string
		buf  []byte
		want string
	}{
		{"empty", nil, "0 bytes has no room for its 4-byte count"},
		{"negative count", le32(-1, 8), "count is negative (-1)"},
		{"count past the end", le32(5, 8), "count 5 needs a 28-byte header, but the buffer has 8 bytes"},
		{"offset past the end", append(le32(1, 12, 40), 'a'), "offset 1 (40) is past its end (13 bytes)"},
		{"offset into the header", append(le32(1, 4, 13), 'a'), "offset 0 (4) points into its 12-byte header"},
		{"out of order", append(le32(2, 16, 18, 17), "abc"...), "out of order: offset 2 (17) is below offset 1 (18)"},
	} {
		_, err := ParseStrings(c.buf)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

func TestTensorStrings(t *testing.T) {
	x := &Tensor{Name: "words", Type: String}
	x.SetStrings([]int{2, 2}, func(i int) []byte { return []byte{'a' + byte(i)} })
	s, err := x.Strings()
	if err != nil || !slices.Equal(s.All(), []string{"a", "b", "c", "d"}) || !slices.Equal(x.Shape, []int{2, 2}) {
		t.Fatalf("after SetStrings: %q %v, %v", s.All(), x.Shape, err)
	}
	// SetStrings reuses the memory it has when the new buffer fits.
	before := &x.Data[0]
	x.SetStrings([]int{1}, func(int) []byte { return []byte("q") })
	if &x.Data[0] != before {
		t.Error("SetStrings reallocated a buffer that was large enough")
	}
	x.Shape = []int{3}
	if _, err := x.Strings(); err == nil || !strings.Contains(err.Error(), `STRING tensor "words" holds 1 strings, but its shape [3] has 3 elements`) {
		t.Errorf("count/shape mismatch: %v", err)
	}
	if _, err := NewTensor(Int32, 1).Strings(); err == nil || !strings.Contains(err.Error(), "is INT32, not STRING") {
		t.Errorf("INT32 tensor: %v", err)
	}
	bad := &Tensor{Name: "w", Type: String, Shape: []int{1}}
	if _, err := bad.Strings(); err == nil || !strings.Contains(err.Error(), `STRING tensor "w": string buffer of 0 bytes`) {
		t.Errorf("unwritten tensor: %v", err)
	}
}
