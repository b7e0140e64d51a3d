package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/adapters"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/testsupport/shared"
)

// TestEdgeTPUSimTwin: with DELEGO_EDGETPU_DEVICE=sim and the CPU twin in
// DELEGO_EDGETPU_TWIN, the Edge TPU model's output through the real
// plugin processes (delego-edgetpu, which runs the twin's nodes on a
// delego-cpu of its own) is the twin's golden output, from the library and
// from the command line, and no plugin process outlives the run. Without
// delego-cpu beside it, the plugin says what it is missing.
func TestEdgeTPUSimTwin(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := goBuild(dir, nil, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu", "github.com/delego/delego/plugins/cpu/cmd/delego-cpu"); err != nil {
		t.Fatal(err)
	}
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	twin := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	in := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.input.raw")
	want := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")
	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	t.Setenv(edgetpuinfo.EnvTwin, twin)

	ctx := context.Background()
	it, err := delego.Open(ctx, model, delego.WithDelegates(edgetpuinfo.Name), delego.WithPluginDirs(dir))
	if err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		if err := it.Input(0).CopyFrom(in); err != nil {
			t.Fatal(err)
		}
		if err := it.Invoke(ctx); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if got := it.Output(0).Data(); !bytes.Equal(got, want) {
			t.Errorf("run %d: the simulated Edge TPU's output differs from the twin's golden", run)
		}
	}
	// What an app's test does (README: testing a Coral app in CI).
	img, err := adapters.LoadImage(shared.Model(t, "cat.bmp"))
	if err != nil {
		t.Fatal(err)
	}
	in0 := it.Input(0)
	pixels, err := adapters.ImageInput(img, in0.Type(), in0.Shape(), adapters.Norm{Mean: adapters.DefaultMean, Std: adapters.DefaultStd})
	if err != nil {
		t.Fatal(err)
	}
	if err := in0.CopyFrom(pixels); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(ctx); err != nil {
		t.Fatal(err)
	}
	labels, err := adapters.ReadLabels(shared.Model(t, "imagenet_labels.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Egyptian cat and tiger cat tie at 0.265625: the higher class comes
	// first, as libcoral ranks them.
	if top := adapters.Classes(it.Output(0), 2, 0, labels); len(top) != 2 || top[0].Label != "Egyptian cat" || top[1].Label != "tiger cat" || top[0].Score != top[1].Score {
		t.Errorf("top classes %+v, want Egyptian cat and tiger cat, tied", top)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoOrphans(t)

	input := filepath.Join(dir, "in.raw")
	if err := os.WriteFile(input, in, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.raw")
	_, stderr, err := runDelegoEnv(t, []string{"DELEGO_PLUGIN_PATH=" + dir}, "run", model, "--delegate", "edgetpu", "--input", input, "--output", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !bytes.Equal(readFile(t, out), want) {
		t.Error("delego run: the simulated Edge TPU's output differs from the twin's golden")
	}
	if !strings.Contains(stderr, "computed from the CPU twin") {
		t.Errorf("stderr does not say where the outputs come from:\n%s", stderr)
	}
	checkNoOrphans(t)

	alone := t.TempDir()
	if err := os.Link(filepath.Join(dir, "delego-edgetpu"), filepath.Join(alone, "delego-edgetpu")); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = runDelegoEnv(t, []string{"DELEGO_PLUGIN_PATH=" + alone}, "run", model, "--delegate", "edgetpu", "--input", input, "--output", out)
	if err == nil || !strings.Contains(stderr, "the simulated Edge TPU computes on the cpu plugin") || !strings.Contains(stderr, "delego-cpu") {
		t.Errorf("without delego-cpu: %v\n%s", err, stderr)
	}
	checkNoOrphans(t)
}

// TestEdgeTPUSimTwinLSTM: Coral's Keras LSTM compiled for the Edge TPU
// (google-coral/test_data under DELEGO_GITHUB_MODELS: it is not in
// ../shared), whose custom op takes the LSTM's state and gives it back,
// gives on the simulator with its twin TensorFlow Lite 2.9's outputs
// through the real plugin processes, the second invoke's from the state
// the first left.
func TestEdgeTPUSimTwinLSTM(t *testing.T) {
	model := coralFile(t, "keras_lstm_mnist_ptq_edgetpu.tflite")
	if model == "" {
		t.Skip("set DELEGO_GITHUB_MODELS to a folder holding google-coral+test_data/keras_lstm_mnist_ptq_edgetpu.tflite")
	}
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := goBuild(dir, nil, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu", "github.com/delego/delego/plugins/cpu/cmd/delego-cpu"); err != nil {
		t.Fatal(err)
	}
	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	t.Setenv(edgetpuinfo.EnvTwin, shared.Model(t, "keras_lstm_mnist_ptq.tflite"))
	const golden = "keras_lstm_mnist_ptq__digit7"
	in := shared.ReadGolden(t, golden+".input.raw")
	ctx := context.Background()
	it, err := delego.Open(ctx, model, delego.WithDelegates(edgetpuinfo.Name), delego.WithPluginDirs(dir))
	if err != nil {
		t.Fatal(err)
	}
	for run, out := range []string{".output.raw", ".output_invoke2.raw"} {
		if err := it.Input(0).CopyFrom(in); err != nil {
			t.Fatal(err)
		}
		if err := it.Invoke(ctx); err != nil {
			t.Fatalf("invoke %d: %v", run+1, err)
		}
		if got, want := it.Output(0).Data(), shared.ReadGolden(t, golden+out); !bytes.Equal(got, want) {
			t.Errorf("invoke %d: %v on the simulator, %v from TensorFlow Lite 2.9", run+1, got, want)
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoOrphans(t)
}
