package tune

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/delego/delego/core"
	"github.com/delego/delego/tensor"
)

// Accuracy is how far one output of a candidate is from delego's CPU
// kernels' on the same inputs.
type Accuracy struct {
	// Output is the output's position; Name its tensor's name.
	Output int
	Name   string
	// Float tells which of the two figures applies: MaxRelativeError for a
	// FLOAT32 output, MaxSteps for an integer one.
	Float            bool
	MaxSteps         int64
	MaxRelativeError float64
	// OK: within the thresholds.
	OK bool
}

// Metric is the figure's BenchmarkMetric name: "output_N_max_steps" or
// "output_N_max_relative_error".
func (a Accuracy) Metric() string {
	if a.Float {
		return fmt.Sprintf("output_%d_max_relative_error", a.Output)
	}
	return fmt.Sprintf("output_%d_max_steps", a.Output)
}

// Value is the figure itself.
func (a Accuracy) Value() float64 {
	if a.Float {
		return a.MaxRelativeError
	}
	return float64(a.MaxSteps)
}

// String says which output it is and how far off it is, in relative error
// or in quantized steps.
func (a Accuracy) String() string {
	if a.Float {
		return fmt.Sprintf("output %d (%s) off by %.3g relative", a.Output, a.Name, a.MaxRelativeError)
	}
	unit := "steps"
	if a.MaxSteps == 1 {
		unit = "step"
	}
	return fmt.Sprintf("output %d (%s) off by %d %s", a.Output, a.Name, a.MaxSteps, unit)
}

// compare measures every output of it against ref.
func compare(it *core.Interpreter, ref [][]byte, th Thresholds) []Accuracy {
	out := make([]Accuracy, len(ref))
	for i, want := range ref {
		t := it.Output(i)
		a := Accuracy{Output: i, Name: t.Name(), Float: t.Type() == tensor.Float32}
		got := t.Data()
		switch {
		case len(got) != len(want):
			a.MaxSteps, a.MaxRelativeError = math.MaxInt64, math.Inf(1)
		case a.Float:
			a.MaxRelativeError = relativeError(got, want)
			a.OK = a.MaxRelativeError <= th.MaxRelativeError
		default:
			a.MaxSteps = maxSteps(t.Type(), got, want)
			a.OK = a.MaxSteps <= th.MaxSteps
		}
		out[i] = a
	}
	return out
}

// relativeError is the largest |got-want| over the largest |want|, of two
// little-endian float32 arrays: +Inf where one is NaN and the other not.
func relativeError(got, want []byte) float64 {
	var diff, scale float64
	for i := 0; i+4 <= len(want); i += 4 {
		g := float64(math.Float32frombits(binary.LittleEndian.Uint32(got[i:])))
		w := float64(math.Float32frombits(binary.LittleEndian.Uint32(want[i:])))
		switch {
		case math.IsNaN(g) && math.IsNaN(w):
			continue
		case math.IsNaN(g) || math.IsNaN(w):
			return math.Inf(1)
		case g != w:
			diff = math.Max(diff, math.Abs(g-w))
		}
		scale = math.Max(scale, math.Abs(w))
	}
	if diff == 0 {
		return 0
	}
	if scale == 0 || math.IsInf(diff, 0) {
		return math.Inf(1)
	}
	return diff / scale
}

// maxSteps is the largest difference between two arrays of an integer
// type, in its steps; an unknown type compares bytes.
func maxSteps(t tensor.DType, got, want []byte) int64 {
	size, read := intReader(t)
	var worst int64
	for i := 0; i+size <= len(want); i += size {
		d := distance(read(got[i:]), read(want[i:]))
		worst = max(worst, d)
	}
	return worst
}

// intReader gives the element size of an integer type and a reader of one
// element as int64.
func intReader(t tensor.DType) (int, func([]byte) int64) {
	switch t {
	case tensor.Int8:
		return 1, func(b []byte) int64 { return int64(int8(b[0])) }
	case tensor.Int16:
		return 2, func(b []byte) int64 { return int64(int16(binary.LittleEndian.Uint16(b))) }
	case tensor.Int32:
		return 4, func(b []byte) int64 { return int64(int32(binary.LittleEndian.Uint32(b))) }
	case tensor.Int64:
		return 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }
	}
	return 1, func(b []byte) int64 { return int64(b[0]) }
}

// distance is |a-b|, at most math.MaxInt64.
func distance(a, b int64) int64 {
	if a < b {
		a, b = b, a
	}
	return int64(min(uint64(a)-uint64(b), math.MaxInt64))
}
