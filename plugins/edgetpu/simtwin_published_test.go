package edgetpu

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// publishedModel is the file at path in google-coral/test_data under
// $DELEGO_GITHUB_MODELS (laid out OWNER+NAME/PATH, as
// integration/published_models_test.go reads it).
func publishedModel(t *testing.T, path string) string {
	t.Helper()
	dir := os.Getenv("DELEGO_GITHUB_MODELS")
	if dir == "" {
		t.Skip("set DELEGO_GITHUB_MODELS (a folder of OWNER+NAME/PATH files from GitHub snapshots) to run Coral's published models")
	}
	p := filepath.Join(dir, "google-coral+test_data", path)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// invokeOnce runs m with opts on inputs and returns its outputs.
func invokeOnce(t *testing.T, m *model.Model, opts *core.Options, inputs [][]byte) [][]byte {
	t.Helper()
	it, err := core.NewInterpreter(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if err := it.SetInputs(inputs); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	for i := range it.NumOutputs() {
		outs = append(outs, bytes.Clone(it.Output(i).Data()))
	}
	return outs
}

// TestSimTwinPublished: Coral's BodyPix, whose compiler requantized output
// 6 (float_part_heatmaps: scale 0.0873 zero point 71, the twin's 0.0802
// and 77), gives on the simulator what its twin gives when it runs instead
// of the model (no device, compile fallback), output 6 requantized alike on
// both paths; the second model of the co-compiled pair gives its twin's
// outputs.
func TestSimTwinPublished(t *testing.T) {
	for _, c := range []struct{ model, twin string }{
		{"posenet/bodypix_mobilenet_v1_075_512_512_16_quant_decoder_edgetpu.tflite", "posenet/bodypix_mobilenet_v1_075_512_512_16_quant_decoder.tflite"},
		{"cocompilation/mobilenet_v1_0.5_160_quant_cocompiled_with_mobilenet_v1_0.25_128_quant_edgetpu.tflite", "mobilenet_v1_0.5_160_quant.tflite"},
	} {
		t.Run(filepath.Base(c.model), func(t *testing.T) {
			path, twin := publishedModel(t, c.model), publishedModel(t, c.twin)
			m, err := model.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			runner := cpu.New()
			t.Cleanup(func() { runner.Close() })
			d, _, _ := simDelegate(t, tpusim.Config{}, WithTwins(twin), WithTwinRunner(runner), patient)
			ref := New(Simulated(tpusim.NewBus())) // no device: the twin runs instead
			t.Cleanup(func() { ref.Close() })
			var inputs [][]byte
			for _, ti := range m.Subgraph(0).Inputs() {
				info := m.Subgraph(0).Tensor(ti)
				in := make([]byte, tensor.NumElements(info.Shape)*info.Type.Size())
				seed := uint32(ti + 1)
				for k := range in {
					seed = seed*1664525 + 1013904223
					in[k] = byte(seed >> 24)
				}
				inputs = append(inputs, in)
			}
			got := invokeOnce(t, m, &core.Options{Delegates: []delegate.Delegate{d}}, inputs)
			want := invokeOnce(t, m, &core.Options{Delegates: []delegate.Delegate{ref}, Settings: fallbackSettings(), Twin: core.LoadTwin(twin)}, inputs)
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("output %d differs from the twin's in %d of %d bytes", i, differing(got[i], want[i]), len(want[i]))
				}
			}
		})
	}
}

// TestSimTwinLSTM: Coral's Keras LSTM, whose custom op takes the LSTM's
// state (two variable tensors) and gives the new state in its
// "..._variable_output" layers, gives on the simulator with its twin the
// twin's CPU outputs and TensorFlow Lite 2.9's, over two invokes with the
// same input: the second differs from the first by the state the first
// left, which goes through the twin's LSTM and back. Its USB traffic (the
// device's DMA descriptors included) is what it is with counters.
func TestSimTwinLSTM(t *testing.T) {
	path := publishedModel(t, "keras_lstm_mnist_ptq_edgetpu.tflite")
	const twin = "keras_lstm_mnist_ptq.tflite"
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := model.Load(shared.Model(t, twin))
	if err != nil {
		t.Fatal(err)
	}
	traces := make([]string, 2)
	for k, computes := range []bool{false, true} {
		var trace syncBuffer
		var d *Delegate
		if computes {
			d = twinDelegate(t, &trace, twin)
		} else {
			d, _, _ = simDelegate(t, tpusim.Config{}, WithTrace(&trace), patient)
		}
		it := interpreterOf(t, m, d)
		if err := it.SetInputs([][]byte{readGolden(t, "keras_lstm_mnist_ptq__digit7.input.raw")}); err != nil {
			t.Fatal(err)
		}
		if err := it.Invoke(context.Background()); err != nil {
			t.Fatal(err)
		}
		traces[k] = trace.String()
	}
	sameTraffic(t, traces[0], traces[1])
	for _, golden := range []string{"keras_lstm_mnist_ptq__digit7", "keras_lstm_mnist_ptq__seed1"} {
		t.Run(golden, func(t *testing.T) {
			d := twinDelegate(t, nil, twin)
			it := interpreterOf(t, m, d)
			ref, err := core.NewInterpreter(tm, &core.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ref.Close() })
			if err := ref.AllocateTensors(); err != nil {
				t.Fatal(err)
			}
			input := readGolden(t, golden+".input.raw")
			for run, out := range []string{".output.raw", ".output_invoke2.raw"} {
				for _, x := range []*core.Interpreter{it, ref} {
					if err := x.SetInputs([][]byte{input}); err != nil {
						t.Fatal(err)
					}
					if err := x.Invoke(context.Background()); err != nil {
						t.Fatalf("invoke %d: %v", run+1, err)
					}
				}
				got, cpu := it.Output(0).Data(), ref.Output(0).Data()
				if !bytes.Equal(got, cpu) {
					t.Errorf("invoke %d: %v on the simulator, %v on the twin", run+1, got, cpu)
				}
				if want := readGolden(t, golden+out); !bytes.Equal(got, want) {
					t.Errorf("invoke %d: %v on the simulator, %v from TensorFlow Lite 2.9 (%s)", run+1, got, want, golden+out)
				}
			}
		})
	}
}

// readGolden reads a file of ../shared/golden.
func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shared.Path(t, "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
