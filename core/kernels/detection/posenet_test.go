package detection

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/testsupport/kerneltest"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
	flatbuffers "github.com/google/flatbuffers/go"
)

// posenetOperator builds a CUSTOM operator carrying opts as FlexBuffers.
func posenetOperator(t *testing.T, opts map[string]any) *schema.Operator {
	t.Helper()
	b := flatbuffers.NewBuilder(256)
	custom := b.CreateByteVector(detectionOptions(t, opts))
	schema.OperatorStart(b)
	schema.OperatorAddCustomOptions(b, custom)
	b.Finish(schema.OperatorEnd(b))
	return schema.GetRootAsOperator(b.FinishedBytes(), 0)
}

func posenetOptions() map[string]any {
	return map[string]any{"max_detections": 3, "score_threshold": 0.5, "stride": 16, "nms_radius": 20.0}
}

func newPosenetForTest(t *testing.T, opts map[string]any) kernel.Op {
	t.Helper()
	reg, ok := kernel.NewRegistry(Ops()...).Lookup(schema.BuiltinOperatorCUSTOM, "PosenetDecoderOp")
	if !ok || !reg.Versions.Contains(1) || reg.Versions.Contains(2) {
		t.Fatalf("PosenetDecoderOp registration %+v, %v; want version 1 only", reg.Versions, ok)
	}
	op, err := reg.New(kernel.OpInfo{Version: 1, Operator: posenetOperator(t, opts)})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// synthPose is one person on an h x w grid: keypoint j sits at cell at[j].
// The heatmaps hold logit hi there and lo elsewhere; the short-range
// offsets point from every cell to the keypoint (a linear field, which
// bilinear sampling reproduces exactly); the mid-range offsets are zero.
func synthPose(h, w, stride int, at [poseKeypoints][2]int, hi, lo float32) (heat, shorts, mids *tensor.Tensor) {
	heat = tensor.NewTensor(tensor.Float32, 1, h, w, poseKeypoints)
	shorts = tensor.NewTensor(tensor.Float32, 1, h, w, 2*poseKeypoints)
	mids = tensor.NewTensor(tensor.Float32, 1, h, w, 4*poseEdges)
	hv, sv := heat.Float32s(), shorts.Float32s()
	for y := range h {
		for x := range w {
			for j, p := range at {
				v := lo
				if p[0] == y && p[1] == x {
					v = hi
				}
				hv[(y*w+x)*poseKeypoints+j] = v
				sv[(y*w+x)*2*poseKeypoints+j] = float32((p[0] - y) * stride)
				sv[(y*w+x)*2*poseKeypoints+poseKeypoints+j] = float32((p[1] - x) * stride)
			}
		}
	}
	return heat, shorts, mids
}

func personAt(dy, dx int) [poseKeypoints][2]int {
	var at [poseKeypoints][2]int
	for j := range at {
		at[j] = [2]int{dy + j/3, dx + j%3}
	}
	return at
}

func posenetOutputs(masks bool) []*tensor.Tensor {
	n := 4
	if masks {
		n = 5
	}
	outs := make([]*tensor.Tensor, n)
	for i := range outs {
		outs[i] = kerneltest.OutT(tensor.Float32)
	}
	return outs
}

func runPosenet(t *testing.T, op kernel.Op, ins []*tensor.Tensor, outs []*tensor.Tensor) {
	t.Helper()
	if err := kerneltest.RunNode(op, 1, ins, outs); err != nil {
		t.Fatal(err)
	}
}

// TestPosenetDecoderOnePose: a synthesized person comes back whole, in
// pixels, with the sigmoid of its heatmap logit as every score; the other
// rows are zero.
func TestPosenetDecoderOnePose(t *testing.T) {
	const h, w, stride = 9, 7, 16
	at := personAt(1, 2)
	heat, shorts, mids := synthPose(h, w, stride, at, 4, -6)
	outs := posenetOutputs(false)
	runPosenet(t, newPosenetForTest(t, posenetOptions()), []*tensor.Tensor{heat, shorts, mids}, outs)
	wantShapes := [][]int{{1, 3, 17, 2}, {1, 3, 17}, {1, 3}, {1}}
	for i, out := range outs {
		if !equalInts(out.Shape, wantShapes[i]) {
			t.Errorf("output %d shape %v, want %v", i, out.Shape, wantShapes[i])
		}
	}
	if n := outs[3].Float32s()[0]; n != 1 {
		t.Fatalf("%v poses, want 1", n)
	}
	score := sigmoid(4)
	if s := outs[2].Float32s(); !near(s[0], score) || s[1] != 0 || s[2] != 0 {
		t.Errorf("pose scores %v, want [%v 0 0]", s, score)
	}
	kp, ks := outs[0].Float32s(), outs[1].Float32s()
	for j, p := range at {
		y, x := kp[2*j], kp[2*j+1]
		if y != float32(p[0]*stride) || x != float32(p[1]*stride) || ks[j] != score {
			t.Errorf("keypoint %d at (%v, %v) score %v, want (%d, %d) %v", j, y, x, ks[j], p[0]*stride, p[1]*stride, score)
		}
	}
	for i, v := range kp[2*poseKeypoints:] {
		if v != 0 {
			t.Fatalf("keypoint value %d past the pose is %v, want 0", 2*poseKeypoints+i, v)
		}
	}
}

// TestPosenetDecoderQuantizedAndThreshold: UINT8 heads decode to the same
// pose as float ones, and a threshold above the pose's score drops it.
func TestPosenetDecoderQuantizedAndThreshold(t *testing.T) {
	const h, w, stride = 8, 8, 16
	at := personAt(2, 3)
	heat, shorts, mids := synthPose(h, w, stride, at, 3, -5)
	q := func(f *tensor.Tensor, scale float32, zp int64) *tensor.Tensor {
		u := kerneltest.QT(tensor.Uint8, f.Shape, scale, zp)
		for i, v := range f.Float32s() {
			u.Data[i] = uint8(int64(math.Round(float64(v/scale))) + zp)
		}
		return u
	}
	ins := []*tensor.Tensor{q(heat, 0.0625, 128), q(shorts, 1, 128), q(mids, 1, 128)}
	outs := posenetOutputs(false)
	runPosenet(t, newPosenetForTest(t, posenetOptions()), ins, outs)
	if n := outs[3].Float32s()[0]; n != 1 {
		t.Fatalf("%v poses, want 1", n)
	}
	kp := outs[0].Float32s()
	for j, p := range at {
		if kp[2*j] != float32(p[0]*stride) || kp[2*j+1] != float32(p[1]*stride) {
			t.Errorf("keypoint %d at (%v, %v), want (%d, %d)", j, kp[2*j], kp[2*j+1], p[0]*stride, p[1]*stride)
		}
	}
	opts := posenetOptions()
	opts["score_threshold"] = 0.96 // sigmoid(3) = 0.9526
	runPosenet(t, newPosenetForTest(t, opts), ins, outs)
	if n := outs[3].Float32s()[0]; n != 0 {
		t.Errorf("threshold 0.96: %v poses, want 0", n)
	}
}

// TestPosenetDecoderMasks: with long-range offsets pointing every cell to
// the person, every mask cell belongs to pose 0.
func TestPosenetDecoderMasks(t *testing.T) {
	const h, w, stride = 6, 6, 16
	at := personAt(1, 1)
	heat, shorts, mids := synthPose(h, w, stride, at, 4, -6)
	longs := shorts // the same field: every cell points at the keypoints
	outs := posenetOutputs(true)
	runPosenet(t, newPosenetForTest(t, posenetOptions()), []*tensor.Tensor{heat, shorts, mids, longs}, outs)
	if !equalInts(outs[4].Shape, []int{1, 3, h, w}) {
		t.Fatalf("mask shape %v", outs[4].Shape)
	}
	m := outs[4].Float32s()
	for i, v := range m {
		if want := float32(0); i < h*w {
			want = 1
			if v != want {
				t.Fatalf("mask value %d is %v, want %v", i, v, want)
			}
		} else if v != want {
			t.Fatalf("mask value %d is %v, want %v", i, v, want)
		}
	}
}

// TestPosenetDecoderTwoPoses: two people far apart give two poses; a
// second copy of the first person within nms_radius is suppressed.
func TestPosenetDecoderTwoPoses(t *testing.T) {
	const h, w, stride = 12, 12, 16
	a, b := personAt(0, 0), personAt(6, 6)
	heat, shorts, mids := synthPose(h, w, stride, a, 4, -6)
	heatB, _, _ := synthPose(h, w, stride, b, 2, -6)
	hv, bv := heat.Float32s(), heatB.Float32s()
	for i := range hv {
		hv[i] = max(hv[i], bv[i])
	}
	// Short offsets: each cell points at the keypoint of the nearer person.
	sv := shorts.Float32s()
	for y := range h {
		for x := range w {
			p := a
			if y+x >= 10 {
				p = b
			}
			for j := range poseKeypoints {
				sv[(y*w+x)*2*poseKeypoints+j] = float32((p[j][0] - y) * stride)
				sv[(y*w+x)*2*poseKeypoints+poseKeypoints+j] = float32((p[j][1] - x) * stride)
			}
		}
	}
	outs := posenetOutputs(false)
	runPosenet(t, newPosenetForTest(t, posenetOptions()), []*tensor.Tensor{heat, shorts, mids}, outs)
	if n := outs[3].Float32s()[0]; n != 2 {
		t.Fatalf("%v poses, want 2", n)
	}
	s := outs[2].Float32s()
	if !near(s[0], sigmoid(4)) || !near(s[1], sigmoid(2)) {
		t.Errorf("pose scores %v, want %v %v", s, sigmoid(4), sigmoid(2))
	}
	kp := outs[0].Float32s()
	if kp[2*poseKeypoints] != float32(b[0][0]*stride) || kp[2*poseKeypoints+1] != float32(b[0][1]*stride) {
		t.Errorf("second pose's nose at (%v, %v), want %v", kp[2*poseKeypoints], kp[2*poseKeypoints+1], b[0])
	}
}

// TestKeypointHeapOrder: the heap pops by decreasing score, and equal
// scores in libstdc++'s std::priority_queue order (worked by hand from
// std::push_heap and std::pop_heap): four equal pushes come out 0, 2, 1, 3.
func TestKeypointHeapOrder(t *testing.T) {
	var h keypointHeap
	for i := range 4 {
		h.push(poseKeypoint{id: i, score: 1})
	}
	var got []int
	for len(h) > 0 {
		got = append(got, h.pop().id)
	}
	if !equalInts(got, []int{0, 2, 1, 3}) {
		t.Errorf("equal scores popped as %v, want [0 2 1 3]", got)
	}
	scores := []float32{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
	for i, s := range scores {
		h.push(poseKeypoint{id: i, score: s})
	}
	last := float32(math.Inf(1))
	for len(h) > 0 {
		c := h.pop()
		if c.score > last {
			t.Fatalf("popped %v after %v", c.score, last)
		}
		last = c.score
	}
}

// TestPosenetDecoderErrors: bad options and shapes are errors that say
// what is wrong.
func TestPosenetDecoderErrors(t *testing.T) {
	reg, _ := kernel.NewRegistry(Ops()...).Lookup(schema.BuiltinOperatorCUSTOM, "PosenetDecoderOp")
	for name, tc := range map[string]struct {
		opts map[string]any
		want string
	}{
		"zero stride":       {map[string]any{"max_detections": 3, "score_threshold": 0.5, "nms_radius": 20.0}, "stride is 0"},
		"no detections":     {map[string]any{"max_detections": 0, "score_threshold": 0.5, "stride": 16, "nms_radius": 20.0}, "max_detections is 0"},
		"threshold":         {map[string]any{"max_detections": 3, "score_threshold": 1.5, "stride": 16, "nms_radius": 20.0}, "score_threshold is 1.5"},
		"negative radius":   {map[string]any{"max_detections": 3, "score_threshold": 0.5, "stride": 16, "nms_radius": -1.0}, "nms_radius is -1"},
		"fractional stride": {map[string]any{"max_detections": 3, "score_threshold": 0.5, "stride": 0.5, "nms_radius": 1.0}, "stride is 0"},
	} {
		_, err := reg.New(kernel.OpInfo{Version: 1, Operator: posenetOperator(t, tc.opts)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", name, err, tc.want)
		}
	}
	if _, err := reg.New(kernel.OpInfo{Version: 1}); err == nil || !strings.Contains(err.Error(), "no custom options") {
		t.Errorf("no options: %v", err)
	}

	heat, shorts, mids := synthPose(5, 5, 16, personAt(0, 0), 1, -1)
	op := newPosenetForTest(t, posenetOptions())
	for name, tc := range map[string]struct {
		ins  []*tensor.Tensor
		outs int
		want string
	}{
		"arity":         {[]*tensor.Tensor{heat, shorts}, 4, "2 inputs and 4 outputs"},
		"channels":      {[]*tensor.Tensor{heat, mids, mids}, 4, "short-range offsets (input 1) of shape [1 5 5 64]"},
		"grid":          {[]*tensor.Tensor{heat, tensor.NewTensor(tensor.Float32, 1, 4, 5, 34), mids}, 4, "on a 4x5 grid, the heatmaps on 5x5"},
		"type":          {[]*tensor.Tensor{tensor.NewTensor(tensor.Int32, 1, 5, 5, 17), shorts, mids}, 4, "INT32"},
		"unquantized":   {[]*tensor.Tensor{tensor.NewTensor(tensor.Uint8, 1, 5, 5, 17), shorts, mids}, 4, "without quantization"},
		"batch":         {[]*tensor.Tensor{tensor.NewTensor(tensor.Float32, 2, 5, 5, 17), shorts, mids}, 4, "want [1,height,width,17]"},
		"masks outputs": {[]*tensor.Tensor{heat, shorts, mids, shorts}, 4, "4 inputs and 4 outputs"},
	} {
		outs := make([]*tensor.Tensor, tc.outs)
		for i := range outs {
			outs[i] = kerneltest.OutT(tensor.Float32)
		}
		err := op.Prepare(&kernel.Node{Inputs: tc.ins, Outputs: outs, Threads: 1})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", name, err, tc.want)
		}
	}
	outs := posenetOutputs(false)
	outs[2] = kerneltest.OutT(tensor.Uint8)
	err := op.Prepare(&kernel.Node{Inputs: []*tensor.Tensor{heat, shorts, mids}, Outputs: outs, Threads: 1})
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("UINT8 output: %v, want ErrUnsupported", err)
	}
}

// near: a pose score, a mean of 17 float32 scores, is within rounding of
// the keypoints' common score.
func near(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-6 }

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// posenetModelOptions returns the custom options of the PosenetDecoderOp
// node of a shared model.
func posenetModelOptions(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(shared.Model(t, name))
	if err != nil {
		t.Fatal(err)
	}
	m := schema.GetRootAsModel(b, 0)
	var sg schema.SubGraph
	var op schema.Operator
	var code schema.OperatorCode
	m.Subgraphs(&sg, 0)
	for i := range sg.OperatorsLength() {
		sg.Operators(&op, i)
		m.OperatorCodes(&code, int(op.OpcodeIndex()))
		if string(code.CustomCode()) == "PosenetDecoderOp" {
			return op.CustomOptionsBytes()
		}
	}
	t.Fatalf("%s has no PosenetDecoderOp", name)
	return nil
}

// TestPosenetModelOptions reads the options Coral's PoseNet carries.
func TestPosenetModelOptions(t *testing.T) {
	p, err := parsePosenetOptions(posenetModelOptions(t, "posenet_mobilenet_v1_075_353_481_16_quant_decoder.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxDetections != 20 || p.Stride != 16 || !(p.ScoreThreshold > 0 && p.ScoreThreshold < 1) || !(p.NMSRadius > 0) {
		t.Errorf("options %+v", p)
	}
	t.Logf("%+v", p)
}

// TestPosenetDecoderAllocs: Eval allocates nothing once prepared.
func TestPosenetDecoderAllocs(t *testing.T) {
	heat, shorts, mids := synthPose(9, 7, 16, personAt(1, 2), 4, -6)
	op := newPosenetForTest(t, posenetOptions())
	n := &kernel.Node{Inputs: []*tensor.Tensor{heat, shorts, mids}, Outputs: posenetOutputs(false), Threads: 1}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	for _, o := range n.Outputs {
		o.Data = make([]byte, o.Bytes())
	}
	if allocs := testing.AllocsPerRun(10, func() { op.Eval(n) }); allocs != 0 {
		t.Errorf("Eval allocates %v times per run", allocs)
	}
}

// FuzzPosenetOptions: any options bytes give a kernel or an error, never a
// panic.
func FuzzPosenetOptions(f *testing.F) {
	f.Add(posenetModelOptions(f, "posenet_mobilenet_v1_075_353_481_16_quant_decoder.tflite"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := parsePosenetOptions(b); err == nil && p.check() != nil {
			t.Fatalf("options %+v accepted", p)
		}
	})
}

// TestPosenetDecoderRandomHeads: on random quantized heads of several grid
// sizes, with masks, the decoder stays inside its buffers, finds at most
// max_detections poses with scores in [threshold, 1] by decreasing score,
// and keeps every keypoint on the grid.
func TestPosenetDecoderRandomHeads(t *testing.T) {
	opts := posenetOptions()
	opts["max_detections"], opts["score_threshold"] = 5, 0.1
	for seed, grid := range [][2]int{{1, 1}, {1, 7}, {5, 3}, {9, 12}} {
		h, w := grid[0], grid[1]
		ins := []*tensor.Tensor{
			kerneltest.LcgFill(kerneltest.QT(tensor.Uint8, []int{1, h, w, 17}, 0.1, 128), uint32(seed)),
			kerneltest.LcgFill(kerneltest.QT(tensor.Uint8, []int{1, h, w, 34}, 0.5, 128), uint32(seed+10)),
			kerneltest.LcgFill(kerneltest.QT(tensor.Uint8, []int{1, h, w, 64}, 0.5, 128), uint32(seed+20)),
			kerneltest.LcgFill(kerneltest.QT(tensor.Uint8, []int{1, h + 1, w + 2, 34}, 0.5, 128), uint32(seed+30)),
		}
		outs := posenetOutputs(true)
		runPosenet(t, newPosenetForTest(t, opts), ins, outs)
		n := int(outs[3].Float32s()[0])
		t.Logf("%dx%d: %d poses", h, w, n)
		if n < 0 || n > 5 {
			t.Fatalf("%dx%d: %d poses", h, w, n)
		}
		scores := outs[2].Float32s()
		for i := range n {
			if scores[i] < 0.1 || scores[i] > 1 || (i > 0 && scores[i] > scores[i-1]) {
				t.Errorf("%dx%d: pose scores %v", h, w, scores[:n])
			}
		}
		for i, v := range outs[0].Float32s()[:n*34] {
			limit := float32(16 * (h - 1)) // y, then x
			if i%2 == 1 {
				limit = float32(16 * (w - 1))
			}
			if v < 0 || v > limit {
				t.Errorf("%dx%d: keypoint value %d is %v, outside [0, %v]", h, w, i, v, limit)
			}
		}
		if !equalInts(outs[4].Shape, []int{1, 5, h + 1, w + 2}) {
			t.Errorf("%dx%d: mask shape %v", h, w, outs[4].Shape)
		}
	}
}
