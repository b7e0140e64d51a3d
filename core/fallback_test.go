package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core/schema"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/tensor"
)

func TestTwinPath(t *testing.T) {
	for in, want := range map[string]string{
		"models/foo_edgetpu.tflite": "models/foo.tflite",
		"foo_edgetpu.tflite":        "foo.tflite",
		"/a/b_c_edgetpu.tflite":     "/a/b_c.tflite",
		"foo.tflite":                "",
		"_edgetpu.tflite":           "",
		"dir/_edgetpu.tflite":       "",
		"foo_edgetpu.tflite.bak":    "",
		"":                          "",
	} {
		if got := TwinPath(in); got != want {
			t.Errorf("TwinPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// accelerator claims the custom op "fake-accel-op", which no CPU kernel
// runs, and never compiles it.
type accelerator struct{}

func (accelerator) Name() string { return "accel" }
func (accelerator) Support(context.Context) (*delegate.Support, error) {
	return &delegate.Support{Custom: map[string]delegate.OpSupport{"fake-accel-op": {Versions: tensor.VersionRange{Min: 1, Max: 1}}}}, nil
}
func (accelerator) Compile(context.Context, *delegate.Partition) (delegate.Executable, error) {
	return nil, fmt.Errorf("%w: no accelerator plugged in", delegate.ErrNoDevice)
}
func (accelerator) Close() error { return nil }

const twinScale, twinZP = 0.5, 10

// compiledModel is in -> fake-accel-op -> outputs; twinModel computes the
// same outputs with RELU, listing them in the order given.
func compiledModel(outputs ...string) []byte {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Uint8, []int{1, 4}, modelbuild.Quant(twinScale, twinZP))
	var outs []int
	for _, o := range outputs {
		outs = append(outs, b.Tensor(o, tensor.Uint8, []int{1, 4}, modelbuild.Quant(twinScale, twinZP)))
	}
	b.CustomOp("fake-accel-op", 1, []int{in}, outs, []byte{1, 2, 3})
	b.Inputs(in)
	b.Outputs(outs...)
	return b.Bytes()
}

func twinModel(shape []int, outputs ...string) []byte {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Uint8, shape, modelbuild.Quant(twinScale, twinZP))
	var outs []int
	for _, o := range outputs {
		t := b.Tensor(o, tensor.Uint8, shape, modelbuild.Quant(twinScale, twinZP))
		b.Op(schema.BuiltinOperatorRELU, 1, []int{in}, []int{t}, nil)
		outs = append(outs, t)
	}
	b.Inputs(in)
	b.Outputs(outs...)
	return b.Bytes()
}

func writeModel(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func twinOptions(fallback bool) *Options {
	return &Options{Delegates: []delegate.Delegate{accelerator{}}, Settings: &config.TFLiteSettings{
		FallbackSettings: &config.FallbackSettings{AllowAutomaticFallbackOnCompilationError: proto.Bool(fallback)}}}
}

func TestTwinRunsAfterFallback(t *testing.T) {
	dir := t.TempDir()
	path := writeModel(t, dir, "m_edgetpu.tflite", compiledModel("out"))
	twinPath := writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "out"))
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Path() != path {
		t.Errorf("Path %q", m.Path())
	}
	it, err := NewInterpreter(m, twinOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	tw := it.Twin()
	if tw == nil || tw.Path != twinPath || tw.Model != m || len(tw.Fallbacks) != 1 || tw.Fallbacks[0].Delegate != "accel" ||
		!errors.Is(tw.Fallbacks[0].Err, delegate.ErrNoDevice) || it.Model().Path() != twinPath {
		t.Fatalf("twin %+v, model %q", tw, it.Model().Path())
	}
	if s := tw.String(); !strings.Contains(s, "partition 0 (accel) failed to compile: no usable device: no accelerator") ||
		!strings.Contains(s, "the CPU twin "+twinPath+" runs instead") {
		t.Errorf("String %q", s)
	}
	if len(it.Fallbacks()) != 0 {
		t.Errorf("the twin's own fallbacks: %v", it.Fallbacks())
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if err := it.Input(0).CopyFrom([]byte{0, 10, 20, 255}); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := it.Output(0).Data(); string(got) != string([]byte{10, 10, 20, 255}) {
		t.Errorf("output %v", got)
	}
}

func TestTwinNotUsed(t *testing.T) {
	dir := t.TempDir()
	path := writeModel(t, dir, "m_edgetpu.tflite", compiledModel("out"))
	writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "out"))
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// Without fallback the delegate's error reaches the caller.
	_, err = NewInterpreter(m, twinOptions(false))
	if de, ok := errors.AsType[*delegate.Error](err); !ok || !errors.Is(err, delegate.ErrNoDevice) || de.Stage != delegate.StageCompile {
		t.Errorf("without fallback: %v", err)
	}
	// Without a delegate nothing fell back: the model simply cannot run.
	_, err = NewInterpreter(m, nil)
	if !errors.Is(err, ErrUnsupportedOp) || errors.As(err, new(*TwinError)) {
		t.Errorf("without a delegate: %v", err)
	}
	// A model made in memory has no twin unless one is given.
	mm, err := model.New(compiledModel("out"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewInterpreter(mm, twinOptions(true))
	if !errors.Is(err, ErrUnsupportedOp) || errors.As(err, new(*TwinError)) {
		t.Errorf("in memory, no twin given: %v", err)
	}
	opts := twinOptions(true)
	opts.CPUTwin = filepath.Join(dir, "m.tflite")
	it, err := NewInterpreter(mm, opts)
	if err != nil || it.Twin() == nil || it.Twin().Path != opts.CPUTwin {
		t.Errorf("in memory, twin given: %v", err)
	}
}

func TestTwinErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		twin []byte // nil: no twin file
		want []string
		is   error
	}{
		{"missing", nil, []string{"no accelerator", "m.tflite could not run instead", "load model"}, fs.ErrNotExist},
		{"other shape", twinModel([]int{1, 5}, "out"), []string{`input 0 "in" is UINT8 [1 4]`, `the twin's "in" is UINT8 [1 5]`}, nil},
		{"other outputs", twinModel([]int{1, 4}, "out", "extra"), []string{"the model has 1 outputs, the twin 2"}, nil},
		{"not a model", []byte("not a model"), []string{"malformed model"}, model.ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			path := writeModel(t, sub, "m_edgetpu.tflite", compiledModel("out"))
			if c.twin != nil {
				writeModel(t, sub, "m.tflite", c.twin)
			}
			m, err := model.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = NewInterpreter(m, twinOptions(true))
			te, ok := errors.AsType[*TwinError](err)
			if !ok || te.Path != filepath.Join(sub, "m.tflite") || !errors.Is(err, delegate.ErrNoDevice) || !errors.Is(err, ErrUnsupportedOp) {
				t.Fatalf("%v, want a *TwinError for %s that is ErrNoDevice and ErrUnsupportedOp", err, filepath.Join(sub, "m.tflite"))
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}

// TestTwinOutputsByName: the twin's outputs come in the model's order even
// when the twin lists them otherwise.
func TestTwinOutputsByName(t *testing.T) {
	dir := t.TempDir()
	path := writeModel(t, dir, "m_edgetpu.tflite", compiledModel("first", "second"))
	writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "second", "first"))
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewInterpreter(m, twinOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	if it.NumOutputs() != 2 || it.Output(0).Name() != "first" || it.Output(1).Name() != "second" || it.OutputByName("second") == nil {
		t.Errorf("outputs %q %q", it.Output(0).Name(), it.Output(1).Name())
	}
}
