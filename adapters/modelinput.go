package adapters

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/delego/delego/internal/fileio"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// IOTensor is one of a model's graph inputs or outputs, as the model
// declares it.
type IOTensor struct {
	Pos   int              // its position in the subgraph's input or output list
	Index int              // its tensor index in the subgraph
	Info  model.TensorInfo // its name, type, shape and quantization
}

// Bytes is the tensor's size in bytes, or -1 when its type has no fixed
// size.
func (t IOTensor) Bytes() int {
	if t.Info.Type.Size() == 0 {
		return -1
	}
	return tensor.NumElements(t.Info.Shape) * t.Info.Type.Size()
}

// Describe names the tensor for messages, kind being "input" or "output":
// `input 0 (tensor 88 "input", UINT8 [1,128,128,3])`.
func (t IOTensor) Describe(kind string) string {
	return fmt.Sprintf("%s %d (tensor %d %q, %s %s)", kind, t.Pos, t.Index, t.Info.Name, t.Info.Type, tensor.FormatShape(t.Info.Shape))
}

// ModelInputs lists the inputs of m's primary subgraph, in order.
func ModelInputs(m *model.Model) []IOTensor { return ioTensors(m, m.Subgraph(0).Inputs()) }

// ModelOutputs lists the outputs of m's primary subgraph, in order.
func ModelOutputs(m *model.Model) []IOTensor { return ioTensors(m, m.Subgraph(0).Outputs()) }

// ioTensors describes the tensors idx of m's primary subgraph.
func ioTensors(m *model.Model, idx []int) []IOTensor {
	sg := m.Subgraph(0)
	out := make([]IOTensor, len(idx))
	for i, ti := range idx {
		out[i] = IOTensor{Pos: i, Index: ti, Info: sg.Tensor(ti)}
	}
	return out
}

// InputCountError is ReadInputs given another number of files than the
// model has inputs.
type InputCountError struct {
	Inputs []IOTensor // the model's inputs
	Files  int        // the number of files given
}

// Names lists the inputs' names, quoted, in order: `"a", "b"`.
func (e *InputCountError) Names() string {
	names := make([]string, len(e.Inputs))
	for i, t := range e.Inputs {
		names[i] = fmt.Sprintf("%q", t.Info.Name)
	}
	return strings.Join(names, ", ")
}

// Error says how many inputs the model needs, which, and how many files
// were given.
func (e *InputCountError) Error() string {
	return fmt.Sprintf("the model needs %d input files (%s, in that order), got %d", len(e.Inputs), e.Names(), e.Files)
}

// ReadInputs reads one file of raw little-endian bytes per input of m, in
// m's input order, and checks every size before it returns: a count that
// does not match is an *InputCountError, a file of another size an error
// that names the input and both sizes. ctx stops a read that waits (a
// FIFO).
func ReadInputs(ctx context.Context, m *model.Model, files []string) ([][]byte, error) {
	ins := ModelInputs(m)
	if len(files) != len(ins) {
		return nil, &InputCountError{Inputs: ins, Files: len(files)}
	}
	data := make([][]byte, len(ins))
	for i, t := range ins {
		if t.Info.Type == tensor.String {
			b, err := ReadStrings(ctx, files[i], tensor.NumElements(t.Info.Shape), m.MaxTensorBytes())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Describe("input"), err)
			}
			data[i] = b
			continue
		}
		want := t.Bytes()
		if want < 0 {
			return nil, fmt.Errorf("%s: raw input files are not supported for %s tensors", t.Describe("input"), t.Info.Type)
		}
		b, err := ReadInput(ctx, files[i], want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Describe("input"), err)
		}
		data[i] = b
	}
	return data, nil
}

// ReadInput reads the want bytes of the file at path. A regular file of
// another size is refused from its size, without being read; anything
// else (a FIFO, a device) is read no further than want+1 bytes.
func ReadInput(ctx context.Context, path string, want int) ([]byte, error) {
	f, err := fileio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() && fi.Size() != int64(want) {
		return nil, fmt.Errorf("file %s is %d bytes long; the tensor needs %d", path, fi.Size(), want)
	}
	b, err := fileio.ReadAll(f, path, int64(want))
	if _, ok := errors.AsType[*fileio.TooLargeError](err); ok {
		return nil, fmt.Errorf("%s gave more than %d bytes; the tensor needs %d", path, want, want)
	}
	if err == nil && len(b) != want {
		err = fmt.Errorf("%s gave %d bytes; the tensor needs %d", path, len(b), want)
	}
	return b, err
}

// ReadStrings reads the want strings of a STRING input from the file at
// path, of at most limit bytes, and returns them as TFLite's string buffer.
// A file whose name ends in ".json" holds a JSON list of strings; any other
// is text with one string per line: lines end at "\n" (a "\r" before it
// is dropped), the last one's newline is optional, and an empty file holds
// no strings.
func ReadStrings(ctx context.Context, path string, want int, limit int64) ([]byte, error) {
	f, err := fileio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := fileio.ReadAll(f, path, limit)
	if err != nil {
		return nil, err
	}
	var values []string
	form := "one per line"
	if strings.HasSuffix(path, ".json") {
		form = "in its JSON list"
		if err := json.Unmarshal(b, &values); err != nil {
			return nil, fmt.Errorf("file %s is not a JSON list of strings: %w", path, err)
		}
	} else if len(b) > 0 {
		values = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		for i, v := range values {
			values[i] = strings.TrimSuffix(v, "\r")
		}
	}
	if len(values) != want {
		return nil, fmt.Errorf("file %s holds %d strings (%s); the tensor needs %d", path, len(values), form, want)
	}
	return tensor.EncodeStrings(values), nil
}

// RandomInputs fills every input of m deterministically from seed with the
// golden data's generator: a 32-bit LCG (state = state*1664525 +
// 1013904223), one step per byte giving state>>24, and for FLOAT32 one step
// per element giving (state>>8)/2^24*2-1 in [-1,1). BOOL bytes are reduced
// to 0 or 1. With seed 1 the bytes equal the golden "seed1" inputs.
func RandomInputs(m *model.Model, seed uint32) ([][]byte, error) {
	state := seed
	next := func() uint32 {
		state = state*1664525 + 1013904223
		return state
	}
	ins := ModelInputs(m)
	data := make([][]byte, len(ins))
	for i, t := range ins {
		n := t.Bytes()
		if n < 0 {
			return nil, fmt.Errorf("%s: cannot make random values for %s tensors", t.Describe("input"), t.Info.Type)
		}
		b := make([]byte, n)
		switch t.Info.Type {
		case tensor.Float32:
			for j := 0; j < n; j += 4 {
				v := float32(float64(next()>>8)/(1<<24)*2 - 1)
				binary.LittleEndian.PutUint32(b[j:], math.Float32bits(v))
			}
		case tensor.Bool:
			for j := range b {
				b[j] = byte(next()>>24) & 1
			}
		default:
			for j := range b {
				b[j] = byte(next() >> 24)
			}
		}
		data[i] = b
	}
	return data, nil
}
