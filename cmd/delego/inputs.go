package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/delego/delego"
	"github.com/delego/delego/core"
	"github.com/delego/delego/internal/fileio"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// ioTensor is a graph input or output as the model declares it.
type ioTensor struct {
	Pos   int // position in the subgraph's input or output list
	Index int // tensor index in the subgraph
	Info  model.TensorInfo
}

// Bytes is the tensor's size in bytes, or -1 when its type has no fixed size.
func (t ioTensor) Bytes() int {
	if t.Info.Type.Size() == 0 {
		return -1
	}
	return tensor.NumElements(t.Info.Shape) * t.Info.Type.Size()
}

// Describe names the tensor for messages: `input 0 (tensor 88 "input", UINT8 [1,128,128,3])`.
func (t ioTensor) Describe(kind string) string {
	return fmt.Sprintf("%s %d (tensor %d %q, %s %s)", kind, t.Pos, t.Index, t.Info.Name, t.Info.Type, tensor.FormatShape(t.Info.Shape))
}

// graphTensors lists the primary subgraph's inputs or outputs.
func graphTensors(m *model.Model, idx []int) []ioTensor {
	sg := m.Subgraph(0)
	out := make([]ioTensor, len(idx))
	for i, ti := range idx {
		out[i] = ioTensor{Pos: i, Index: ti, Info: sg.Tensor(ti)}
	}
	return out
}

func modelInputs(m *model.Model) []ioTensor  { return graphTensors(m, m.Subgraph(0).Inputs()) }
func modelOutputs(m *model.Model) []ioTensor { return graphTensors(m, m.Subgraph(0).Outputs()) }

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// readInputFiles reads one raw file per model input and checks every size
// before anything runs. ctx stops a read that waits (a FIFO).
func readInputFiles(ctx context.Context, m *model.Model, files []string) ([][]byte, error) {
	ins := modelInputs(m)
	if len(files) != len(ins) {
		names := make([]string, len(ins))
		for i, t := range ins {
			names[i] = fmt.Sprintf("%q", t.Info.Name)
		}
		return nil, fmt.Errorf("the model needs %s (%s, in that order), got %s",
			plural(len(ins), "--input file", "--input files"), strings.Join(names, ", "),
			plural(len(files), "file", "files"))
	}
	data := make([][]byte, len(ins))
	for i, t := range ins {
		want := t.Bytes()
		if want < 0 {
			return nil, fmt.Errorf("%s: raw input files are not supported for %s tensors", t.Describe("input"), t.Info.Type)
		}
		b, err := readInput(ctx, files[i], want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Describe("input"), err)
		}
		data[i] = b
	}
	return data, nil
}

// readInput reads the want bytes of the file at path. A regular file of
// another size is refused from its size, without being read; anything
// else (a FIFO, a device) is read no further than want+1 bytes.
func readInput(ctx context.Context, path string, want int) ([]byte, error) {
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

// randomInputs fills every input deterministically from seed with the
// golden data's generator: a 32-bit LCG (state = state*1664525 + 1013904223),
// one step per byte giving state>>24, and for FLOAT32 one step per element
// giving (state>>8)/2^24*2-1 in [-1,1). BOOL bytes are reduced to 0 or 1.
// With seed 1 the bytes equal the golden "seed1" inputs.
func randomInputs(m *model.Model, seed uint32) ([][]byte, error) {
	state := seed
	next := func() uint32 {
		state = state*1664525 + 1013904223
		return state
	}
	ins := modelInputs(m)
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

// openModel opens an interpreter for m with cfg:
// its delegates started, its graph partitioned and compiled, its tensors
// allocated. Its warnings (a CPU twin that does not fit) go to warn. The
// caller closes it, then m.
func openModel(ctx context.Context, cfg *delego.Config, m *model.Model, warn io.Writer) (*delego.Interpreter, error) {
	it, err := cfg.OpenModel(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("create interpreter: %w", err)
	}
	for _, w := range it.Interpreter.Warnings() {
		fmt.Fprintf(warn, "delego: warning: %v\n", w)
	}
	return it, nil
}

// setInputs copies data into the interpreter's inputs.
func setInputs(it *core.Interpreter, data [][]byte) error {
	for i, b := range data {
		t := it.Input(i)
		if t == nil {
			return fmt.Errorf("the interpreter has %d inputs, %d given", it.NumInputs(), len(data))
		}
		if err := t.CopyFrom(b); err != nil {
			return fmt.Errorf("set input %d: %w", i, err)
		}
	}
	return nil
}
