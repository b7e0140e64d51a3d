package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/testsupport/shared"
)

// runReport is "delego run --json" as a test reads it back.
type runReport struct {
	Model   string `json:"model"`
	Outputs []struct {
		Index        int       `json:"index"`
		Name         string    `json:"name"`
		Type         string    `json:"type"`
		Shape        []int     `json:"shape"`
		Values       []float64 `json:"values"`
		Dequantized  []float64 `json:"dequantized"`
		Quantization *struct {
			Scale     []float64 `json:"scale"`
			ZeroPoint []int64   `json:"zero_point"`
		} `json:"quantization"`
	} `json:"outputs"`
	Task    string          `json:"task"`
	Results json.RawMessage `json:"results"`
}

func runJSONReport(t *testing.T, e env, args ...string) runReport {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := runWith(context.Background(), append(args, "--json"), &stdout, &stderr, e); err != nil {
		t.Fatalf("run %q: %v\n%s", args, err, stderr.String())
	}
	var r runReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("run --json printed no JSON (%v):\n%s", err, stdout.String())
	}
	return r
}

// TestRunJSON: every output with its name, type, shape, every value, and
// the dequantized values of quantized tensors.
func TestRunJSON(t *testing.T) {
	args := append([]string{shared.Model(t, "split_concat.tflite")}, splitConcatInputs(t, t.TempDir())...)
	r := runJSONReport(t, env{registry: splitConcatRegistry(200)}, args...)
	if len(r.Outputs) != 5 || r.Task != "" || r.Results != nil {
		t.Fatalf("%d outputs, task %q, results %s; want 5 outputs, no task", len(r.Outputs), r.Task, r.Results)
	}
	o := r.Outputs[0]
	if o.Name != "concat/split0" || o.Type != "UINT8" || !equalShape(o.Shape, []int{1, 8, 8, 1}) || len(o.Values) != 64 || len(o.Dequantized) != 64 {
		t.Fatalf("output 0: %+v", o)
	}
	if o.Values[63] != 200 || o.Dequantized[0] != 0.5625 || o.Quantization == nil || o.Quantization.Scale[0] != 0.0078125 || o.Quantization.ZeroPoint[0] != 128 {
		t.Errorf("output 0 values %v..., dequantized %v..., quantization %+v", o.Values[:2], o.Dequantized[:2], o.Quantization)
	}
	if o4 := r.Outputs[4]; o4.Index != 4 || len(o4.Values) != 128 {
		t.Errorf("output 4: index %d, %d values", o4.Index, len(o4.Values))
	}
}

// TestRunPoseNetJSON runs PoseNet on its test picture: the decoder's
// outputs have the shapes they take in Invoke, and --task pose gives
// Coral's reference poses within libcoral's test tolerances.
func TestRunPoseNetJSON(t *testing.T) {
	const name = "posenet_mobilenet_v1_075_353_481_16_quant_decoder"
	r := runJSONReport(t, env{}, shared.Model(t, name+".tflite"), "--image", shared.Model(t, "posenet_test_image.bmp"), "--task", "pose")
	for i, want := range [][]int{{1, 20, 17, 2}, {1, 20, 17}, {1, 20}, {1}} {
		if o := r.Outputs[i]; o.Type != "FLOAT32" || !equalShape(o.Shape, want) || len(o.Values) != product(want) || o.Dequantized != nil {
			t.Errorf("output %d: %s %v with %d values (dequantized %v), want FLOAT32 %v", i, o.Type, o.Shape, len(o.Values), o.Dequantized != nil, want)
		}
	}
	var poses []struct {
		Score     float64 `json:"score"`
		Keypoints []struct {
			Name        string
			Y, X, Score float64
		} `json:"keypoints"`
	}
	if err := json.Unmarshal(r.Results, &poses); err != nil {
		t.Fatal(err)
	}
	// Keypoints are in the picture's pixels (640x480).
	got := make([]shared.RefPose, len(poses))
	for i, p := range poses {
		got[i].Score = p.Score
		for k, kp := range p.Keypoints {
			got[i].Keypoints[k] = shared.RefKeypoint{Score: kp.Score, X: kp.X / 640, Y: kp.Y / 480}
		}
	}
	c, err := shared.ComparePoses(got, shared.PoseReference(t, name+"_reference.csv"))
	if err != nil {
		t.Fatal(err)
	}
	t.Log(c)
	if n := r.Outputs[3].Values[0]; n != float64(len(poses)) {
		t.Errorf("%v poses counted, %d reported", n, len(poses))
	}
}

// TestRunClassifyTask: --task classify with a threshold, as JSON; the
// tied first two in libcoral's order, the higher class first.
func TestRunClassifyTask(t *testing.T) {
	r := runJSONReport(t, env{}, shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"), "--image", shared.Model(t, "cat.bmp"),
		"--labels", shared.Model(t, "imagenet_labels.txt"), "--task", "classify", "--threshold", "0.2")
	var classes []struct {
		ID    int     `json:"id"`
		Score float64 `json:"score"`
		Label string  `json:"label"`
	}
	if err := json.Unmarshal(r.Results, &classes); err != nil {
		t.Fatal(err)
	}
	if r.Task != "classify" || len(classes) != 3 || classes[0].Label != "Egyptian cat" || classes[1].Label != "tiger cat" || classes[2].ID != 282 || classes[2].Score < 0.2 {
		t.Errorf("task %q, classes %+v; want Egyptian cat, tiger cat, tabby", r.Task, classes)
	}
}

func TestRunTaskUsage(t *testing.T) {
	m := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{m, "--task", "count"}, `--task "count": want classify, detect, pose or segment`},
		{[]string{m, "--task", "pose", "--top", "3"}, "--top applies to --task classify"},
		{[]string{m, "--threshold", "NaN"}, "--threshold must be a number"},
	} {
		var stdout, stderr bytes.Buffer
		err := runWith(context.Background(), c.args, &stdout, &stderr, env{})
		var u *usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error naming %q", c.args, err, c.want)
		}
	}
}

func equalShape(a, b []int) bool {
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

func product(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// TestRunDetectTask runs the SSD's last segment on the simulated Edge TPU
// (its outputs are the simulator's, so the detections are arbitrary) and
// checks that --task detect reads the post-process outputs as libcoral's
// GetDetectionResults does: one object per counted detection, with its
// class's COCO label and score, its box's ymin and xmin raised to 0 and
// ymax and xmax lowered to 1, by score and then higher class first.
func TestRunDetectTask(t *testing.T) {
	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	model := shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite")
	labelsPath := shared.Model(t, "coco_labels.txt")
	args := append([]string{model, "--delegate", "edgetpu", "--task", "detect", "--labels", labelsPath}, inputArgs(t, model)...)
	r := runJSONReport(t, env{}, args...)
	var objs []adapters.Object
	if err := json.Unmarshal(r.Results, &objs); err != nil {
		t.Fatal(err)
	}
	labels, err := adapters.ReadLabels(labelsPath)
	if err != nil {
		t.Fatal(err)
	}
	boxes, classes, scores, count := r.Outputs[0].Values, r.Outputs[1].Values, r.Outputs[2].Values, r.Outputs[3].Values
	var want []adapters.Object
	for i := range int(count[0]) {
		b := boxes[4*i : 4*i+4]
		id := int(math.Round(classes[i]))
		want = append(want, adapters.Object{ID: id, Label: labels[id], Score: float32(scores[i]), BBox: adapters.BBox{
			YMin: float32(max(0, b[0])), XMin: float32(max(0, b[1])), YMax: float32(min(1, b[2])), XMax: float32(min(1, b[3]))}})
	}
	slices.SortStableFunc(want, func(a, b adapters.Object) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.ID, a.ID))
	})
	if len(objs) != len(want) || len(objs) == 0 {
		t.Fatalf("%d objects for %v detections", len(objs), count)
	}
	clamped := 0
	for i, o := range objs {
		if o != want[i] {
			t.Errorf("object %d: %+v, want %+v", i, o, want[i])
		}
		if o.BBox.YMin == 0 || o.BBox.XMin == 0 {
			clamped++
		}
	}
	if clamped == 0 {
		t.Error("no box reached past the top or left edge: the clamp is not tested")
	}
}

// TestRunTaskMismatchLeavesNoOutput: outputs that are not the task's head
// fail the run with what was expected, before --output appears.
func TestRunTaskMismatchLeavesNoOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.raw")
	args := []string{shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"), "--image", shared.Model(t, "cat.bmp"), "--task", "detect", "--output", out}
	var stdout, stderr bytes.Buffer
	err := runWith(context.Background(), args, &stdout, &stderr, env{})
	if err == nil || !strings.Contains(err.Error(), "--task detect") || !strings.Contains(err.Error(), "4 outputs of TFLite_Detection_PostProcess") {
		t.Errorf("detect on a classifier: %v", err)
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("the failed run left %q", names)
	}
}
