package plugin_test

import (
	"os"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// addModel is one float32 ADD of two [1,h,w,c] inputs: all transfer, next to
// no arithmetic.
func addModel(shape []int) []byte {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, shape)
	y := b.Tensor("y", tensor.Float32, shape)
	z := b.Tensor("z", tensor.Float32, shape)
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, y}, []int{z},
		modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Inputs(x, y)
	b.Outputs(z)
	return b.Bytes()
}

// BenchmarkInvokeOverhead measures one Invoke of a whole-graph partition on
// the cpu delegate in process and on the delego-cpu plugin: the difference
// is the per-invoke cost of going out of process. Models:
//
//	tiny         ADD of two [1,8] float32 tensors (96 bytes cross per invoke)
//	add224       ADD of two [1,224,224,3] float32 tensors: MobileNet-sized
//	             activations (1.8 MB cross) and next to no arithmetic
//	mobilenet_v1 mobilenet_v1_0.25_128_quant (49 KB in, 1 KB out)
//	mobilenet_v2 mobilenet_v2_1.0_224_float (602 KB in, 4 KB out)
//
// Paths: inprocess (the cpu delegate in this process), plugin (shared memory
// from 16 KiB), plugin-inline (every tensor inside the gRPC messages) and
// plugin-mtls (shared memory, gRPC over go-plugin's AutoMTLS).
func BenchmarkInvokeOverhead(b *testing.B) {
	models := []struct {
		name string
		data func(b *testing.B) []byte
	}{
		{"tiny", func(*testing.B) []byte { return addModel([]int{1, 8}) }},
		{"add224", func(*testing.B) []byte { return addModel([]int{1, 224, 224, 3}) }},
		{"mobilenet_v1", func(b *testing.B) []byte { return readModel(b, "mobilenet_v1_0.25_128_quant.tflite") }},
		{"mobilenet_v2", func(b *testing.B) []byte { return readModel(b, "mobilenet_v2_1.0_224_float.tflite") }},
	}
	paths := []struct {
		name string
		open func(b *testing.B) delegate.Delegate
	}{
		{"inprocess", func(*testing.B) delegate.Delegate { return cpu.New() }},
		{"plugin", func(b *testing.B) delegate.Delegate { return openB(b, nil) }},
		{"plugin-inline", func(b *testing.B) delegate.Delegate { return openB(b, &plugin.Options{ShmThreshold: -1}) }},
		{"plugin-mtls", func(b *testing.B) delegate.Delegate { return openB(b, &plugin.Options{AutoMTLS: true}) }},
	}
	for _, m := range models {
		for _, p := range paths {
			b.Run(m.name+"/"+p.name, func(b *testing.B) {
				model, err := model.New(m.data(b))
				if err != nil {
					b.Fatal(err)
				}
				it, err := core.NewInterpreterContext(b.Context(), model, &core.Options{Delegates: []delegate.Delegate{p.open(b)}})
				if err != nil {
					b.Fatal(err)
				}
				defer it.Close()
				if len(it.Plan().Partitions) != 1 || len(it.Plan().CPUNodes) != 0 {
					b.Fatalf("plan:\n%s", it.Report().Text())
				}
				if err := it.AllocateTensors(); err != nil {
					b.Fatal(err)
				}
				bytes := 0
				for i := range it.NumInputs() {
					bytes += len(it.Input(i).Data())
				}
				for i := range it.NumOutputs() {
					bytes += len(it.Output(i).Data())
				}
				b.SetBytes(int64(bytes))
				if err := it.Invoke(b.Context()); err != nil { // warm up: maps the region
					b.Fatal(err)
				}
				for b.Loop() {
					if err := it.Invoke(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func readModel(b *testing.B, name string) []byte {
	data, err := os.ReadFile(shared.Model(b, name))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func openB(b *testing.B, opts *plugin.Options) *plugin.Client {
	c, err := plugin.Open(b.Context(), pluginPath("cpu"), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}
