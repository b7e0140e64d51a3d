package tflite_test

import (
	"bytes"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/delego/delego/compat/tflite"
	"github.com/delego/delego/compat/tflite/delegates/xnnpack"
	"github.com/delego/delego/testsupport/shared"
)

// newInterpreter makes an allocated interpreter of data whose error
// messages are collected in *msgs.
func newInterpreter(t *testing.T, data []byte, msgs *[]string) *tflite.Interpreter {
	t.Helper()
	m := tflite.NewModel(data)
	if m == nil {
		t.Fatal("NewModel: nil")
	}
	t.Cleanup(m.Delete)
	o := tflite.NewInterpreterOptions()
	defer o.Delete()
	o.SetErrorReporter(func(msg string, user interface{}) {
		*user.(*[]string) = append(*user.(*[]string), msg)
	}, msgs)
	it := tflite.NewInterpreter(m, o)
	if it == nil {
		t.Fatalf("NewInterpreter: nil; reported %q", *msgs)
	}
	t.Cleanup(it.Delete)
	if s := it.AllocateTensors(); s != tflite.OK {
		t.Fatalf("AllocateTensors: %v; reported %q", s, *msgs)
	}
	return it
}

func TestXORThroughTheAPI(t *testing.T) {
	var msgs []string
	it := newInterpreter(t, xorModel(), &msgs)
	if n, m := it.GetInputTensorCount(), it.GetOutputTensorCount(); n != 1 || m != 1 {
		t.Fatalf("counts = %d, %d; want 1, 1", n, m)
	}
	in, out := it.GetInputTensor(0), it.GetOutputTensor(0)
	if in.Name() != "dense_input" || in.Type() != tflite.Float32 || in.NumDims() != 2 || in.Dim(1) != 2 ||
		!slices.Equal(in.Shape(), []int{1, 2}) || in.ByteSize() != 8 || in.String() != "dense_input" {
		t.Errorf("input: %s %v %v %d bytes", in.Name(), in.Type(), in.Shape(), in.ByteSize())
	}
	if it.GetInputTensor(1) != nil || it.GetOutputTensor(-1) != nil {
		t.Error("a tensor out of range should be nil")
	}
	for _, c := range []struct{ a, b, want float32 }{{0, 0, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 0}} {
		if err := in.SetFloat32s([]float32{c.a, c.b}); err != nil {
			t.Fatal(err)
		}
		if s := it.Invoke(); s != tflite.OK {
			t.Fatalf("Invoke: %v %q", s, msgs)
		}
		if got := out.Float32At(0, 0); got != c.want {
			t.Errorf("%v xor %v = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestTypedViewsWriteTheTensor(t *testing.T) {
	var msgs []string
	it := newInterpreter(t, sinModel(), &msgs)
	in := it.GetInputTensor(0)
	in.Float32s()[0] = 0.5
	var x float32
	if s := in.CopyToBuffer(&x); s != tflite.OK || x != 0.5 {
		t.Errorf("CopyToBuffer after writing Float32s()[0]: %v %v", x, s)
	}
	if in.UInt8s() != nil || in.Int8s() != nil || in.Int32s() != nil {
		t.Error("views of another type should be nil")
	}
	if err := in.SetUint8s([]uint8{1}); err != tflite.ErrTypeMismatch {
		t.Errorf("SetUint8s on a Float32 tensor: %v, want ErrTypeMismatch", err)
	}
	if s := in.CopyFromBuffer([]float32{0.25}); s != tflite.OK || in.Float32s()[0] != 0.25 {
		t.Errorf("CopyFromBuffer: %v", s)
	}
	if s := in.CopyFromBuffer([]byte{1}); s != tflite.Error {
		t.Error("CopyFromBuffer from a short buffer should be Error")
	}
	if s := in.CopyFromBuffer("not numbers"); s != tflite.Error {
		t.Error("CopyFromBuffer from a string should be Error")
	}
	if s := it.Invoke(); s != tflite.OK {
		t.Fatal(msgs)
	}
	if got := it.GetOutputTensor(0).Float32s()[0]; math.Abs(float64(got)-math.Sin(0.25)) > 1e-6 {
		t.Errorf("sin(0.25) = %v", got)
	}
	if s := it.ResetVariableTensors(); s != tflite.OK {
		t.Errorf("ResetVariableTensors: %v", s)
	}
}

func TestResizeInputTensor(t *testing.T) {
	var msgs []string
	it := newInterpreter(t, sinModel(), &msgs)
	if s := it.ResizeInputTensor(0, []int32{1, 3}); s != tflite.OK {
		t.Fatalf("ResizeInputTensor: %v %q", s, msgs)
	}
	if s := it.AllocateTensors(); s != tflite.OK {
		t.Fatalf("AllocateTensors: %v %q", s, msgs)
	}
	if err := it.GetInputTensor(0).SetFloat32s([]float32{0, 0.5, 1}); err != nil {
		t.Fatal(err)
	}
	if it.Invoke() != tflite.OK {
		t.Fatal(msgs)
	}
	got := it.GetOutputTensor(0).Float32s()
	for i, x := range []float64{0, 0.5, 1} {
		if math.Abs(float64(got[i])-math.Sin(x)) > 1e-6 {
			t.Errorf("sin(%v) = %v", x, got[i])
		}
	}
	if s := it.ResizeInputTensor(5, []int32{1}); s != tflite.Error || len(msgs) == 0 {
		t.Errorf("resizing input 5: %v, reported %q", s, msgs)
	}
}

func TestFailuresAreNilAndReported(t *testing.T) {
	if m := tflite.NewModel([]byte("not a model")); m != nil {
		t.Error("NewModel of garbage should be nil")
	}
	if m := tflite.NewModelFromFile("no/such/model.tflite"); m != nil {
		t.Error("NewModelFromFile of a missing file should be nil")
	}
	var msgs []string
	o := tflite.NewInterpreterOptions()
	o.SetErrorReporter(func(msg string, _ interface{}) { msgs = append(msgs, msg) }, nil)
	if it := tflite.NewInterpreter(nil, o); it != nil || len(msgs) != 1 || !strings.Contains(msgs[0], "no model") {
		t.Errorf("NewInterpreter(nil): %v, reported %q", it, msgs)
	}
	if it := tflite.NewInterpreter(nil, &tflite.InterpreterOptions{}); it != nil {
		t.Error("NewInterpreter(nil) with zero options should be nil")
	}
	var nilIt *tflite.Interpreter
	if nilIt.AllocateTensors() != tflite.Error {
		t.Error("AllocateTensors on a nil interpreter should be Error")
	}
	if tflite.OK.String() != "OK" || tflite.Error.String() != "Error" || tflite.UInt8.String() != "UInt8" || tflite.TensorType(11).String() != "TensorType(11)" {
		t.Error("names of statuses and types")
	}
}

// TestMobileNetGolden classifies the golden cat with the quantized
// MobileNet and gets TensorFlow Lite's output bytes.
func TestMobileNetGolden(t *testing.T) {
	var msgs []string
	data, err := os.ReadFile(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	it := newInterpreter(t, data, &msgs)
	in := it.GetInputTensor(0)
	if q := in.QuantizationParams(); in.Type() != tflite.UInt8 || q.Scale != 0.0078125 || q.ZeroPoint != 128 {
		t.Errorf("input %v, quantization %+v", in.Type(), q)
	}
	copy(in.UInt8s(), shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.input.raw"))
	if it.Invoke() != tflite.OK {
		t.Fatal(msgs)
	}
	got := make([]uint8, it.GetOutputTensor(0).ByteSize())
	if s := it.GetOutputTensor(0).CopyToBuffer(got); s != tflite.OK {
		t.Fatal(s)
	}
	if !bytes.Equal(got, shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")) {
		t.Error("output differs from the golden")
	}
}

// TestXNNPACKWithoutPlugin: as go-tflite's New without the library, New is
// nil, and Open says what to do.
func TestXNNPACKWithoutPlugin(t *testing.T) {
	t.Setenv("DELEGO_PLUGIN_PATH", t.TempDir())
	if _, err := xnnpack.Open(xnnpack.DelegateOptions{NumThreads: 2}); err == nil || !strings.Contains(err.Error(), "go build ./plugins/xnnpack/cmd/delego-xnnpack") {
		t.Errorf("Open without a plugin: %v", err)
	}
}

// TestCopyBufferTakesPointers: as in go-tflite, a pointer to a buffer's
// first element (&buf[0]) or an unsafe.Pointer carries the tensor's whole
// byte size, read from or written to that address; a slice must hold it,
// and a short one is Error with a message that names the tensor and both
// sizes.
func TestCopyBufferTakesPointers(t *testing.T) {
	var msgs []string
	it := newInterpreter(t, fizzBuzzModel(), &msgs)
	in := it.GetInputTensor(0) // bits, [1, 7] float32: 28 bytes
	bits := []float32{1, 0, 1, 0, 0, 0, 1}
	if s := in.CopyFromBuffer(&bits[0]); s != tflite.OK || !slices.Equal(in.Float32s(), bits) {
		t.Errorf("CopyFromBuffer(&bits[0]): %v, tensor %v, want %v; reported %q", s, in.Float32s(), bits, msgs)
	}
	back := make([]float32, 7)
	if s := in.CopyToBuffer(&back[0]); s != tflite.OK || !slices.Equal(back, bits) {
		t.Errorf("CopyToBuffer(&back[0]): %v, %v, want %v", s, back, bits)
	}
	other := [7]float32{0, 1, 1, 0, 0, 0, 0}
	if s := in.CopyFromBuffer(unsafe.Pointer(&other)); s != tflite.OK || !slices.Equal(in.Float32s(), other[:]) {
		t.Errorf("CopyFromBuffer(unsafe.Pointer): %v, tensor %v, want %v", s, in.Float32s(), other)
	}
	if s := it.Invoke(); s != tflite.OK {
		t.Fatalf("Invoke: %v %q", s, msgs)
	}
	var scores [4]float32 // 6 is Fizz
	if s := it.GetOutputTensor(0).CopyToBuffer(&scores[0]); s != tflite.OK || scores != [4]float32{0, 1, 0, 0} {
		t.Errorf("CopyToBuffer(&scores[0]): %v, %v, want Fizz's [0 1 0 0]", s, scores)
	}

	msgs = nil
	if s := in.CopyFromBuffer(bits[:6]); s != tflite.Error {
		t.Errorf("CopyFromBuffer of 6 float32s into 7: %v, want Error", s)
	}
	if s := in.CopyToBuffer(make([]byte, 27)); s != tflite.Error {
		t.Errorf("CopyToBuffer into 27 bytes of 28: %v, want Error", s)
	}
	var none *float32
	if s := in.CopyFromBuffer(none); s != tflite.Error {
		t.Errorf("CopyFromBuffer of a nil pointer: %v, want Error", s)
	}
	want := []string{
		`CopyFromBuffer: tensor "bits": it holds 28 bytes, the []float32 only 24 (6 elements)`,
		`CopyToBuffer: tensor "bits": it holds 28 bytes, the []uint8 only 27 (27 elements)`,
		`CopyFromBuffer: tensor "bits": the *float32 is nil`,
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("reported\n%q\nwant\n%q", msgs, want)
	}
}
