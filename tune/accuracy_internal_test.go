package tune

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/tensor"
)

func floats(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func TestRelativeError(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name      string
		got, want []byte
		rel       float64
	}{
		{"equal", floats(1, -2, 0), floats(1, -2, 0), 0},
		{"scaled by the largest", floats(1, -2.5, 0), floats(1, -2, 0), 0.25},
		{"both NaN", floats(nan, 1), floats(nan, 1), 0},
		{"NaN for a number", floats(nan, 1), floats(0, 1), math.Inf(1)},
		{"all zero reference", floats(0, 1e-30), floats(0, 0), math.Inf(1)},
	}
	for _, c := range cases {
		if got := relativeError(c.got, c.want); got != c.rel {
			t.Errorf("%s: %g, want %g", c.name, got, c.rel)
		}
	}
}

func TestMaxSteps(t *testing.T) {
	i64 := func(v ...int64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		}
		return b
	}
	cases := []struct {
		name      string
		typ       tensor.DType
		got, want []byte
		steps     int64
	}{
		{"uint8", tensor.Uint8, []byte{0, 255, 7}, []byte{3, 250, 7}, 5},
		{"int8 across zero", tensor.Int8, []byte{0x7f}, []byte{0x80}, 255},
		{"int16", tensor.Int16, []byte{0x00, 0x01}, []byte{0xff, 0xff}, 257},
		{"int64 extremes", tensor.Int64, i64(math.MaxInt64), i64(math.MinInt64), math.MaxInt64},
	}
	for _, c := range cases {
		if got := maxSteps(c.typ, c.got, c.want); got != c.steps {
			t.Errorf("%s: %d, want %d", c.name, got, c.steps)
		}
	}
}

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	if m, p := quantile(ds, 0.5), quantile(ds, 0.9); m != 5 || p != 9 {
		t.Errorf("median %d, p90 %d; want 5, 9", m, p)
	}
	if quantile(nil, 0.5) != 0 || quantile(ds[:1], 0.9) != 5 {
		t.Error("empty or single")
	}
}

func TestChoose(t *testing.T) {
	ok := func(name string, ms ...time.Duration) *Candidate {
		c := &Candidate{Name: name, Accuracy: []Accuracy{{OK: true}}, Delegated: 3, Nodes: 3}
		for _, d := range ms {
			c.Times = append(c.Times, d*time.Millisecond)
		}
		return c
	}
	wrong := ok("wrong", 1)
	wrong.Accuracy[0].OK = false
	cs := []*Candidate{wrong, ok("slow", 9, 9, 9), ok("fast", 2, 3, 2), ok("tie", 2, 2, 3)}
	if i, reason := choose(cs); i != 2 {
		t.Errorf("chose %d (%s), want 2 (fast, listed before its tie)", i, reason)
	}
	if i, _ := choose(cs[:1]); i != -1 {
		t.Errorf("chose %d among wrong ones", i)
	}

	// The fastest, correct, but its delegate ran nothing: never chosen.
	idle := ok("idle", 1, 1, 1)
	idle.Delegated = 0
	if i, reason := choose(append([]*Candidate{idle}, cs...)); i != 3 {
		t.Errorf("chose %d (%s), want 3 (fast), not idle", i, reason)
	}
	if i, reason := choose([]*Candidate{idle}); i != -1 || !strings.Contains(reason, "delegating no node") {
		t.Errorf("chose %d (%s) with only an idle candidate, want none, saying why", i, reason)
	}
}
