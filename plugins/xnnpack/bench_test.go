//go:build cgo

package xnnpack_test

import (
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/xnnpack"
	"github.com/delego/delego/testsupport/shared"
)

// benchModels are the models BenchmarkMobileNet runs, with their golden
// input.
var benchModels = []struct{ name, model, input string }{
	{"v1_0.25_128_float", "mobilenet_v1_0.25_128_float.tflite", "mobilenet_v1_0.25_128_float__cat_128_f32.input.raw"},
	{"v2_1.0_224_float", "mobilenet_v2_1.0_224_float.tflite", "mobilenet_v2_1.0_224_float__cat_224_f32.input.raw"},
	{"v1_0.25_128_quant", "mobilenet_v1_0.25_128_quant.tflite", "mobilenet_v1_0.25_128_quant__cat_128.input.raw"},
	{"v2_1.0_224_quant", "mobilenet_v2_1.0_224_quant.tflite", "mobilenet_v2_1.0_224_quant__cat_224.input.raw"},
	{"tf2_v2_1.0_224_ptq", "tf2_mobilenet_v2_1.0_224_ptq.tflite", "tf2_mobilenet_v2_1.0_224_ptq__cat_224.input.raw"},
}

// BenchmarkMobileNet times one Invoke of each MobileNet with one thread:
// wholly on the in-process xnnpack delegate, and on delego's CPU kernels.
// Besides ns/op (the mean) it reports the median and the fastest Invoke,
// which shared machines disturb less. scripts/bench-xnnpack-vs-tflite.sh
// sets these beside TFLite 2.9 with XNNPACK.
func BenchmarkMobileNet(b *testing.B) {
	for _, bm := range benchModels {
		for _, path := range []string{"xnnpack", "cpu"} {
			b.Run(bm.name+"/"+path, func(b *testing.B) {
				m, err := model.Load(shared.Model(b, bm.model))
				if err != nil {
					b.Fatal(err)
				}
				opts := &core.Options{Threads: 1}
				if path == "xnnpack" {
					opts.Delegates = []delegate.Delegate{xnnpack.New()}
					opts.Settings = &config.TFLiteSettings{XnnpackSettings: &config.XNNPackSettings{NumThreads: proto.Int32(1)}}
				}
				it, err := core.NewInterpreter(m, opts)
				if err != nil {
					b.Fatal(err)
				}
				defer it.Close()
				if err := it.AllocateTensors(); err != nil {
					b.Fatal(err)
				}
				if err := it.Input(0).CopyFrom(shared.ReadGolden(b, bm.input)); err != nil {
					b.Fatal(err)
				}
				if err := it.Invoke(b.Context()); err != nil {
					b.Fatal(err)
				}
				var times []time.Duration
				for b.Loop() {
					start := time.Now()
					if err := it.Invoke(b.Context()); err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start))
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e6, "median-ms")
				b.ReportMetric(float64(times[0].Nanoseconds())/1e6, "min-ms")
			})
		}
	}
}
