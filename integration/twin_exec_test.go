package integration

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// failingTPU claims edgetpu-custom-op, compiles, and fails every run: an
// Edge TPU unplugged mid-inference, as the CPU sees it.
type failingTPU struct{ runs int }

var errUnplugged = errors.New("device unplugged mid-inference")

func (d *failingTPU) Name() string { return "edgetpu" }

func (d *failingTPU) Support(context.Context) (*delegate.Support, error) {
	return &delegate.Support{Custom: map[string]delegate.OpSupport{
		"edgetpu-custom-op": {Versions: tensor.VersionRange{Min: 1, Max: 1}},
	}, Builtins: map[schema.BuiltinOperator]delegate.OpSupport{}}, nil
}

func (d *failingTPU) Compile(context.Context, *delegate.Partition) (delegate.Executable, error) {
	return d, nil
}

func (d *failingTPU) Invoke(context.Context, []*tensor.Tensor, []*tensor.Tensor) error {
	d.runs++
	return errUnplugged
}

func (d *failingTPU) Close() error { return nil }

// TestEdgeTPUExecutionFailureRunsTheTwin: an Edge TPU partition that fails
// while running cannot rerun on the CPU kernels (they have no
// edgetpu-custom-op), so with execution fallback allowed the model's CPU twin
// takes over that Invoke and every later one, on the caller's own tensors;
// without it, the error is the result.
func TestEdgeTPUExecutionFailureRunsTheTwin(t *testing.T) {
	path := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	twin := core.LoadTwin(edgetpu.TwinPath(path)) // the caller names the twin
	in := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.input.raw")
	want := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")
	for _, allow := range []bool{false, true} {
		tpu := &failingTPU{}
		it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{tpu}, Settings: fallbackSettings(false, allow), Twin: twin})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		if err := it.AllocateTensors(); err != nil {
			t.Fatal(err)
		}
		for run := 1; run <= 2; run++ {
			if err := it.Input(0).CopyFrom(in); err != nil {
				t.Fatal(err)
			}
			err := it.Invoke(t.Context())
			if !allow {
				if !errors.Is(err, errUnplugged) {
					t.Fatalf("without fallback: %v, want the delegate's error", err)
				}
				break
			}
			if err != nil {
				t.Fatalf("run %d: %v", run, err)
			}
			if !bytes.Equal(it.Output(0).Data(), want) {
				t.Errorf("run %d: output differs from the CPU model's golden", run)
			}
		}
		if allow {
			if tw := it.Twin(); tw == nil || !errors.Is(tw.Err, errUnplugged) {
				t.Errorf("Twin() = %+v, want the twin fallback caused by the unplug", tw)
			}
			if tpu.runs != 1 {
				t.Errorf("the Edge TPU ran %d times; after the failure the twin runs alone", tpu.runs)
			}
		}
	}
}
