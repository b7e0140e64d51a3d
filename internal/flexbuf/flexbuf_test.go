package flexbuf

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// flexSmallMap is {"a": 7, "bb": -2} written by hand following the
// FlexBuffers spec, all widths 1:
//
//	0  'a' 0              key "a"
//	2  'b' 'b' 0          key "bb"
//	5  2                  keys vector size
//	6  6 5                offsets back to the keys (6-0, 7-2)
//	8  2                  offset back to the keys vector (8-6)
//	9  1                  keys byte width
//	10 2                  values size
//	11 7 0xFE             values (int8 7, -2)
//	13 4 4                types: FBT_INT<<2 | width 8 bits
//	15 4                  root: offset back to the values (15-11)
//	16 0x24               root type: FBT_MAP<<2 | width 1
//	17 1                  root byte width
var flexSmallMap = []byte{'a', 0, 'b', 'b', 0, 2, 6, 5, 2, 1, 2, 7, 0xFE, 4, 4, 4, 0x24, 1}

// flexWideMap is {"f": 0.5 (float32), "s": "hi", "t": true, "u": 300
// (uint16)} with 4-byte values, also by hand:
//
//	0  "f\0s\0t\0u\0"     keys
//	8  2 'h' 'i' 0        string "hi" (size prefix 1 byte)
//	12 4 13 12 11 10      keys vector (size 4, offsets back to the keys)
//	17 0 0 0              padding to align the 4-byte values
//	20 uint32 7           offset back to the keys vector (20-13)
//	24 uint32 1           keys byte width
//	28 uint32 4           values size
//	32 float32 0.5
//	36 uint32 27          offset back to the string data (36-9)
//	40 uint32 1           true
//	44 uint32 300
//	48 0x0E 0x14 0x68 9   types: FLOAT/32, STRING/8, BOOL/8, UINT/16
//	52 20 0x26 1          root: offset 52-32, FBT_MAP<<2|width 4, root width 1
var flexWideMap = []byte{
	'f', 0, 's', 0, 't', 0, 'u', 0,
	2, 'h', 'i', 0,
	4, 13, 12, 11, 10,
	0, 0, 0,
	7, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0,
	0, 0, 0, 0x3f, 27, 0, 0, 0, 1, 0, 0, 0, 0x2c, 1, 0, 0,
	0x0e, 0x14, 0x68, 9,
	20, 0x26, 1,
}

func flexMapOf(t *testing.T, buf []byte) Mapping {
	t.Helper()
	root, err := Parse(buf)
	if err != nil {
		t.Fatal(err)
	}
	if root.Type() != Map {
		t.Fatalf("root type %d, want map", root.Type())
	}
	m, err := root.Map()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFlexSmallMap(t *testing.T) {
	m := flexMapOf(t, flexSmallMap)
	if m.Len() != 2 {
		t.Fatalf("len %d", m.Len())
	}
	for i, want := range []string{"a", "bb"} {
		k, err := m.Key(i)
		if err != nil || k != want {
			t.Errorf("key %d = %q, %v; want %q", i, k, err, want)
		}
	}
	for key, want := range map[string]int64{"a": 7, "bb": -2} {
		v, err := m.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.Int()
		if err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", key, got, err, want)
		}
		f, _ := v.Float()
		if f != float64(want) {
			t.Errorf("%s as float = %g", key, f)
		}
	}
	v, err := m.Get("missing")
	if err != nil || !v.IsNull() {
		t.Errorf("missing key: %v, %v", v.Type(), err)
	}
	if i, _ := v.Int(); i != 0 {
		t.Errorf("null as int = %d", i)
	}
	for _, k := range []string{"", "A", "b", "bbb", "c"} {
		if v, _ := m.Get(k); !v.IsNull() {
			t.Errorf("Get(%q) found a value", k)
		}
	}
}

func TestFlexWideMap(t *testing.T) {
	m := flexMapOf(t, flexWideMap)
	get := func(k string) Value {
		v, err := m.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if f, err := get("f").Float(); err != nil || f != 0.5 {
		t.Errorf("f = %g, %v", f, err)
	}
	if i, _ := get("f").Int(); i != 0 {
		t.Errorf("0.5 as int = %d, want 0 (truncated)", i)
	}
	if s, err := get("s").Str(); err != nil || s != "hi" {
		t.Errorf("s = %q, %v", s, err)
	}
	if b, err := get("s").Blob(); err != nil || string(b) != "hi" {
		t.Errorf("s as blob = %q, %v", b, err)
	}
	if b, err := get("t").Bool(); err != nil || !b {
		t.Errorf("t = %v, %v", b, err)
	}
	if i, _ := get("t").Int(); i != 1 {
		t.Errorf("true as int = %d", i)
	}
	if u, err := get("u").Uint(); err != nil || u != 300 {
		t.Errorf("u = %d, %v", u, err)
	}
	if b, _ := get("u").Bool(); !b {
		t.Error("300 as bool is false")
	}
	if f, _ := get("u").Float(); f != 300 {
		t.Errorf("u as float = %g", f)
	}
	// The map's values as a vector.
	root, _ := Parse(flexWideMap)
	vec, err := root.Vector()
	if err != nil || vec.Len() != 4 {
		t.Fatalf("values vector: %d, %v", vec.Len(), err)
	}
	if v, _ := vec.At(4); !v.IsNull() {
		t.Error("element past the end is not null")
	}
	if n, _ := root.Int(); n != 0 {
		t.Errorf("map as int = %d, want 0", n)
	}
}

// TestFlexScalars reads single root values: a buffer holding just one
// scalar is the value, its packed type and the root width.
func TestFlexScalars(t *testing.T) {
	f64 := make([]byte, 8)
	binary.LittleEndian.PutUint64(f64, math.Float64bits(-2.75))
	cases := []struct {
		name  string
		buf   []byte
		i     int64
		u     uint64
		f     float64
		b     bool
		isNil bool
	}{
		{"int8", []byte{0xFB, 1 << 2, 1}, -5, math.MaxUint64 - 4, -5, true, false},
		{"uint16", []byte{0x34, 0x12, 2<<2 | 1, 2}, 0x1234, 0x1234, 0x1234, true, false},
		{"float64", append(f64, 3<<2|3, 8), -2, math.MaxUint64 - 1, -2.75, true, false},
		{"bool false", []byte{0, 26 << 2, 1}, 0, 0, 0, false, false},
		{"null", []byte{0, 0, 1}, 0, 0, 0, false, true},
		// An indirect int: the value (int16 -300) sits before the slot
		// that points back at it.
		{"indirect int", []byte{0xD4, 0xFE, 2, 6<<2 | 1, 1}, -300, math.MaxUint64 - 299, -300, true, false},
		// A 1-byte "float" is read as a signed integer, as in the C++ reader.
		{"float8", []byte{0xFE, 3 << 2, 1}, -2, math.MaxUint64 - 1, -2, true, false},
	}
	for _, c := range cases {
		v, err := Parse(c.buf)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		i, err1 := v.Int()
		u, err2 := v.Uint()
		f, err3 := v.Float()
		b, err4 := v.Bool()
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if i != c.i || u != c.u || f != c.f || b != c.b || v.IsNull() != c.isNil {
			t.Errorf("%s: got %d %d %g %v null=%v, want %d %d %g %v %v", c.name, i, u, f, b, v.IsNull(), c.i, c.u, c.f, c.b, c.isNil)
		}
	}
}

func TestFlexTypedVectors(t *testing.T) {
	// A typed vector of int16 [1, -1, 300]: 2-byte size prefix, elements,
	// then the root slot pointing back (8-2) at the first element.
	buf := []byte{3, 0, 1, 0, 0xFF, 0xFF, 0x2C, 0x01, 6, 11<<2 | 1, 1}
	v, err := Parse(buf)
	if err != nil {
		t.Fatal(err)
	}
	vec, err := v.Vector()
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for i := 0; i < vec.Len(); i++ {
		e, err := vec.At(i)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := e.Int()
		got = append(got, n)
	}
	if !slices.Equal(got, []int64{1, -1, 300}) {
		t.Errorf("typed vector = %v", got)
	}
	// A fixed-length float32 pair (FBT_VECTOR_FLOAT2): no size prefix.
	buf = make([]byte, 8)
	binary.LittleEndian.PutUint32(buf, math.Float32bits(1.5))
	binary.LittleEndian.PutUint32(buf[4:], math.Float32bits(-4))
	buf = append(buf, 8, 18<<2|2, 1)
	v, _ = Parse(buf)
	vec, err = v.Vector()
	if err != nil || vec.Len() != 2 {
		t.Fatalf("fixed vector: %d, %v", vec.Len(), err)
	}
	e0, _ := vec.At(0)
	e1, _ := vec.At(1)
	f0, _ := e0.Float()
	f1, _ := e1.Float()
	if f0 != 1.5 || f1 != -4 {
		t.Errorf("fixed vector = %g, %g", f0, f1)
	}
}

func TestFlexMalformed(t *testing.T) {
	bad := map[string][]byte{
		"empty":               {},
		"too short":           {0, 1},
		"root width 3":        {0, 0, 0, 0, 4, 3},
		"root wider than buf": {0, 4, 8},
		"offset before start": {0, 0, 200, 0x24, 1},
	}
	k := slices.Clone(flexSmallMap)
	k[1], k[4] = 'x', 'x' // no key is NUL-terminated any more
	bad["keys not terminated"] = k
	s := slices.Clone(flexSmallMap)
	s[10] = 200 // values size
	bad["size past end"] = s
	c := slices.Clone(flexSmallMap)
	c[5] = 1 // keys vector of 1 for 2 values
	bad["keys count"] = c
	w := slices.Clone(flexSmallMap)
	w[9] = 3
	bad["keys width 3"] = w
	o := slices.Clone(flexSmallMap)
	o[8] = 50 // keys vector offset before the buffer
	bad["keys offset"] = o
	for name, buf := range bad {
		root, err := Parse(buf)
		if err == nil {
			var m Mapping
			m, err = root.Map()
			if err == nil {
				_, err = m.Get("a")
				if err == nil {
					_, err = m.Key(0)
				}
			}
		}
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: error %v does not wrap ErrMalformed", name, err)
		}
	}
}

// TestFlexNoPanic feeds truncated and corrupted buffers through every
// accessor: they may give errors or values, never panic.
func TestFlexNoPanic(t *testing.T) {
	var walk func(v Value, depth int)
	walk = func(v Value, depth int) {
		v.Int()
		v.Uint()
		v.Float()
		v.Bool()
		v.Str()
		v.Blob()
		if depth > 3 {
			return
		}
		if m, err := v.Map(); err == nil {
			for i := 0; i < min(m.Len(), 8); i++ {
				m.Key(i)
				if e, err := m.Value(i); err == nil {
					walk(e, depth+1)
				}
			}
			m.Get("u")
		}
		if vec, err := v.Vector(); err == nil {
			for i := 0; i < min(vec.Len(), 8); i++ {
				if e, err := vec.At(i); err == nil {
					walk(e, depth+1)
				}
			}
		}
	}
	r := rand.New(rand.NewSource(1))
	for _, base := range [][]byte{flexSmallMap, flexWideMap} {
		for n := 0; n <= len(base); n++ {
			if v, err := Parse(base[:n]); err == nil {
				walk(v, 0)
			}
		}
		for i := 0; i < 2000; i++ {
			buf := slices.Clone(base)
			for j := 0; j < 1+r.Intn(4); j++ {
				buf[r.Intn(len(buf))] = byte(r.Intn(256))
			}
			if v, err := Parse(buf); err == nil {
				walk(v, 0)
			}
		}
	}
}
