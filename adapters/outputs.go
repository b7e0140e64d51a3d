package adapters

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// Output is an output tensor as OutputValues and WriteOutputs read it: its
// values, name, type, bytes and quantization. *core.Tensor satisfies it.
type Output interface {
	Tensor
	// Name is the tensor's name in the model.
	Name() string
	// Type is its element type.
	Type() tensor.DType
	// Data is its little-endian bytes.
	Data() []byte
	// Quantization is its scale and zero point; nil when it has none.
	Quantization() *tensor.Quantization
}

// OutputValues is one output tensor with every value, as "delego run
// --json" prints it. Values that JSON cannot hold as numbers are written
// as strings: the floats NaN, Inf and -Inf as "NaN", "Inf" and "-Inf",
// data without a number form (STRING, the complex types) as hex bytes.
type OutputValues struct {
	Index        int                 `json:"index"`                  // the output's position
	Name         string              `json:"name"`                   // the tensor's name
	Type         string              `json:"type"`                   // its element type, as "UINT8"
	Shape        []int               `json:"shape"`                  // its shape after Invoke
	Quantization *model.QuantSummary `json:"quantization,omitempty"` // nil without scales
	Values       json.RawMessage     `json:"values"`                 // every element (BOOL: true, false)
	// Dequantized are the values through the scale and zero point, for a
	// quantized tensor that is not FLOAT32.
	Dequantized json.RawMessage `json:"dequantized,omitempty"`
}

// ValuesOf describes every one of outs, with all its values, as it is
// after Invoke.
func ValuesOf(outs []Output) []OutputValues {
	vs := make([]OutputValues, len(outs))
	for i, t := range outs {
		o := OutputValues{Index: i, Name: t.Name(), Type: t.Type().String(), Shape: t.Shape(), Values: valuesJSON(t.Type(), t.Data())}
		if o.Shape == nil {
			o.Shape = []int{}
		}
		if q := t.Quantization(); q != nil && len(q.Scale) > 0 {
			o.Quantization = &model.QuantSummary{Scale: q.Scale, ZeroPoint: q.ZeroPoint, Axis: q.Axis, PerChannel: q.PerChannel()}
			if t.Type() != tensor.Float32 {
				if v := t.Dequantize(); v != nil {
					o.Dequantized = floatsJSON(v)
				}
			}
		}
		vs[i] = o
	}
	return vs
}

// WriteOutputs writes a summary of each of outs to w: its index, name,
// type, shape and quantization, its first 10 values and, for a quantized
// tensor, its first 10 dequantized values.
func WriteOutputs(w io.Writer, outs []Output) error {
	var b strings.Builder
	for i, t := range outs {
		fmt.Fprintf(&b, "output %d %q %s %s", i, t.Name(), t.Type(), tensor.FormatShape(t.Shape()))
		if q := t.Quantization(); q != nil {
			fmt.Fprintf(&b, " (%s)", tensor.FormatQuantization(q, 4))
		}
		fmt.Fprintf(&b, "\n  values:      %s\n", tensor.FormatValues(t.Type(), t.Data(), 10))
		if q := t.Quantization(); q != nil && len(q.Scale) > 0 {
			if v := t.Dequantize(); v != nil {
				fmt.Fprintf(&b, "  dequantized: %s\n", tensor.FormatFloats(v, 10))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteRaw writes the bytes of every one of outs to w, concatenated in
// order (a STRING output's bytes are TFLite's string buffer), and returns
// how many it wrote.
func WriteRaw(w io.Writer, outs []Output) (int, error) {
	n := 0
	for _, t := range outs {
		k, err := w.Write(t.Data())
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// valuesJSON writes little-endian tensor data as a JSON array of numbers
// (booleans for BOOL; for STRING, its strings, where bytes that are not
// UTF-8 become U+FFFD); data of a type without a fixed size or without a
// number form (complex), or STRING data that is no string buffer, is a
// string of hex bytes.
func valuesJSON(typ tensor.DType, data []byte) json.RawMessage {
	if typ == tensor.String {
		if s, err := tensor.ParseStrings(data); err == nil {
			b, _ := json.Marshal(s.All()) // strings always marshal
			return b
		}
	}
	size := typ.Size()
	if size == 0 || typ == tensor.Complex64 || typ == tensor.Complex128 {
		return json.RawMessage(strconv.Quote(fmt.Sprintf("%x", data)))
	}
	le := binary.LittleEndian
	b := []byte{'['}
	for i := 0; i+size <= len(data); i += size {
		if i > 0 {
			b = append(b, ',')
		}
		e := data[i : i+size]
		switch typ {
		case tensor.Float32:
			b = appendFloat(b, float64(math.Float32frombits(le.Uint32(e))), 32)
		case tensor.Float64:
			b = appendFloat(b, math.Float64frombits(le.Uint64(e)), 64)
		case tensor.Float16:
			b = appendFloat(b, float64(tensor.Float16ToFloat32(le.Uint16(e))), 32)
		default:
			b = append(b, tensor.FormatValue(typ, e)...)
		}
	}
	return append(b, ']')
}

// floatsJSON writes float32 values as a JSON array.
func floatsJSON(v []float32) json.RawMessage {
	b := []byte{'['}
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, float64(f), 32)
	}
	return append(b, ']')
}

// appendFloat appends f in its shortest form for its precision, or as the
// string "NaN", "Inf" or "-Inf".
func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// TensorOutputs are ts as Outputs: tensors held apart from an interpreter,
// such as the outputs a pipeline pops.
func TensorOutputs(ts []*tensor.Tensor) []Output {
	outs := make([]Output, len(ts))
	for i, t := range ts {
		outs[i] = tensorOutput{t}
	}
	return outs
}

// tensorOutput is a *tensor.Tensor as an Output.
type tensorOutput struct{ t *tensor.Tensor }

func (o tensorOutput) Name() string                       { return o.t.Name }
func (o tensorOutput) Type() tensor.DType                 { return o.t.Type }
func (o tensorOutput) Shape() []int                       { return slices.Clone(o.t.Shape) }
func (o tensorOutput) Data() []byte                       { return o.t.Data }
func (o tensorOutput) Quantization() *tensor.Quantization { return o.t.Quant }
func (o tensorOutput) Dequantize() []float32              { return o.t.Dequantize() }
