package conv

import (
	"runtime"
	"testing"
	"time"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// dwLayer is a float depthwise layer of a model: an h x w x c input, a k x
// k filter, stride s, n such layers.
type dwLayer struct {
	h, w, c, k, s, n int
	pad              schema.Padding
}

// dwModels are the float depthwise layers of MobileNet V2 1.0 224 and of
// two MediaPipe models (read from the models with delego inspect; the
// pose model pads its stride-2 inputs with PAD nodes and convolves them
// VALID).
var dwModels = []struct {
	name   string
	layers []dwLayer
}{
	{"mobilenet_v2", []dwLayer{
		{112, 112, 32, 3, 1, 1, same}, {112, 112, 96, 3, 2, 1, same}, {56, 56, 144, 3, 1, 1, same},
		{56, 56, 144, 3, 2, 1, same}, {28, 28, 192, 3, 1, 2, same}, {28, 28, 192, 3, 2, 1, same},
		{14, 14, 384, 3, 1, 4, same}, {14, 14, 576, 3, 1, 2, same}, {14, 14, 576, 3, 2, 1, same},
		{7, 7, 960, 3, 1, 3, same},
	}},
	{"hand_landmark_full", []dwLayer{
		{7, 7, 1152, 3, 1, 1, same}, {7, 7, 1152, 5, 1, 3, same}, {14, 14, 480, 3, 1, 2, same},
		{14, 14, 480, 5, 1, 1, same}, {14, 14, 672, 5, 1, 2, same}, {14, 14, 672, 5, 2, 1, same},
		{28, 28, 240, 3, 2, 1, same}, {28, 28, 240, 5, 1, 1, same}, {56, 56, 144, 3, 1, 1, same},
		{56, 56, 144, 5, 2, 1, same}, {112, 112, 24, 3, 1, 1, same}, {112, 112, 64, 3, 2, 1, same},
	}},
	{"pose_landmark_full", []dwLayer{
		{2, 2, 288, 3, 1, 5, same}, {4, 4, 288, 3, 1, 4, same}, {4, 4, 288, 3, 2, 1, same},
		{8, 8, 288, 3, 2, 1, same}, {8, 8, 864, 3, 1, 3, same}, {8, 8, 864, 5, 1, 3, same},
		{16, 16, 88, 3, 1, 1, same}, {16, 16, 384, 3, 1, 2, same}, {16, 16, 384, 5, 1, 1, same},
		{16, 16, 528, 5, 1, 2, same}, {20, 20, 528, 5, 2, 1, valid}, {32, 32, 32, 3, 1, 1, same},
		{32, 32, 192, 5, 1, 1, same}, {34, 34, 192, 3, 2, 1, valid}, {64, 64, 24, 3, 1, 1, same},
		{64, 64, 48, 3, 1, 1, same}, {64, 64, 144, 3, 1, 1, same}, {68, 68, 144, 5, 2, 1, valid},
		{128, 128, 8, 3, 1, 2, same}, {128, 128, 16, 3, 1, 1, same}, {128, 128, 24, 3, 1, 1, same},
		{130, 130, 64, 3, 2, 1, valid}, {256, 256, 8, 3, 1, 2, same},
	}},
}

const same, valid = schema.PaddingSAME, schema.PaddingVALID

// BenchmarkDepthwiseFloatModels times every float depthwise layer of each
// model, one thread, each layer run twice in a row and timed the second
// time (its input in the caches, as a model's convolution leaves it),
// and reports the sum over the layers of each one's fastest run (the one
// a shared machine's other work slowed least) in ms and as GMAC/s, by the
// clock and (on Linux) by the thread's CPU time, which leaves out the
// time other processes held the core:
//
//	go test -run - -bench DepthwiseFloatModels ./core/kernels/conv
func BenchmarkDepthwiseFloatModels(b *testing.B) {
	for _, m := range dwModels {
		b.Run(m.name, func(b *testing.B) {
			var ops []*DepthwiseConv2D
			var macs float64
			nodes := nodesOf(b, m.layers, &ops, &macs)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			fastest, fastestCPU := make([]time.Duration, len(ops)), make([]time.Duration, len(ops))
			for i := range ops {
				fastest[i], fastestCPU[i] = 1<<62, 1<<62
			}
			eval := func(i int) {
				if err := ops[i].Eval(nodes[i]); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				for i := range ops {
					eval(i)
					start, cpu := time.Now(), threadCPU()
					eval(i)
					fastest[i], fastestCPU[i] = min(fastest[i], time.Since(start)), min(fastestCPU[i], threadCPU()-cpu)
				}
			}
			var sum, sumCPU time.Duration
			for i, op := range ops {
				sum, sumCPU = sum+fastest[i], sumCPU+fastestCPU[i]
				if testing.Verbose() {
					g := &op.geom
					b.Logf("%dx%dx%d k%d s%d: %v (cpu %v), %.1f GMAC/s", g.inH, g.inW, g.inC, g.kH, g.strideH, fastest[i], fastestCPU[i],
						float64(g.outH*g.outW*g.inC*g.kH*g.kW)/fastestCPU[i].Seconds()/1e9)
				}
			}
			b.ReportMetric(float64(sum.Microseconds())/1e3, "best-ms")
			b.ReportMetric(macs/sum.Seconds()/1e9, "best-GMAC/s")
			if sumCPU > 0 {
				b.ReportMetric(float64(sumCPU.Microseconds())/1e3, "best-cpu-ms")
			}
		})
	}
}

// nodesOf prepares a node of every layer (n of each), appending their
// ops to ops and their multiply-adds to macs.
func nodesOf(b *testing.B, layers []dwLayer, ops *[]*DepthwiseConv2D, macs *float64) []*kernel.Node {
	var nodes []*kernel.Node
	for _, l := range layers {
		for range l.n {
			op := &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: l.pad, StrideW: l.s, StrideH: l.s, DepthMultiplier: 1,
				DilationW: 1, DilationH: 1, Activation: schema.ActivationFunctionTypeRELU6}}
			n := convBenchNode(b, op, tensor.Float32, []int{1, l.h, l.w, l.c}, []int{1, l.k, l.k, l.c}, 1)
			out := n.Outputs[0].Shape
			*macs += float64(out[1] * out[2] * l.c * l.k * l.k)
			*ops = append(*ops, op)
			nodes = append(nodes, n)
		}
	}
	return nodes
}
