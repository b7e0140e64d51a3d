package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/pipeline"
	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
	"google.golang.org/protobuf/proto"
)

// ssdSegments are Coral's SSD MobileNet V2 cut in two by edgetpu_compiler
// --num_segments 2.
var ssdSegments = []string{
	"ssd_mobilenet_v2_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite",
	"ssd_mobilenet_v2_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite",
}

// simDevices plugs n simulated Edge TPUs into a bus and returns the
// in-process edgetpu delegate that drives them, and the devices.
func simDevices(t *testing.T, n int) (*edgetpu.Delegate, []*tpusim.Device) {
	t.Helper()
	devs := make([]*tpusim.Device, n)
	for i := range devs {
		devs[i] = tpusim.New(tpusim.Config{Bus: 1, Address: 2 + i, Ports: []int{1 + i}})
	}
	d := edgetpu.New(edgetpu.Simulated(tpusim.NewBus(devs...)))
	t.Cleanup(func() { d.Close() })
	return d, devs
}

// onDevice is an interpreter of a shared model with the delegate, its
// Edge TPU nodes on the device coral_settings.device names.
func onDevice(t *testing.T, name string, d delegate.Delegate, device string) *core.Interpreter {
	t.Helper()
	m, err := model.Load(shared.Model(t, name))
	if err != nil {
		t.Fatal(err)
	}
	settings := &config.TFLiteSettings{CoralSettings: &config.CoralSettings{Device: proto.String(device)}}
	return allocated(t, m, &core.Options{Delegates: []delegate.Delegate{d}, Settings: settings})
}

// stream is n different images for the first segment: the simulator's
// outputs follow the sum of the input bytes, so each sums differently.
func stream(it *core.Interpreter, n int) [][]*tensor.Tensor {
	r := rand.New(rand.NewPCG(1, 2))
	in := it.Input(0)
	out := make([][]*tensor.Tensor, n)
	for i := range out {
		data := make([]byte, in.ByteSize())
		var sum byte
		for j := range data {
			data[j] = byte(r.Uint32())
			sum += data[j]
		}
		data[0] += byte(17*i) - sum
		out[i] = []*tensor.Tensor{{Name: in.Name(), Type: in.Type(), Shape: in.Shape(), Data: data}}
	}
	return out
}

// sequential runs the segments one after the other on each input, passing
// tensors by name: what the pipeline must give.
func sequential(t *testing.T, segs []*core.Interpreter, inputs [][]*tensor.Tensor) [][][]byte {
	t.Helper()
	var out [][][]byte
	for _, in := range inputs {
		vals := map[string][]byte{}
		for _, x := range in {
			vals[x.Name] = x.Data
		}
		for _, it := range segs {
			for i := range it.NumInputs() {
				if err := it.Input(i).CopyFrom(vals[it.Input(i).Name()]); err != nil {
					t.Fatal(err)
				}
			}
			if err := it.Invoke(context.Background()); err != nil {
				t.Fatal(err)
			}
			for i := range it.NumOutputs() {
				vals[it.Output(i).Name()] = bytes.Clone(it.Output(i).Data())
			}
		}
		last := segs[len(segs)-1]
		var res [][]byte
		for i := range last.NumOutputs() {
			res = append(res, vals[last.Output(i).Name()])
		}
		out = append(out, res)
	}
	return out
}

// TestSSDOnSimulatedEdgeTPUs: the two-segment SSD MobileNet V2 as a
// pipeline over two simulated Edge TPUs (and over one, both segments
// sharing it) gives, for a stream of inputs, the outputs of running the
// segments one after the other on the same devices, in order; each device
// ran its segment.
func TestSSDOnSimulatedEdgeTPUs(t *testing.T) {
	for _, n := range []int{2, 1} {
		t.Run(fmt.Sprintf("sim:%d", n), func(t *testing.T) {
			noLeaks(t)
			d, devs := simDevices(t, n)
			segs := make([]*core.Interpreter, len(ssdSegments))
			for k, name := range ssdSegments {
				segs[k] = onDevice(t, name, d, fmt.Sprintf("usb:%d", k%n))
			}
			inputs := stream(segs[0], 4)
			got := runPipeline(t, segs, inputs)
			want := sequential(t, segs, inputs)
			distinct := map[string]bool{}
			for i := range inputs {
				for j := range want[i] {
					if !bytes.Equal(got[i][j].Data, want[i][j]) {
						t.Errorf("input %d output %d (%s): the pipeline's differs from the sequential run", i, j, got[i][j].Name)
					}
				}
				distinct[string(bytes.Join(want[i], nil))] = true
			}
			if len(distinct) < 2 {
				t.Errorf("every input gave the same outputs: the order is not tested")
			}
			for i, dev := range devs {
				if len(dev.Received()) == 0 {
					t.Errorf("device usb:%d ran nothing", i)
				}
			}
		})
	}
}

// runPipeline pushes the inputs from one goroutine while it pops them.
func runPipeline(t *testing.T, segs []*core.Interpreter, inputs [][]*tensor.Tensor) [][]*tensor.Tensor {
	t.Helper()
	ctx := context.Background()
	its := make([]pipeline.Interpreter, len(segs))
	for k, s := range segs {
		its[k] = s
	}
	p, err := pipeline.New(ctx, its, &pipeline.Options{MaxInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for i, in := range inputs {
			if err := p.Push(ctx, in); err != nil {
				t.Errorf("push %d: %v", i, err)
				break
			}
		}
		if err := p.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	var got [][]*tensor.Tensor
	for {
		out, err := p.Pop(ctx)
		if err != nil {
			if len(got) != len(inputs) {
				t.Fatalf("pop %d: %v", len(got), err)
			}
			return got
		}
		got = append(got, out)
	}
}
