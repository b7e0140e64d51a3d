package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/delego/delego/core"
	"github.com/delego/delego/internal/fileio"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/executable"
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
	return fmt.Sprintf("%s %d (tensor %d %q, %s %s)", kind, t.Pos, t.Index, t.Info.Name, t.Info.Type, formatShape(t.Info.Shape))
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

// newInterpreter makes an interpreter for m (asking the delegates of opts,
// partitioning the graph and compiling the partitions) and allocates its
// tensors; its warnings (a CPU twin that does not fit) go to warn. The
// caller closes it.
func newInterpreter(ctx context.Context, m *model.Model, modelPath string, opts core.Options, warn io.Writer) (*core.Interpreter, error) {
	it, err := core.NewInterpreterContext(ctx, m, &opts)
	if err != nil {
		return nil, fmt.Errorf("create interpreter: %w", explainUnsupported(m, modelPath, err))
	}
	for _, w := range it.Warnings() {
		fmt.Fprintf(warn, "delego: warning: %v\n", w)
	}
	if err := it.AllocateTensors(); err != nil {
		it.Close()
		return nil, fmt.Errorf("allocate tensors: %w", err)
	}
	return it, nil
}

// unsupportedError keeps NewInterpreter's error (for errors.Is and
// errors.As) but prints one line per op instead of one per node.
type unsupportedError struct {
	err  error
	text string
}

func (e *unsupportedError) Error() string { return e.text }
func (e *unsupportedError) Unwrap() error { return e.err }

// explainUnsupported groups the nodes of an error made only of
// *core.UnsupportedOpError by op and version, and for an Edge TPU-compiled
// model names its CPU twin when one sits beside it. Other errors are
// returned as they are.
func explainUnsupported(m *model.Model, modelPath string, err error) error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	type group struct {
		first *core.UnsupportedOpError
		nodes []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, e := range list {
		u, ok := e.(*core.UnsupportedOpError)
		if !ok {
			return err
		}
		key := fmt.Sprintf("%s\x00%d", u.Op, u.Version)
		g := byKey[key]
		if g == nil {
			g = &group{first: u}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.nodes = append(g.nodes, fmt.Sprint(u.Node))
	}
	if len(groups) == 0 {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s cannot run on the CPU kernels:", plural(len(list), "node", "nodes"))
	for _, g := range groups {
		u := g.first
		if len(g.nodes) == 1 {
			fmt.Fprintf(&b, "\n  %s version %d (node %s): ", u.Op, u.Version, g.nodes[0])
		} else {
			fmt.Fprintf(&b, "\n  %s version %d (%d nodes: %s): ", u.Op, u.Version, len(g.nodes), summarise(g.nodes, 8))
		}
		switch {
		case u.Custom && u.Supported == nil:
			b.WriteString("unresolved custom op")
		case u.Supported == nil:
			b.WriteString("no kernel for this builtin op")
		default:
			fmt.Fprintf(&b, "supported versions %s", *u.Supported)
		}
	}
	if hasEdgeTPUOp(m) {
		twin := edgetpuinfo.TwinPath(modelPath)
		if _, serr := os.Stat(twin); serr == nil && twin != "" {
			fmt.Fprintf(&b, "\n(this model is compiled for the Edge TPU; its CPU twin is %s)", filepath.Clean(twin))
		} else {
			b.WriteString("\n(this model is compiled for the Edge TPU; run its uncompiled twin on the CPU)")
		}
	}
	return &unsupportedError{err: err, text: b.String()}
}

func hasEdgeTPUOp(m *model.Model) bool {
	for _, oc := range m.OpCodes() {
		if oc.Custom == executable.CustomOp {
			return true
		}
	}
	return false
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
