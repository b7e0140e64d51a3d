package edgetpu

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/testsupport/shared"
)

// twinDelegate is the delegate on one simulated device that computes from
// the twins named (shared models), on the cpu delegate in process (the
// delego-cpu plugin in production; the test may link the kernels).
func twinDelegate(t *testing.T, trace *syncBuffer, twins ...string) *Delegate {
	t.Helper()
	var paths []string
	for _, n := range twins {
		paths = append(paths, shared.Model(t, n))
	}
	runner := cpu.New()
	t.Cleanup(func() { runner.Close() })
	opts := []Option{WithTwins(paths...), WithTwinRunner(runner), patient}
	if trace != nil {
		opts = append(opts, WithTrace(trace))
	}
	d, _, _ := simDelegate(t, tpusim.Config{}, opts...)
	return d
}

// fillPattern fills every input of it with bytes from seed (a simple
// generator, the same for the model and its twin) and returns them.
func fillPattern(t *testing.T, it *core.Interpreter, seed uint32) [][]byte {
	t.Helper()
	var ins [][]byte
	for i := range it.NumInputs() {
		data := make([]byte, len(it.Input(i).Data()))
		for k := range data {
			seed = seed*1664525 + 1013904223
			data[k] = byte(seed >> 24)
		}
		if err := it.Input(i).CopyFrom(data); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, data)
	}
	return ins
}

// cpuOutputs runs the twin on the CPU kernels alone on inputs.
func cpuOutputs(t *testing.T, twin string, inputs [][]byte) [][]byte {
	t.Helper()
	m, err := model.Load(shared.Model(t, twin))
	if err != nil {
		t.Fatal(err)
	}
	it, err := core.NewInterpreter(m, &core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	for i, in := range inputs {
		if err := it.Input(i).CopyFrom(in); err != nil {
			t.Fatal(err)
		}
	}
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	for i := range it.NumOutputs() {
		outs = append(outs, slices.Clone(it.Output(i).Data()))
	}
	return outs
}

// TestSimComputesTwin: on a simulated device given the CPU twin, an Edge
// TPU model's outputs are byte for byte the twin's on the CPU kernels, for
// a model compiled whole (mobilenet), one with five outputs in tiled
// layouts (split_concat), one with a CPU op after the custom op (PoseNet's
// decoder: its float poses come from the custom op's three outputs), and
// the first of a co-compiled pair, over several invokes.
func TestSimComputesTwin(t *testing.T) {
	for _, c := range []struct{ model, twin string }{
		{"mobilenet_v1_0.25_128_quant_edgetpu.tflite", "mobilenet_v1_0.25_128_quant.tflite"},
		{"split_concat_edgetpu.tflite", "split_concat.tflite"},
		{"posenet_mobilenet_v1_075_353_481_16_quant_decoder_edgetpu.tflite", "posenet_mobilenet_v1_075_353_481_16_quant_decoder.tflite"},
		{cocompiledA, "mobilenet_v1_0.25_128_quant.tflite"},
	} {
		t.Run(c.model, func(t *testing.T) {
			d := twinDelegate(t, nil, c.twin)
			it := interpreter(t, c.model, d, nil)
			for run := range 2 {
				ins := fillPattern(t, it, uint32(run))
				if err := it.Invoke(context.Background()); err != nil {
					t.Fatal(err)
				}
				want := cpuOutputs(t, c.twin, ins)
				if len(want) != it.NumOutputs() {
					t.Fatalf("%d outputs, the twin %d", it.NumOutputs(), len(want))
				}
				for i := range want {
					if got := it.Output(i).Data(); !bytes.Equal(got, want[i]) {
						t.Errorf("run %d: output %d (%s) differs from the twin's in %d of %d bytes", run, i, it.Output(i).Name(), differing(got, want[i]), len(want[i]))
					}
				}
			}
		})
	}
}

// differing counts the bytes where a and b differ.
func differing(a, b []byte) int {
	n := max(len(a), len(b)) - min(len(a), len(b))
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// bulkInData is the payload of a trace's bulk-in completions on endpoint
// 0x81 (the output activations), the only bytes the twin changes.
var bulkInData = regexp.MustCompile(`(BULK_IN_DONE ep=0x81 .* data=)\S+`)

// TestSimTwinTraceUnchanged: computing from the twin changes the USB
// traffic in nothing but the bytes of the output activations: the same
// transfers on each endpoint, in the same order, of the same lengths (the
// driver reads endpoints 0x81 and 0x82 concurrently, so how the two
// interleave in the trace varies from run to run, with or without twin).
func TestSimTwinTraceUnchanged(t *testing.T) {
	const name, twin = "split_concat_edgetpu.tflite", "split_concat.tflite"
	traces := make([]string, 2)
	for k, twins := range [][]string{nil, {twin}} {
		var trace syncBuffer
		var d *Delegate
		if twins == nil {
			d, _, _ = simDelegate(t, tpusim.Config{}, WithTrace(&trace), patient)
		} else {
			d = twinDelegate(t, &trace, twins...)
		}
		it := interpreter(t, name, d, nil)
		fillPattern(t, it, 7)
		if err := it.Invoke(context.Background()); err != nil {
			t.Fatal(err)
		}
		traces[k] = trace.String()
	}
	sameTraffic(t, traces[0], traces[1])
}

// sameTraffic fails the test unless the trace of a run that computes from
// the twin (twin) differs from that of the same run with counters
// (counters) in the output activations' bytes only.
func sameTraffic(t *testing.T, counters, twin string) {
	t.Helper()
	a := byEndpoint(bulkInData.ReplaceAllString(counters, "${1}DATA"))
	b := byEndpoint(bulkInData.ReplaceAllString(twin, "${1}DATA"))
	for _, ep := range []string{"", "ep=0x01", "ep=0x81", "ep=0x82", "ep=0x83"} {
		for i := range max(len(a[ep]), len(b[ep])) {
			if at(a[ep], i) != at(b[ep], i) {
				t.Fatalf("the traces differ beyond the output data at operation %d of %q:\ncounters: %.300s\ntwin:     %.300s", i+1, ep, at(a[ep], i), at(b[ep], i))
			}
		}
	}
	if len(a) > 5 || len(b) > 5 {
		t.Errorf("the traces use endpoints %v and %v", slices.Collect(maps.Keys(a)), slices.Collect(maps.Keys(b)))
	}
	if !strings.Contains(counters, "BULK_IN_DONE ep=0x81") {
		t.Error("no output activations in the trace")
	}
}

// byEndpoint splits a trace's operations by endpoint ("" for the control
// transfers and API calls), each without its sequence number and transfer
// id (both count across endpoints). The submissions of the in transfers
// are left out: the driver's readers submit them in the background, and
// the trace ends with however many they had submitted by then.
func byEndpoint(trace string) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(trace), "\n") {
		_, op, _ := strings.Cut(strings.TrimSpace(line), " ")
		if strings.Contains(op, "_SUBMIT ") {
			continue
		}
		ep := regexp.MustCompile(`ep=0x[0-9a-f]+`).FindString(op)
		out[ep] = append(out[ep], regexp.MustCompile(` id=\d+`).ReplaceAllString(op, ""))
	}
	return out
}

// at is line i of lines, or "(none)".
func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

// TestSimTwinRefused: twins that do not fit the model fail Compile with an
// error that names the node and says, for each twin, what does not fit.
func TestSimTwinRefused(t *testing.T) {
	d := twinDelegate(t, nil, "mobilenet_v1_0.25_128_float.tflite", "split_concat.tflite")
	m, err := model.Load(shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{d}})
	if err == nil {
		it.Close()
		t.Fatal("the model compiled with twins that do not fit")
	}
	for _, want := range []string{"node 0", "matches none of the CPU twins", "mobilenet_v1_0.25_128_float.tflite: tensor \"input\" is FLOAT32", "split_concat.tflite: no tensor"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestSimTwinSeveralDevices: as over DELEGO_EDGETPU_DEVICE=sim:2 (a
// pipeline's segments each on its own device), two models on two
// simulated devices, invoked at the same time, each compute their twin's
// outputs.
func TestSimTwinSeveralDevices(t *testing.T) {
	var devs []*tpusim.Device
	for i := range 2 {
		devs = append(devs, tpusim.New(tpusim.Config{Bus: 1, Address: 2 + i, Ports: []int{1 + i}}))
	}
	runner := cpu.New()
	t.Cleanup(func() { runner.Close() })
	models := []struct{ model, twin string }{
		{"mobilenet_v1_0.25_128_quant_edgetpu.tflite", "mobilenet_v1_0.25_128_quant.tflite"},
		{"split_concat_edgetpu.tflite", "split_concat.tflite"},
	}
	d := New(Simulated(tpusim.NewBus(devs...)), WithTwins(shared.Model(t, models[0].twin), shared.Model(t, models[1].twin)), WithTwinRunner(runner), patient)
	t.Cleanup(func() { d.Close() })
	its := make([]*core.Interpreter, len(models))
	wants := make([][][]byte, len(models))
	for i, c := range models {
		its[i] = interpreter(t, c.model, d, coral(fmt.Sprintf("usb:%d", i)))
		wants[i] = cpuOutputs(t, c.twin, fillPattern(t, its[i], uint32(i)))
	}
	errs := make([]error, len(its))
	var wg sync.WaitGroup
	for i, it := range its {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = it.Invoke(context.Background())
		}()
	}
	wg.Wait()
	for i, it := range its {
		if errs[i] != nil {
			t.Fatalf("%s on usb:%d: %v", models[i].model, i, errs[i])
		}
		for j := range wants[i] {
			if got := it.Output(j).Data(); !bytes.Equal(got, wants[i][j]) {
				t.Errorf("%s on usb:%d: output %d differs from the twin's in %d bytes", models[i].model, i, j, differing(got, wants[i][j]))
			}
		}
	}
}

// TestEnvTwin: DELEGO_EDGETPU_TWIN lists twins (as $PATH does) for a
// simulated device, and is an error that names both variables without one.
func TestEnvTwin(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	twins := "a.tflite" + string(filepath.ListSeparator) + "b.tflite"
	opts, err := EnvOptions(env(map[string]string{edgetpuinfo.EnvDevice: "sim:2", edgetpuinfo.EnvTwin: twins}))
	if err != nil {
		t.Fatal(err)
	}
	d := New(opts...)
	defer d.Close()
	if !d.ComputesFromTwins() || !slices.Equal(d.run.paths, []string{"a.tflite", "b.tflite"}) {
		t.Errorf("twins %q from %q", d.run.paths, twins)
	}
	for _, dev := range []string{"", "usb"} {
		_, err := EnvOptions(env(map[string]string{edgetpuinfo.EnvDevice: dev, edgetpuinfo.EnvTwin: twins}))
		if err == nil || !strings.Contains(err.Error(), edgetpuinfo.EnvTwin) || !strings.Contains(err.Error(), edgetpuinfo.EnvDevice) {
			t.Errorf("twins for device %q: %v", dev, err)
		}
	}
}

// TestSimTwinState: a custom op that takes an LSTM's state (its two
// variable tensors) and gives the new state in "..._variable_output"
// layers, as Coral's compiler makes of the Keras LSTM, is computed by the
// twin's nodes with the state going in and coming back: fed back as the
// host feeds it, the second invoke gives TensorFlow Lite 2.9's second
// output. The op is the whole twin here (the Edge TPU model's tensors
// are the twin's own), so no compiled model is needed.
func TestSimTwinState(t *testing.T) {
	const twin = "keras_lstm_mnist_ptq.tflite"
	m, err := model.Load(shared.Model(t, twin))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	runner := cpu.New()
	t.Cleanup(func() { runner.Close() })
	d := New(WithTwins(shared.Model(t, twin)), WithTwinRunner(runner))
	t.Cleanup(func() { d.Close() })
	// Tensor 0 is the input x, 28 the output y, 17 and 18 the LSTM's
	// state (INT8 and INT16 [1,20]), as inspect shows them.
	n := &program.Node{Index: 0, Batches: 1, Main: &executable.Executable{Outputs: []executable.Layer{
		{Name: "StatefulPartitionedCall:0", Y: 1, X: 1, Z: 10, SizeBytes: 16, DataType: executable.FixedPoint8},
		{Name: "tfl.pseudo_qconst" + executable.VariableOutputSuffix, Y: 1, X: 1, Z: 20, SizeBytes: 24, DataType: executable.SignedFixedPoint8},
		{Name: "tfl.pseudo_qconst1" + executable.VariableOutputSuffix, Y: 1, X: 1, Z: 20, SizeBytes: 40, DataType: executable.SignedFixedPoint16},
	}}}
	p, err := d.twinPart(context.Background(), m, n, []int{0, 17, 18}, []int{28, 17, 18})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.exe.Close() })
	const golden = "keras_lstm_mnist_ptq__digit7"
	x, err := os.ReadFile(shared.Path(t, "golden", golden+".input.raw"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := [][]byte{x, make([]byte, 20), make([]byte, 40)}
	for run, out := range []string{".output.raw", ".output_invoke2.raw"} {
		values, err := p.compute(context.Background(), inputs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(shared.Path(t, "golden", golden+out))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(values[0], want) {
			t.Errorf("invoke %d: %v, TensorFlow Lite 2.9's %v", run+1, values[0], want)
		}
		if bytes.Equal(values[1], inputs[1]) || bytes.Equal(values[2], inputs[2]) {
			t.Errorf("invoke %d: the state did not change", run+1)
		}
		inputs[1], inputs[2] = values[1], values[2]
	}
	// The nodes that update a state are found from it alone: the LSTM
	// (node 1, from the quantized x, tensor 16) for a part that gives
	// nothing but the new state.
	if nodes, err := computing(m, []int{16, 17, 18}, []int{17, 18}); err != nil || !slices.Equal(nodes, []int{1}) {
		t.Errorf("the nodes updating the state: %v, %v; want [1]", nodes, err)
	}
	// A "..._variable_output" layer whose tensor is no variable in the
	// twin is refused, by name.
	n.Main.Outputs[1].Name = "serving_default_x:0" + executable.VariableOutputSuffix
	_, err = d.twinPart(context.Background(), m, n, []int{0, 17, 18}, []int{28, 0, 18})
	if want := `output layer "serving_default_x:0_variable_output" is the new state of "serving_default_x:0", which is not a variable tensor in the twin`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a state that is no variable: %v", err)
	}
}
