package kernels

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/delego/delego/core/schema"
	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/tensor"
)

// ---- helpers shared by the detection family's tests ----

// i32T is a constant INT32 tensor, as this family's parameter inputs are.
func i32T(shape []int, v ...int32) *tensor.Tensor { return constT(tensorOf(tensor.Int32, shape, v...)) }

func u8T(shape []int, scale float32, zp int64, v ...uint8) *tensor.Tensor {
	return withQ(tensorOf(tensor.Uint8, shape, v...), scale, zp)
}

func i8T(shape []int, scale float32, zp int64, v ...int8) *tensor.Tensor {
	return withQ(tensorOf(tensor.Int8, shape, v...), scale, zp)
}

func closeF32(a, b []float32, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i])-float64(b[i])) > tol {
			return false
		}
	}
	return true
}

// ---- a FlexBuffers writer for test options ----

// detectionOptions encodes a map of int, float64 and bool values as
// FlexBuffers, every value 8 bytes wide: keys, the keys vector (8-byte
// offsets), the keys vector's offset and width, the values with their size
// prefix, their type bytes, and the root. (Its output was checked with the
// reference Python reader of the flatbuffers project.)
func detectionOptions(t testing.TB, opts map[string]any) []byte {
	t.Helper()
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf []byte
	put := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	keyPos := map[string]int{}
	for _, k := range keys {
		keyPos[k] = len(buf)
		buf = append(append(buf, k...), 0)
	}
	for len(buf)%8 != 0 {
		buf = append(buf, 0)
	}
	put(uint64(len(keys)))
	keysStart := len(buf)
	for _, k := range keys {
		put(uint64(len(buf) - keyPos[k]))
	}
	put(uint64(len(buf) - keysStart)) // offset back to the keys vector
	put(8)                            // keys byte width
	put(uint64(len(keys)))
	valuesStart := len(buf)
	var types []byte
	for _, k := range keys {
		switch v := opts[k].(type) {
		case int:
			put(uint64(int64(v)))
			types = append(types, byte(flexbuf.Int)<<2|3)
		case float64:
			put(math.Float64bits(v))
			types = append(types, byte(flexbuf.Float)<<2|3)
		case bool:
			b := uint64(0)
			if v {
				b = 1
			}
			put(b)
			types = append(types, byte(flexbuf.Bool)<<2|3)
		default:
			t.Fatalf("option %s: type %T", k, v)
		}
	}
	buf = append(buf, types...)
	root := len(buf)
	put(uint64(root - valuesStart))
	return append(buf, byte(flexbuf.Map)<<2|3, 8)
}

func defaultDetectionOptions() map[string]any {
	return map[string]any{
		"max_detections": 3, "max_classes_per_detection": 1, "detections_per_class": 10,
		"use_regular_nms": false, "nms_score_threshold": 0.3, "nms_iou_threshold": 0.5,
		"num_classes": 1, "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0,
	}
}

func withOpts(base map[string]any, kv ...any) map[string]any {
	m := maps(base)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

type detResult struct {
	boxes   []float32 // [n][4]
	classes []float32
	scores  []float32
	num     float32
}

func runDetection(t *testing.T, opts map[string]any, boxes, scores, anchors *tensor.Tensor) (detResult, error) {
	t.Helper()
	p, err := parseDetectionPostProcessOptions(detectionOptions(t, opts))
	if err != nil {
		t.Fatal(err)
	}
	outs := []*tensor.Tensor{outT(tensor.Float32), outT(tensor.Float32), outT(tensor.Float32), outT(tensor.Float32)}
	err = runNode(&detectionPostProcess{p: p}, 1, []*tensor.Tensor{boxes, scores, anchors}, outs)
	if err != nil {
		return detResult{}, err
	}
	return detResult{outs[0].Float32s(), outs[1].Float32s(), outs[2].Float32s(), outs[3].Float32s()[0]}, nil
}

// anchorsT makes float anchors from (ycenter, xcenter, h, w) rows.
func anchorsT(rows ...[4]float32) *tensor.Tensor {
	t := tensor.NewTensor(tensor.Float32, len(rows), 4)
	for i, r := range rows {
		copy(t.Float32s()[4*i:], r[:])
	}
	return t
}

// ---- TFLite_Detection_PostProcess ----

func TestDetectionOptionsParse(t *testing.T) {
	opts := withOpts(defaultDetectionOptions(), "use_regular_nms", true, "max_detections", 7, "y_scale", 2.5)
	delete(opts, "detections_per_class")
	opts["num_classes"] = 4.9 // a float where an int is expected truncates
	p, err := parseDetectionPostProcessOptions(detectionOptions(t, opts))
	if err != nil {
		t.Fatal(err)
	}
	want := detectionPostProcessParams{
		MaxDetections: 7, MaxClassesPerDetection: 1, DetectionsPerClass: 100, UseRegularNMS: true,
		NMSScoreThreshold: 0.3, NMSIoUThreshold: 0.5, NumClasses: 4, YScale: 2.5, XScale: 10, HScale: 5, WScale: 5,
	}
	if p != want {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	// Missing use_regular_nms reads as false, other missing keys as 0.
	p, err = parseDetectionPostProcessOptions(detectionOptions(t, map[string]any{"max_detections": 2}))
	if err != nil || p.UseRegularNMS || p.NumClasses != 0 || p.DetectionsPerClass != 100 || p.MaxDetections != 2 {
		t.Errorf("sparse options: %+v, %v", p, err)
	}
	// Malformed options fail in New, through the op's constructor.
	good := detectionOptions(t, defaultDetectionOptions())
	for _, bad := range [][]byte{nil, good[:len(good)-1], good[:20], {1, 1 << 2, 1}} {
		if _, err := parseDetectionPostProcessOptions(bad); err == nil {
			t.Errorf("options % x: no error", bad)
		}
	}
}

func TestDetectionBoxDecoding(t *testing.T) {
	// Anchor (y, x, h, w) = (0.5, 0.5, 0.2, 0.4), scales 10, 10, 5, 5:
	//   ycenter = 1/10*0.2 + 0.5 = 0.52, xcenter = -2/10*0.4 + 0.5 = 0.42,
	//   half_h = 0.5*exp(0)*0.2 = 0.1, half_w = 0.5*exp(5 ln 2 / 5)*0.4 = 0.4.
	// Second anchor (0.3, 0.7, 0.1, 0.1) with encoding (0, 5, -5 ln 2, 0):
	//   ycenter = 0.3, xcenter = 5/10*0.1 + 0.7 = 0.75,
	//   half_h = 0.5*exp(-ln 2)*0.1 = 0.025, half_w = 0.5*0.1 = 0.05.
	ln2 := float32(math.Ln2)
	boxes := f32T([]int{1, 2, 4}, 1, -2, 0, 5*ln2, 0, 5, -5*ln2, 0)
	scores := f32T([]int{1, 2, 2}, 0, 0.9, 0, 0.8)
	anchors := anchorsT([4]float32{0.5, 0.5, 0.2, 0.4}, [4]float32{0.3, 0.7, 0.1, 0.1})
	r, err := runDetection(t, defaultDetectionOptions(), boxes, scores, anchors)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0.42, 0.02, 0.62, 0.82, 0.275, 0.7, 0.325, 0.8}
	if !closeF32(r.boxes[:8], want, 1e-6) {
		t.Errorf("boxes %v, want %v", r.boxes[:8], want)
	}
	if r.num != 2 || !slices.Equal(r.scores[:2], []float32{0.9, 0.8}) || !slices.Equal(r.classes[:2], []float32{0, 0}) {
		t.Errorf("num %g scores %v classes %v", r.num, r.scores, r.classes)
	}
}

func TestDetectionFastNMS(t *testing.T) {
	// Zero encodings: boxes are the anchors. A = [0.4,0.4,0.6,0.6],
	// B = [0.42,0.4,0.62,0.6] overlaps A with IoU 0.036/0.044 = 0.818,
	// C = [0.05,0.05,0.15,0.15] is apart.
	anchors := anchorsT([4]float32{0.5, 0.5, 0.2, 0.2}, [4]float32{0.52, 0.5, 0.2, 0.2}, [4]float32{0.1, 0.1, 0.1, 0.1})
	boxes := tensor.NewTensor(tensor.Float32, 1, 3, 4)
	scores := f32T([]int{1, 3, 2}, 0, 0.9, 0, 0.8, 0, 0.7)
	cases := []struct {
		name      string
		opts      map[string]any
		wantOrder []int // anchors, in output order
		wantScore []float32
	}{
		{"iou above threshold suppresses", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.5), []int{0, 2}, []float32{0.9, 0.7}},
		{"iou below threshold keeps", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.85), []int{0, 1, 2}, []float32{0.9, 0.8, 0.7}},
		{"score threshold", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.85, "nms_score_threshold", 0.75), []int{0, 1}, []float32{0.9, 0.8}},
		{"threshold is inclusive", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.85, "nms_score_threshold", float64(float32(0.7))), []int{0, 1, 2}, []float32{0.9, 0.8, 0.7}},
		{"max detections", withOpts(defaultDetectionOptions(), "nms_iou_threshold", 0.85, "max_detections", 2), []int{0, 1}, []float32{0.9, 0.8}},
	}
	corners := [][]float32{{0.4, 0.4, 0.6, 0.6}, {0.42, 0.4, 0.62, 0.6}, {0.05, 0.05, 0.15, 0.15}}
	for _, c := range cases {
		r, err := runDetection(t, c.opts, boxes, scores, anchors)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if int(r.num) != len(c.wantOrder) {
			t.Errorf("%s: %g detections, want %d", c.name, r.num, len(c.wantOrder))
			continue
		}
		for i, a := range c.wantOrder {
			if !closeF32(r.boxes[4*i:4*i+4], corners[a], 1e-6) || r.scores[i] != c.wantScore[i] || r.classes[i] != 0 {
				t.Errorf("%s: detection %d = %v %g %g, want anchor %d", c.name, i, r.boxes[4*i:4*i+4], r.scores[i], r.classes[i], a)
			}
		}
	}
}

func TestDetectionFastMultiClass(t *testing.T) {
	// Two anchors, three classes after the background column, two classes
	// kept per box: each detection fills max_classes_per_detection slots in
	// decreasing score order; boxes are ordered by their best class.
	anchors := anchorsT([4]float32{0.1, 0.1, 0.1, 0.1}, [4]float32{0.5, 0.5, 0.1, 0.1})
	boxes := tensor.NewTensor(tensor.Float32, 1, 2, 4)
	scores := f32T([]int{1, 2, 4}, 0, 0.2, 0.6, 0.4, 0, 0.9, 0.1, 0.3)
	opts := withOpts(defaultDetectionOptions(), "max_detections", 2, "max_classes_per_detection", 2, "num_classes", 3, "nms_score_threshold", 0.0)
	r, err := runDetection(t, opts, boxes, scores, anchors)
	if err != nil {
		t.Fatal(err)
	}
	if r.num != 2 || !slices.Equal(r.classes, []float32{0, 2, 1, 2}) || !slices.Equal(r.scores, []float32{0.9, 0.3, 0.6, 0.4}) {
		t.Errorf("num %g classes %v scores %v", r.num, r.classes, r.scores)
	}
	wantBoxes := []float32{0.45, 0.45, 0.55, 0.55, 0.45, 0.45, 0.55, 0.55, 0.05, 0.05, 0.15, 0.15, 0.05, 0.05, 0.15, 0.15}
	if !closeF32(r.boxes, wantBoxes, 1e-6) {
		t.Errorf("boxes %v", r.boxes)
	}
	// Without a background column (3 classes in 3 columns) the labels are
	// the columns themselves.
	scores = f32T([]int{1, 2, 3}, 0.2, 0.6, 0.4, 0.9, 0.1, 0.3)
	r, err = runDetection(t, opts, boxes, scores, anchors)
	if err != nil || !slices.Equal(r.classes, []float32{0, 2, 1, 2}) {
		t.Errorf("no background: classes %v, %v", r.classes, err)
	}
}

func TestDetectionRegularNMS(t *testing.T) {
	anchors := anchorsT([4]float32{0.1, 0.1, 0.1, 0.1}, [4]float32{0.5, 0.5, 0.1, 0.1}, [4]float32{0.9, 0.9, 0.1, 0.1})
	boxes := tensor.NewTensor(tensor.Float32, 1, 3, 4)
	// Class 0: anchor 2 (0.7), anchor 0 (0.5); class 1: anchor 1 (0.5).
	scores := f32T([]int{1, 3, 3}, 0, 0.5, 0.1, 0, 0.2, 0.5, 0, 0.7, 0)
	opts := withOpts(defaultDetectionOptions(), "use_regular_nms", true, "num_classes", 2)
	r, err := runDetection(t, opts, boxes, scores, anchors)
	if err != nil {
		t.Fatal(err)
	}
	// Equal scores: TFLite's merge puts the later class first (confirmed
	// against the TF 2.9 library).
	if r.num != 3 || !slices.Equal(r.classes, []float32{0, 1, 0}) || !slices.Equal(r.scores, []float32{0.7, 0.5, 0.5}) {
		t.Errorf("num %g classes %v scores %v", r.num, r.classes, r.scores)
	}
	want := []float32{0.85, 0.85, 0.95, 0.95, 0.45, 0.45, 0.55, 0.55, 0.05, 0.05, 0.15, 0.15}
	if !closeF32(r.boxes, want, 1e-6) {
		t.Errorf("boxes %v", r.boxes)
	}
	// One box per class: anchor 0's class-0 detection goes, and the unused
	// slot is zeroed.
	r, err = runDetection(t, withOpts(opts, "detections_per_class", 1), boxes, scores, anchors)
	if err != nil || r.num != 2 || !slices.Equal(r.classes, []float32{0, 1, 0}) || !slices.Equal(r.scores, []float32{0.7, 0.5, 0}) ||
		!closeF32(r.boxes[8:], []float32{0, 0, 0, 0}, 0) {
		t.Errorf("detections_per_class 1: %+v, %v", r, err)
	}
	// max_detections 0 leaves min(detections_per_class, 0) = 0 boxes per
	// class, which TFLite rejects.
	if _, err := runDetection(t, withOpts(opts, "max_detections", 0), boxes, scores, anchors); err == nil {
		t.Error("max_detections 0 with regular NMS: no error")
	}
}

func TestDetectionQuantized(t *testing.T) {
	// Box encodings uint8 (scale 0.1, zp 128): (138, 118, 128, 128) is
	// (1, -1, 0, 0). Anchors uint8 (scale 0.01): (50, 50, 20, 40) is
	// (0.5, 0.5, 0.2, 0.4) -> [0.42, 0.26, 0.62, 0.66]; (20, 80, 10, 10)
	// with a zero encoding -> [0.15, 0.75, 0.25, 0.85]. Scores uint8 scale
	// 1/256: 192 is 0.75, 64 is 0.25.
	boxes := u8T([]int{1, 2, 4}, 0.1, 128, 138, 118, 128, 128, 128, 128, 128, 128)
	scores := u8T([]int{1, 2, 2}, 1.0/256, 0, 0, 192, 0, 64)
	anchors := u8T([]int{2, 4}, 0.01, 0, 50, 50, 20, 40, 20, 80, 10, 10)
	opts := withOpts(defaultDetectionOptions(), "max_detections", 2, "nms_score_threshold", 0.2)
	r, err := runDetection(t, opts, boxes, scores, anchors)
	if err != nil {
		t.Fatal(err)
	}
	if r.num != 2 || !slices.Equal(r.scores, []float32{0.75, 0.25}) {
		t.Errorf("num %g scores %v", r.num, r.scores)
	}
	if !closeF32(r.boxes, []float32{0.42, 0.26, 0.62, 0.66, 0.15, 0.75, 0.25, 0.85}, 1e-6) {
		t.Errorf("boxes %v", r.boxes)
	}
	r, err = runDetection(t, withOpts(opts, "nms_score_threshold", 0.3), boxes, scores, anchors)
	if err != nil || r.num != 1 {
		t.Errorf("threshold 0.3: %g detections, %v", r.num, err)
	}
}

func TestDetectionErrors(t *testing.T) {
	anchors := anchorsT([4]float32{0.5, 0.5, 0.1, 0.1})
	boxes := tensor.NewTensor(tensor.Float32, 1, 1, 4)
	scores := f32T([]int{1, 1, 2}, 0, 0.9)
	opts := defaultDetectionOptions()
	// TF 2.9 does not run int8 inputs.
	_, err := runDetection(t, opts, i8T([]int{1, 1, 4}, 0.1, 0), scores, anchors)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("int8 boxes: %v", err)
	}
	bad := []struct {
		name string
		b, s *tensor.Tensor
		a    *tensor.Tensor
		opts map[string]any
	}{
		{"batch 2", tensor.NewTensor(tensor.Float32, 2, 1, 4), scores, anchors, opts},
		{"short encodings", tensor.NewTensor(tensor.Float32, 1, 1, 3), scores, anchors, opts},
		{"score rows", boxes, f32T([]int{1, 2, 2}), anchors, opts},
		{"few anchors", tensor.NewTensor(tensor.Float32, 1, 2, 4), f32T([]int{1, 2, 2}), anchors, opts},
		{"classes", boxes, f32T([]int{1, 1, 4}), anchors, opts},
		{"iou threshold", boxes, scores, anchors, withOpts(opts, "nms_iou_threshold", 0.0)},
		{"max classes", boxes, scores, anchors, withOpts(opts, "max_classes_per_detection", 0)},
		{"max classes, regular", boxes, scores, anchors, withOpts(opts, "max_classes_per_detection", 0, "use_regular_nms", true)},
		{"uint8 boxes, float anchors", u8T([]int{1, 1, 4}, 0.1, 0), scores, anchors, opts},
		{"inverted box", boxes, scores, anchorsT([4]float32{0.5, 0.5, -0.1, 0.1}), opts},
	}
	for _, c := range bad {
		if _, err := runDetection(t, c.opts, c.b, c.s, c.a); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestStdPartialSortDesc(t *testing.T) {
	// Orders produced by libstdc++'s std::partial_sort (GCC 12, the same
	// algorithm as TF 2.9's GCC 10 build) with comparator v[i] > v[j] on
	// indices 0..n-1.
	cases := []struct {
		values []float32
		middle int
		want   []int
	}{
		{[]float32{1, 2, 2, 3, 2, 3, 1}, 3, []int{3, 5, 1, 0, 4, 2, 6}},
		{[]float32{5, 5, 5, 5, 5, 5, 5, 5, 5}, 4, []int{1, 3, 0, 2, 4, 5, 6, 7, 8}},
		{[]float32{1, 3, 3, 2, 3, 1, 2, 3, 2, 1}, 10, []int{7, 4, 2, 1, 3, 8, 6, 9, 0, 5}},
		{[]float32{1, 2, 3, 4, 5, 6}, 0, []int{5, 0, 1, 2, 3, 4}},
		{[]float32{2, 9, 2, 9, 2, 9, 2, 9}, 2, []int{3, 1, 2, 0, 4, 5, 6, 7}},
	}
	for _, c := range cases {
		idx := make([]int, len(c.values))
		for i := range idx {
			idx[i] = i
		}
		stdPartialSortDesc(idx, c.middle, c.values)
		if !slices.Equal(idx, c.want) {
			t.Errorf("%v middle %d: %v, want %v", c.values, c.middle, idx, c.want)
		}
	}
	// One element asked for: the first maximum.
	idx := make([]int, 4)
	decreasingPartialArgSort([]float32{1, 7, 3, 7}, 1, idx)
	if idx[0] != 1 {
		t.Errorf("argmax %d, want 1", idx[0])
	}
}

// ---- L2_NORMALIZATION ----

func TestL2NormFloat(t *testing.T) {
	in := f32T([]int{1, 3, 2}, 3, 4, 0, 0, -1, 1e-8)
	out := outT(tensor.Float32)
	if err := runNode(&l2Norm{}, 1, []*tensor.Tensor{in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	// Rows: (3,4)/5; zero stays zero (the norm is clamped to 1e-6);
	// (-1, 1e-8) is already of norm 1.
	want := []float32{0.6, 0.8, 0, 0, -1, 1e-8}
	if !closeF32(out.Float32s(), want, 1e-7) || !slices.Equal(out.Shape, []int{1, 3, 2}) {
		t.Errorf("got %v %v", out.Float32s(), out.Shape)
	}
	tiny := f32T([]int{2}, 3e-7, 4e-7) // norm 5e-7 < 1e-6: divided by 1e-6
	out = outT(tensor.Float32)
	runNode(&l2Norm{}, 1, []*tensor.Tensor{tiny}, []*tensor.Tensor{out})
	if !closeF32(out.Float32s(), []float32{0.3, 0.4}, 1e-6) {
		t.Errorf("tiny: %v", out.Float32s())
	}
}

func TestL2NormQuantized(t *testing.T) {
	// Expected bytes from the TF 2.9 C library for these inputs.
	u8in := u8T([]int{2, 5}, 0.1, 100, 100, 103, 96, 110, 101, 228, 0, 100, 255, 130)
	out := qOut(tensor.Uint8, 1.0/128, 128)
	if err := runNode(&l2Norm{}, 1, []*tensor.Tensor{u8in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if want := []uint8{128, 162, 82, 242, 139, 200, 71, 128, 216, 145}; !slices.Equal(out.Uint8s(), want) {
		t.Errorf("uint8: %v, want %v", out.Uint8s(), want)
	}
	// A squared norm of 1 takes TFLite's special case (multiplier MaxInt32):
	// 128 + 128 saturates at 255.
	out = qOut(tensor.Uint8, 1.0/128, 128)
	runNode(&l2Norm{}, 1, []*tensor.Tensor{u8T([]int{3}, 0.1, 3, 3, 4, 3)}, []*tensor.Tensor{out})
	if want := []uint8{128, 255, 128}; !slices.Equal(out.Uint8s(), want) {
		t.Errorf("uint8 unit: %v, want %v", out.Uint8s(), want)
	}
	i8in := i8T([]int{2, 5}, 0.1, 3, -5, 7, 0, 127, -128, 3, 3, 3, 3, 2)
	out = qOut(tensor.Int8, 1.0/128, 0)
	if err := runNode(&l2Norm{}, 1, []*tensor.Tensor{i8in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if want := []int8{-6, 3, -2, 88, -93, 0, 0, 0, 0, -128}; !slices.Equal(out.Int8s(), want) {
		t.Errorf("int8: %v, want %v", out.Int8s(), want)
	}
}

// TestL2NormQuantizedVsFloat checks the fixed-point path against a float
// reference: within one step of round(128 * d / |d|).
func TestL2NormQuantizedVsFloat(t *testing.T) {
	seed := uint32(7)
	next := func() int {
		seed = seed*1664525 + 1013904223
		return int(seed >> 24)
	}
	for trial := 0; trial < 200; trial++ {
		depth := 1 + next()%64
		zp := next()
		spread := 1 + next()
		vals := make([]uint8, depth)
		var sq float64
		for i := range vals {
			vals[i] = uint8(min(255, max(0, zp+next()%spread-spread/2)))
			d := float64(int(vals[i]) - zp)
			sq += d * d
		}
		in := u8T([]int{1, depth}, 0.5, int64(zp), vals...)
		out := qOut(tensor.Uint8, 1.0/128, 128)
		if err := runNode(&l2Norm{}, 1, []*tensor.Tensor{in}, []*tensor.Tensor{out}); err != nil {
			t.Fatal(err)
		}
		i8vals := make([]int8, depth)
		for i, v := range vals {
			i8vals[i] = int8(int(v) - 128)
		}
		in8 := i8T([]int{1, depth}, 0.5, int64(zp-128), i8vals...)
		out8 := qOut(tensor.Int8, 1.0/128, 0)
		if err := runNode(&l2Norm{}, 1, []*tensor.Tensor{in8}, []*tensor.Tensor{out8}); err != nil {
			t.Fatal(err)
		}
		if sq <= 1 {
			continue // TFLite's special case: the norm is taken as 1
		}
		for i, v := range vals {
			ref := 128 * float64(int(v)-zp) / math.Sqrt(sq)
			if got := float64(out.Uint8s()[i]) - 128; math.Abs(got-min(max(ref, -128), 127)) > 1 {
				t.Fatalf("uint8 depth %d zp %d: element %d = %g, float %g", depth, zp, i, got, ref)
			}
			if got := float64(out8.Int8s()[i]); math.Abs(got-min(max(ref, -128), 127)) > 1 {
				t.Fatalf("int8 depth %d zp %d: element %d = %g, float %g", depth, zp, i, got, ref)
			}
		}
	}
}

func TestInvSqrtQuantizedMultiplierExpL2Norm(t *testing.T) {
	// m * 2^(shift-31) must approximate 1/sqrt(x).
	for _, x := range []int32{2, 3, 4, 17, 1000, 65025, 1 << 20, 1<<29 + 5, math.MaxInt32} {
		m, shift := InvSqrtQuantizedMultiplierExp(x, -1)
		if shift > 0 {
			t.Errorf("x=%d: shift %d > 0", x, shift)
		}
		got := float64(m) * math.Pow(2, float64(shift-31))
		want := 1 / math.Sqrt(float64(x))
		if math.Abs(got-want)/want > 1e-5 {
			t.Errorf("x=%d: %g, want %g", x, got, want)
		}
	}
	if m, s := InvSqrtQuantizedMultiplierExp(0, -1); m != math.MaxInt32 || s != 0 {
		t.Errorf("x=0: %d %d", m, s)
	}
}

func TestL2NormErrors(t *testing.T) {
	cases := []struct {
		name    string
		k       *l2Norm
		in, out *tensor.Tensor
	}{
		{"uint8 output scale", &l2Norm{}, u8T([]int{2}, 1, 0), qOut(tensor.Uint8, 1.0/256, 128)},
		{"uint8 output zero point", &l2Norm{}, u8T([]int{2}, 1, 0), qOut(tensor.Uint8, 1.0/128, 0)},
		{"int8 output zero point", &l2Norm{}, i8T([]int{2}, 1, 0), qOut(tensor.Int8, 1.0/128, 128)},
		{"int32", &l2Norm{}, tensor.NewTensor(tensor.Int32, 2), outT(tensor.Int32)},
		{"5-D", &l2Norm{}, tensor.NewTensor(tensor.Float32, 1, 1, 1, 1, 2), outT(tensor.Float32)},
		{"activation", &l2Norm{activation: schema.ActivationFunctionTypeRELU}, tensor.NewTensor(tensor.Float32, 2), outT(tensor.Float32)},
	}
	for _, c := range cases {
		if err := runNode(c.k, 1, []*tensor.Tensor{c.in}, []*tensor.Tensor{c.out}); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// ---- SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, SPACE_TO_DEPTH, DEPTH_TO_SPACE ----

// iota8 returns a uint8 tensor holding 1, 2, 3, ...
func iota8(shape ...int) *tensor.Tensor {
	t := u8T(shape, 1, 0)
	for i := range t.Data {
		t.Data[i] = byte(i + 1)
	}
	return t
}

func TestSpaceToBatchND(t *testing.T) {
	// [1, 2, 3, 1] input, block 2x2, padding top 0 bottom 0, left 1 right 0:
	// padded rows are [p 1 2 3] and [p 4 5 6]; output batch (sh*2+sw)
	// takes padded pixel (2*oh+sh, 2*ow+sw).
	in := iota8(1, 2, 3, 1)
	in.Quant.ZeroPoint[0] = 9
	out := qOut(tensor.Uint8, 1, 9) // padding takes the output zero point
	err := runNode(&spaceToBatchND{}, 1, []*tensor.Tensor{in, i32T([]int{2}, 2, 2), i32T([]int{2, 2}, 0, 0, 1, 0)}, []*tensor.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape, []int{4, 1, 2, 1}) {
		t.Fatalf("shape %v", out.Shape)
	}
	if want := []uint8{9, 2, 1, 3, 9, 5, 4, 6}; !slices.Equal(out.Uint8s(), want) {
		t.Errorf("got %v, want %v", out.Uint8s(), want)
	}
	// int8 pads with its zero point too; float with 0.
	in8 := i8T([]int{1, 1, 1, 1}, 1, -7, 5)
	out8 := qOut(tensor.Int8, 1, -7)
	runNode(&spaceToBatchND{}, 1, []*tensor.Tensor{in8, i32T([]int{2}, 1, 2), i32T([]int{2, 2}, 0, 0, 0, 1)}, []*tensor.Tensor{out8})
	if !slices.Equal(out8.Int8s(), []int8{5, -7}) {
		t.Errorf("int8 padding: %v", out8.Int8s())
	}
	// 3-D [batch 2, H 4, C 2] int64, block 2, padding 1/1: batches of the
	// output: (shift 0: padded rows 0,2,4 = p,r1,r3; shift 1: rows 1,3,5 = r0,r2,p)
	// for each input batch in turn.
	in64 := tensor.NewTensor(tensor.Int64, 2, 4, 2)
	for i := range in64.Int64s() {
		in64.Int64s()[i] = int64(100 + i)
	}
	out64 := outT(tensor.Int64)
	if err := runNode(&spaceToBatchND{}, 1, []*tensor.Tensor{in64, i32T([]int{1}, 2), i32T([]int{1, 2}, 1, 1)}, []*tensor.Tensor{out64}); err != nil {
		t.Fatal(err)
	}
	want := []int64{
		0, 0, 102, 103, 106, 107, // batch 0, shift 0
		0, 0, 110, 111, 114, 115, // batch 1, shift 0
		100, 101, 104, 105, 0, 0, // batch 0, shift 1
		108, 109, 112, 113, 0, 0, // batch 1, shift 1
	}
	if !slices.Equal(out64.Shape, []int{4, 3, 2}) || !slices.Equal(out64.Int64s(), want) {
		t.Errorf("3-D: %v %v", out64.Shape, out64.Int64s())
	}
}

func TestBatchToSpaceND(t *testing.T) {
	// The inverse of the first case above, then cropped: 4 batches of 1x2
	// back to 1x2x4, crop left 1 -> the original 2x3.
	in := u8T([]int{4, 1, 2, 1}, 1, 0, 0, 2, 1, 3, 0, 5, 4, 6)
	out := qOut(tensor.Uint8, 1, 0)
	err := runNode(&batchToSpaceND{}, 1, []*tensor.Tensor{in, i32T([]int{2}, 2, 2), i32T([]int{2, 2}, 0, 0, 1, 0)}, []*tensor.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape, []int{1, 2, 3, 1}) || !slices.Equal(out.Uint8s(), []uint8{1, 2, 3, 4, 5, 6}) {
		t.Errorf("got %v %v", out.Shape, out.Uint8s())
	}
	// Round trip through SPACE_TO_BATCH_ND on float data with padding on
	// every side.
	x := f32T([]int{2, 3, 5, 2})
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(i) * 0.5
	}
	mid, back := outT(tensor.Float32), outT(tensor.Float32)
	bs, pads := i32T([]int{2}, 3, 2), i32T([]int{2, 2}, 2, 1, 0, 1)
	if err := runNode(&spaceToBatchND{}, 1, []*tensor.Tensor{x, bs, pads}, []*tensor.Tensor{mid}); err != nil {
		t.Fatal(err)
	}
	if err := runNode(&batchToSpaceND{}, 1, []*tensor.Tensor{mid, bs, pads}, []*tensor.Tensor{back}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Shape, x.Shape) || !slices.Equal(back.Float32s(), x.Float32s()) {
		t.Errorf("round trip: %v %v", back.Shape, back.Float32s())
	}
}

func TestSpaceBatchDynamic(t *testing.T) {
	// Non-constant block shape: the output is sized in Eval.
	bs := i32T([]int{2}, 2, 2)
	bs.Const = false
	out := qOut(tensor.Uint8, 1, 0)
	n := &Node{Inputs: []*tensor.Tensor{iota8(1, 2, 2, 1), bs, i32T([]int{2, 2}, 0, 0, 0, 0)}, Outputs: []*tensor.Tensor{out}, Threads: 1}
	k := &spaceToBatchND{}
	if err := k.Prepare(n); err != nil || !out.Dynamic {
		t.Fatalf("prepare: %v, dynamic %v", err, out.Dynamic)
	}
	if err := k.Eval(n); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape, []int{4, 1, 1, 1}) || !slices.Equal(out.Uint8s(), []uint8{1, 2, 3, 4}) {
		t.Errorf("got %v %v", out.Shape, out.Uint8s())
	}
}

func TestSpaceBatchErrors(t *testing.T) {
	in := iota8(1, 3, 3, 1)
	cases := []struct {
		name string
		op   Op
		ins  []*tensor.Tensor
	}{
		{"not a multiple", &spaceToBatchND{}, []*tensor.Tensor{in, i32T([]int{2}, 2, 2), i32T([]int{2, 2}, 0, 0, 0, 0)}},
		{"negative padding", &spaceToBatchND{}, []*tensor.Tensor{in, i32T([]int{2}, 1, 1), i32T([]int{2, 2}, -1, 1, 0, 0)}},
		{"zero block", &spaceToBatchND{}, []*tensor.Tensor{in, i32T([]int{2}, 0, 1), i32T([]int{2, 2}, 0, 0, 0, 0)}},
		{"block shape length", &spaceToBatchND{}, []*tensor.Tensor{in, i32T([]int{1}, 1), i32T([]int{1, 2}, 0, 0)}},
		{"2-D input", &spaceToBatchND{}, []*tensor.Tensor{iota8(3, 3), i32T([]int{0}), i32T([]int{0, 2})}},
		{"int16", &spaceToBatchND{}, []*tensor.Tensor{tensor.NewTensor(tensor.Int16, 1, 2, 2, 1), i32T([]int{2}, 1, 1), i32T([]int{2, 2}, 0, 0, 0, 0)}},
		{"batch not divisible", &batchToSpaceND{}, []*tensor.Tensor{in, i32T([]int{2}, 2, 1), i32T([]int{2, 2}, 0, 0, 0, 0)}},
		{"crop too big", &batchToSpaceND{}, []*tensor.Tensor{in, i32T([]int{2}, 1, 1), i32T([]int{2, 2}, 2, 2, 0, 0)}},
		{"depth: block", &spaceToDepth{blockSize: 2}, []*tensor.Tensor{in}},
		{"depth: zero block", &spaceToDepth{}, []*tensor.Tensor{in}},
		{"depth: channels", &depthToSpace{blockSize: 2}, []*tensor.Tensor{iota8(1, 1, 1, 3)}},
		{"depth: 3-D", &depthToSpace{blockSize: 1}, []*tensor.Tensor{iota8(1, 1, 3)}},
	}
	for _, c := range cases {
		out := &tensor.Tensor{Type: c.ins[0].Type}
		if err := runNode(c.op, 1, c.ins, []*tensor.Tensor{out}); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestSpaceToDepthAndBack(t *testing.T) {
	// [1, 2, 4, 1] with block 2: output pixel (0, x) holds input
	// (0,2x), (0,2x+1), (1,2x), (1,2x+1).
	in := iota8(1, 2, 4, 1)
	out := qOut(tensor.Uint8, 1, 0)
	if err := runNode(&spaceToDepth{blockSize: 2}, 1, []*tensor.Tensor{in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape, []int{1, 1, 2, 4}) || !slices.Equal(out.Uint8s(), []uint8{1, 2, 5, 6, 3, 4, 7, 8}) {
		t.Errorf("space to depth: %v %v", out.Shape, out.Uint8s())
	}
	back := qOut(tensor.Uint8, 1, 0)
	if err := runNode(&depthToSpace{blockSize: 2}, 1, []*tensor.Tensor{out}, []*tensor.Tensor{back}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Shape, in.Shape) || !slices.Equal(back.Uint8s(), in.Uint8s()) {
		t.Errorf("depth to space: %v %v", back.Shape, back.Uint8s())
	}
	// With channels and 4-byte elements: out[b, y, x, (dy*3+dx)*2+c] =
	// in[b, 3y+dy, 3x+dx, c].
	x := tensor.NewTensor(tensor.Int32, 2, 3, 6, 2)
	for i := range x.Int32s() {
		x.Int32s()[i] = int32(i)
	}
	y := outT(tensor.Int32)
	if err := runNode(&spaceToDepth{blockSize: 3}, 1, []*tensor.Tensor{x}, []*tensor.Tensor{y}); err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 2; b++ {
		for xo := 0; xo < 2; xo++ {
			for dy := 0; dy < 3; dy++ {
				for dx := 0; dx < 3; dx++ {
					for c := 0; c < 2; c++ {
						got := y.Int32s()[((b*2+xo)*9+dy*3+dx)*2+c]
						want := x.Int32s()[((b*3+dy)*6+3*xo+dx)*2+c]
						if got != want {
							t.Fatalf("b%d x%d dy%d dx%d c%d: %d, want %d", b, xo, dy, dx, c, got, want)
						}
					}
				}
			}
		}
	}
	z := outT(tensor.Int32)
	if err := runNode(&depthToSpace{blockSize: 3}, 1, []*tensor.Tensor{y}, []*tensor.Tensor{z}); err != nil || !slices.Equal(z.Int32s(), x.Int32s()) {
		t.Errorf("int32 round trip: %v", err)
	}
}

// ---- TRANSPOSE_CONV ----

func TestTransposeConvFloatByHand(t *testing.T) {
	// Input [1,1,2,1] = (1, 2); weights [1,1,2,1] = (10, 100).
	in := f32T([]int{1, 1, 2, 1}, 1, 2)
	w := f32T([]int{1, 1, 2, 1}, 10, 100)
	w.Const = true
	bias := f32T([]int{1}, 1)
	// VALID, stride 1: output width (2-1)+2 = 3:
	//   (1*10, 1*100 + 2*10, 2*100) + 1.
	out := outT(tensor.Float32)
	k := &transposeConv{padding: schema.PaddingVALID, strideH: 1, strideW: 1}
	if err := runNode(k, 1, []*tensor.Tensor{i32T([]int{4}, 1, 1, 3, 1), w, in, bias}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Float32s(), []float32{11, 121, 201}) {
		t.Errorf("valid: %v", out.Float32s())
	}
	// SAME, stride 2: output width 4, no padding needed: the taps do not
	// overlap: (1*10, 1*100, 2*10, 2*100).
	out = outT(tensor.Float32)
	k = &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 2}
	if err := runNode(k, 1, []*tensor.Tensor{i32T([]int{4}, 1, 1, 4, 1), w, in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Float32s(), []float32{10, 100, 20, 200}) {
		t.Errorf("same: %v", out.Float32s())
	}
	// SAME, stride 1, width 2: total padding 1, left 0: the last tap of the
	// last pixel falls off: (1*10, 1*100 + 2*10).
	out = outT(tensor.Float32)
	k = &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}
	if err := runNode(k, 1, []*tensor.Tensor{i32T([]int{4}, 1, 1, 2, 1), w, in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Float32s(), []float32{10, 120}) {
		t.Errorf("same stride 1: %v", out.Float32s())
	}
}

// tconvCase is a random TRANSPOSE_CONV configuration for the reference tests.
type tconvCase struct {
	pad                  schema.Padding
	sh, sw, fh, fw       int
	batch, inH, inW, inC int
	outH, outW, outC     int
	hasBias              bool
	seed                 uint32
}

func (c *tconvCase) rnd() int {
	c.seed = c.seed*1664525 + 1013904223
	return int(c.seed >> 8)
}

func tconvCases() []tconvCase {
	var cs []tconvCase
	c := tconvCase{seed: 12345}
	for i := 0; i < 40; i++ {
		c.sh, c.sw = 1+c.rnd()%3, 1+c.rnd()%3
		c.fh, c.fw = 1+c.rnd()%4, 1+c.rnd()%4
		c.batch, c.inH, c.inW = 1+c.rnd()%2, 1+c.rnd()%4, 1+c.rnd()%4
		c.inC, c.outC = 1+c.rnd()%4, 1+c.rnd()%4
		c.hasBias = c.rnd()%2 == 0
		if c.rnd()%2 == 0 {
			c.pad = schema.PaddingVALID
			c.outH, c.outW = (c.inH-1)*c.sh+c.fh, (c.inW-1)*c.sw+c.fw
		} else {
			c.pad = schema.PaddingSAME
			c.outH, c.outW = c.inH*c.sh, c.inW*c.sw
		}
		cs = append(cs, c)
	}
	return cs
}

// gather computes, independently of the kernel's scatter, which (input
// pixel, tap) pairs feed output pixel (b, oy, ox): a tap (fy, fx) of input
// (iy, ix) lands at (iy*sh + fy - padTop, ix*sw + fx - padLeft).
func (c tconvCase) gather(f func(b, oy, ox, iy, ix, fy, fx int)) {
	padT := max(((c.inH-1)*c.sh+c.fh-c.outH)/2, 0)
	padL := max(((c.inW-1)*c.sw+c.fw-c.outW)/2, 0)
	for b := 0; b < c.batch; b++ {
		for oy := 0; oy < c.outH; oy++ {
			for ox := 0; ox < c.outW; ox++ {
				for fy := 0; fy < c.fh; fy++ {
					for fx := 0; fx < c.fw; fx++ {
						ny, nx := oy+padT-fy, ox+padL-fx
						if ny%c.sh != 0 || nx%c.sw != 0 || ny < 0 || nx < 0 || ny/c.sh >= c.inH || nx/c.sw >= c.inW {
							continue
						}
						f(b, oy, ox, ny/c.sh, nx/c.sw, fy, fx)
					}
				}
			}
		}
	}
}

func TestTransposeConvFloatVsReference(t *testing.T) {
	for i, c := range tconvCases() {
		in := tensor.NewTensor(tensor.Float32, c.batch, c.inH, c.inW, c.inC)
		w := tensor.NewTensor(tensor.Float32, c.outC, c.fh, c.fw, c.inC)
		w.Const = true
		bias := tensor.NewTensor(tensor.Float32, c.outC)
		for _, s := range [][]float32{in.Float32s(), w.Float32s(), bias.Float32s()} {
			for j := range s {
				s[j] = float32(c.rnd()%2001-1000) / 500
			}
		}
		ins := []*tensor.Tensor{i32T([]int{4}, int32(c.batch), int32(c.outH), int32(c.outW), int32(c.outC)), w, in}
		if c.hasBias {
			ins = append(ins, bias)
		}
		out := outT(tensor.Float32)
		if err := runNode(&transposeConv{padding: c.pad, strideH: c.sh, strideW: c.sw}, 1, ins, []*tensor.Tensor{out}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		ref := make([]float64, c.batch*c.outH*c.outW*c.outC)
		c.gather(func(b, oy, ox, iy, ix, fy, fx int) {
			for o := 0; o < c.outC; o++ {
				for ch := 0; ch < c.inC; ch++ {
					ref[((b*c.outH+oy)*c.outW+ox)*c.outC+o] += float64(in.Float32s()[((b*c.inH+iy)*c.inW+ix)*c.inC+ch]) *
						float64(w.Float32s()[((o*c.fh+fy)*c.fw+fx)*c.inC+ch])
				}
			}
		})
		for j, got := range out.Float32s() {
			want := ref[j]
			if c.hasBias {
				want += float64(bias.Float32s()[j%c.outC])
			}
			if math.Abs(float64(got)-want) > 1e-4 {
				t.Fatalf("case %d (%+v): element %d = %g, want %g", i, c, j, got, want)
			}
		}
	}
}

// TestTransposeConvQuantizedVsReference compares uint8, int8 (per-channel)
// and int16x8 outputs with an int64 gather reference requantized the way
// TFLite does.
func TestTransposeConvQuantizedVsReference(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16} {
		for i, c := range tconvCases() {
			inScale, outScale := float32(0.02+float64(c.rnd()%100)/1000), float32(0.05+float64(c.rnd()%100)/100)
			wScales := make([]float32, c.outC)
			for o := range wScales {
				wScales[o] = float32(0.005 + float64(c.rnd()%100)/2000)
			}
			var inZp, wZp, outZp int64
			in := tensor.NewTensor(typ, c.batch, c.inH, c.inW, c.inC)
			wt := typ
			if typ == tensor.Int16 {
				wt = tensor.Int8
				inScale /= 256
				outScale /= 256
			}
			w := tensor.NewTensor(wt, c.outC, c.fh, c.fw, c.inC)
			w.Const = true
			switch typ {
			case tensor.Uint8:
				inZp, wZp, outZp = int64(c.rnd()%256), int64(c.rnd()%256), int64(c.rnd()%256)
				wScales = wScales[:1]
				c.rndBytes(in.Data)
				c.rndBytes(w.Data)
			case tensor.Int8:
				inZp, outZp = int64(c.rnd()%256-128), int64(c.rnd()%256-128)
				c.rndBytes(in.Data)
				c.rndBytes(w.Data)
			case tensor.Int16:
				for j := range in.Int16s() {
					in.Int16s()[j] = int16(c.rnd())
				}
				c.rndBytes(w.Data)
			}
			in.Quant = &tensor.Quantization{Scale: []float32{inScale}, ZeroPoint: []int64{inZp}}
			w.Quant = &tensor.Quantization{Scale: wScales, ZeroPoint: make([]int64, len(wScales))}
			w.Quant.ZeroPoint[0] = wZp
			biasType := map[tensor.DType]tensor.DType{tensor.Uint8: tensor.Int32, tensor.Int8: tensor.Int32, tensor.Int16: tensor.Int64}[typ]
			bias := tensor.NewTensor(biasType, c.outC)
			biasVals := make([]int64, c.outC)
			for o := range biasVals {
				biasVals[o] = int64(c.rnd()%20001 - 10000)
				if biasType == tensor.Int64 {
					bias.Int64s()[o] = biasVals[o]
				} else {
					bias.Int32s()[o] = int32(biasVals[o])
				}
			}
			bias.Quant = &tensor.Quantization{Scale: []float32{inScale * wScales[0]}, ZeroPoint: []int64{0}}
			ins := []*tensor.Tensor{i32T([]int{4}, int32(c.batch), int32(c.outH), int32(c.outW), int32(c.outC)), w, in}
			if c.hasBias {
				ins = append(ins, bias)
			}
			out := qOut(typ, outScale, outZp)
			if err := runNode(&transposeConv{padding: c.pad, strideH: c.sh, strideW: c.sw}, 1, ins, []*tensor.Tensor{out}); err != nil {
				t.Fatalf("%s case %d: %v", typ, i, err)
			}
			acc := make([]int64, c.batch*c.outH*c.outW*c.outC)
			inAt := func(j int) int64 {
				switch typ {
				case tensor.Uint8:
					return int64(in.Uint8s()[j]) - inZp
				case tensor.Int8:
					return int64(in.Int8s()[j]) - inZp
				}
				return int64(in.Int16s()[j])
			}
			wAt := func(j int) int64 {
				if typ == tensor.Uint8 {
					return int64(w.Uint8s()[j]) - wZp
				}
				return int64(w.Int8s()[j]) // int8 weights' zero point is ignored
			}
			c.gather(func(b, oy, ox, iy, ix, fy, fx int) {
				for o := 0; o < c.outC; o++ {
					for ch := 0; ch < c.inC; ch++ {
						acc[((b*c.outH+oy)*c.outW+ox)*c.outC+o] += inAt(((b*c.inH+iy)*c.inW+ix)*c.inC+ch) * wAt(((o*c.fh+fy)*c.fw+fx)*c.inC+ch)
					}
				}
			})
			lo, hi, _ := tensor.QuantizedRange(typ)
			for j, a := range acc {
				o := j % c.outC
				if c.hasBias {
					a += biasVals[o]
				}
				var m int32
				var s int
				if typ == tensor.Uint8 {
					// TFLite multiplies the two float32 scales in float32.
					m, s = QuantizeMultiplier(float64(inScale*wScales[0]) / float64(outScale))
				} else {
					m, s = QuantizeMultiplier(float64(inScale) * float64(wScales[o]) / float64(outScale))
				}
				var v int32
				if typ == tensor.Int16 && c.hasBias {
					v = MultiplyByQuantizedMultiplier64(a, m, s)
				} else {
					v = MultiplyByQuantizedMultiplier(int32(a), m, s) + int32(outZp)
				}
				v = min(max(v, lo), hi)
				var got int32
				switch typ {
				case tensor.Uint8:
					got = int32(out.Uint8s()[j])
				case tensor.Int8:
					got = int32(out.Int8s()[j])
				default:
					got = int32(out.Int16s()[j])
				}
				if got != v {
					t.Fatalf("%s case %d (%+v): element %d = %d, want %d", typ, i, c, j, got, v)
				}
			}
		}
	}
}

func (c *tconvCase) rndBytes(b []byte) {
	for i := range b {
		b[i] = byte(c.rnd())
	}
}

// TestTransposeConvInt16Wraps checks the TF 2.9 behaviour of 16x8 without
// an int64 bias: int32 accumulators that wrap. 64 channels of 32767*127 sum
// past 2^31.
func TestTransposeConvInt16Wraps(t *testing.T) {
	const inC = 600 // 600 * 32767 * 127 > 2^31
	in := tensor.NewTensor(tensor.Int16, 1, 1, 1, inC)
	w := tensor.NewTensor(tensor.Int8, 1, 1, 1, inC)
	w.Const = true
	for i := 0; i < inC; i++ {
		in.Int16s()[i] = 32767
		w.Int8s()[i] = 127
	}
	in.Quant = &tensor.Quantization{Scale: []float32{1}, ZeroPoint: []int64{0}}
	w.Quant = &tensor.Quantization{Scale: []float32{1}, ZeroPoint: []int64{0}}
	m, s := QuantizeMultiplier(1.0 / (1 << 20))
	sum := int64(inC) * 32767 * 127
	k := &transposeConv{padding: schema.PaddingVALID, strideH: 1, strideW: 1}
	run := func(ins ...*tensor.Tensor) int16 {
		out := qOut(tensor.Int16, 1<<20, 0)
		if err := runNode(k, 1, append([]*tensor.Tensor{i32T([]int{4}, 1, 1, 1, 1), w, in}, ins...), []*tensor.Tensor{out}); err != nil {
			t.Fatal(err)
		}
		return out.Int16s()[0]
	}
	// No bias: the int32 accumulator wraps (about -1715 instead of 2381).
	if got, want := run(), MultiplyByQuantizedMultiplier(int32(uint32(sum)), m, s); int32(got) != want || want > 0 {
		t.Errorf("no bias: got %d, want %d", got, want)
	}
	// An int64 bias makes the accumulator 64-bit: no wrap.
	bias := tensor.NewTensor(tensor.Int64, 1)
	bias.Quant = &tensor.Quantization{Scale: []float32{1}, ZeroPoint: []int64{0}}
	if got, want := run(bias), MultiplyByQuantizedMultiplier64(sum, m, s); int32(got) != want || want != 2381 {
		t.Errorf("int64 bias: got %d, want %d", got, want)
	}
}

func TestTransposeConvErrors(t *testing.T) {
	in := f32T([]int{1, 2, 2, 1})
	w := f32T([]int{1, 3, 3, 1})
	w.Const = true
	u8w := u8T([]int{2, 1, 1, 1}, 0.1, 0)
	u8w.Quant = &tensor.Quantization{Scale: []float32{0.1, 0.2}, ZeroPoint: []int64{0, 0}}
	cases := []struct {
		name string
		k    *transposeConv
		ins  []*tensor.Tensor
	}{
		{"output does not map back", &transposeConv{padding: schema.PaddingVALID, strideH: 2, strideW: 2}, []*tensor.Tensor{i32T([]int{4}, 1, 3, 3, 1), w, in}},
		{"output batch", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{i32T([]int{4}, 2, 2, 2, 1), w, in}},
		{"output channels", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{i32T([]int{4}, 1, 2, 2, 3), w, in}},
		{"shape of 3", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{i32T([]int{3}, 1, 2, 2), w, in}},
		{"zero stride", &transposeConv{padding: schema.PaddingSAME}, []*tensor.Tensor{i32T([]int{4}, 1, 2, 2, 1), w, in}},
		{"channels", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{i32T([]int{4}, 1, 2, 2, 1), f32T([]int{1, 3, 3, 2}), in}},
		{"bias type", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{i32T([]int{4}, 1, 2, 2, 1), w, in, tensor.NewTensor(tensor.Int32, 1)}},
		{"uint8 per-channel", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1},
			[]*tensor.Tensor{i32T([]int{4}, 1, 2, 2, 2), u8w, u8T([]int{1, 2, 2, 1}, 0.1, 0)}},
		{"int32 input", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{i32T([]int{4}, 1, 2, 2, 1), tensor.NewTensor(tensor.Int32, 1, 3, 3, 1), tensor.NewTensor(tensor.Int32, 1, 2, 2, 1)}},
	}
	for _, c := range cases {
		out := &tensor.Tensor{Type: c.ins[2].Type, Quant: &tensor.Quantization{Scale: []float32{1}, ZeroPoint: []int64{0}}}
		if err := runNode(c.k, 1, c.ins, []*tensor.Tensor{out}); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// ---- registrations ----

func TestDetectionRegistrations(t *testing.T) {
	want := map[string]tensor.VersionRange{
		"TFLite_Detection_PostProcess": {Min: 1, Max: 1},
	}
	for _, reg := range detectionOps() {
		v, ok := want[reg.Name()]
		if !ok {
			t.Errorf("unexpected registration %s", reg.Name())
			continue
		}
		if reg.Versions != v {
			t.Errorf("%s: versions %v, want %v", reg.Name(), reg.Versions, v)
		}
		if _, err := reg.New(OpInfo{Version: 1}); err != nil && reg.Custom == "" {
			t.Errorf("%s: New without a model: %v", reg.Name(), err)
		}
		delete(want, reg.Name())
	}
	for name := range want {
		t.Errorf("%s is not registered", name)
	}
	if _, ok := Builtins().Lookup(schema.BuiltinOperatorCUSTOM, "TFLite_Detection_PostProcess"); !ok {
		t.Error("the custom op is not in Builtins()")
	}
}

func TestL2NormRegistrations(t *testing.T) {
	checkRegistrations(t, l2NormOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorL2_NORMALIZATION: {Min: 1, Max: 2},
	})
}

func TestSpaceBatchRegistrations(t *testing.T) {
	checkRegistrations(t, spaceBatchOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorSPACE_TO_BATCH_ND: {Min: 1, Max: 3},
		schema.BuiltinOperatorBATCH_TO_SPACE_ND: {Min: 1, Max: 3},
		schema.BuiltinOperatorSPACE_TO_DEPTH:    {Min: 1, Max: 2},
		schema.BuiltinOperatorDEPTH_TO_SPACE:    {Min: 1, Max: 2},
	})
}

func TestTransposeConvRegistrations(t *testing.T) {
	checkRegistrations(t, transposeConvOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorTRANSPOSE_CONV: {Min: 1, Max: 3},
	})
}
