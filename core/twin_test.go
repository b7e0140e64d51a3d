package core

import (
	"bytes"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/tensor"
)

// The compiled model's output quantization, other than its twin's (as
// Coral's compiler may requantize an output: BodyPix's output 6 is scale
// 0.0873 zero point 71 against the twin's 0.0802 and 77).
const compiledScale, compiledZP = 0.6, 3

// requantizedModel is compiledModel with its output quantized otherwise,
// or of another type.
func requantizedModel(typ tensor.DType) []byte {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Uint8, []int{1, 4}, modelbuild.Quant(twinScale, twinZP))
	out := b.Tensor("out", typ, []int{1, 4}, modelbuild.Quant(compiledScale, compiledZP))
	b.CustomOp("fake-accel-op", 1, []int{in}, []int{out}, []byte{1, 2, 3})
	b.Inputs(in)
	b.Outputs(out)
	return b.Bytes()
}

// TestTwinRequantizesOutputs: a twin whose output is quantized otherwise
// runs, at compile fallback and after an execution failure alike, its
// values requantized to the model's parameters with TFLite's rounding, and
// the fallback says so; the output shows the model's quantization.
func TestTwinRequantizesOutputs(t *testing.T) {
	dir := t.TempDir()
	twinPath := writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "out"))
	m, err := model.New(requantizedModel(tensor.Uint8))
	if err != nil {
		t.Fatal(err)
	}
	in := []byte{0, 10, 20, 255}
	// RELU in the twin: max(in, zero point), then to the model's scale.
	lut, err := tensor.Requantize8(tensor.Uint8, twinScale, twinZP, tensor.Uint8, compiledScale, compiledZP)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{lut[10], lut[10], lut[20], lut[255]}
	if bytes.Equal(want, []byte{10, 10, 20, 255}) {
		t.Fatal("the requantization changes nothing: the test proves nothing")
	}
	for _, c := range []struct {
		name string
		opts *Options
	}{
		{"compile fallback", twinOptions(true, twinPath)},
		{"execution failure", &Options{Delegates: []delegate.Delegate{&runningAccelerator{}}, Settings: fallbackSettings(false, true), Twin: LoadTwin(twinPath)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			it := newReady(t, m, c.opts)
			if ws := it.Warnings(); len(ws) != 0 {
				t.Errorf("warnings %v", ws)
			}
			for run := range 2 {
				got, err := invokeWith(t, it, in)
				if err != nil || !bytes.Equal(got[0], want) {
					t.Fatalf("run %d: %v, output %v, want %v", run, err, got, want)
				}
			}
			if q := it.Output(0).Quantization(); q == nil || q.Scale[0] != compiledScale || q.ZeroPoint[0] != compiledZP {
				t.Errorf("the output shows quantization %+v, want the model's", q)
			}
			tw := it.Twin()
			if tw == nil || len(tw.Requantized) != 1 || !strings.Contains(tw.String(), `output 0 "out" requantized from the twin's scale [0.5] zero point [10] to the model's scale [0.6] zero point [3]`) {
				t.Errorf("twin fallback %v", tw)
			}
		})
	}
}

// TestTwinOtherTypeRefused: an output of another type is no matter of
// quantization: the twin does not fit, and says why.
func TestTwinOtherTypeRefused(t *testing.T) {
	dir := t.TempDir()
	twinPath := writeModel(t, dir, "m.tflite", twinModel([]int{1, 4}, "out"))
	m, err := model.New(requantizedModel(tensor.Int8))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewInterpreter(m, twinOptions(true, twinPath))
	if err == nil || !strings.Contains(err.Error(), `output 0 "out" is INT8 [1 4]`) {
		t.Errorf("%v, want the twin refused for its output's type", err)
	}
}
