package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/testsupport/shared"
)

// TestPipelineSimulated: "delego pipeline" runs the two-segment SSD
// MobileNet V2 over sim:2 (a segment on each simulated Edge TPU, through
// one delego-edgetpu plugin) and over sim:1 (both on usb:0), each pipelined
// output equal to the sequential run's, and reports throughput and
// per-segment latency; "delego devices" lists both simulated devices.
func TestPipelineSimulated(t *testing.T) {
	segs := []string{
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite"),
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite"),
	}
	image := shared.Model(t, "cat.bmp")
	for _, c := range []struct {
		sim     string
		devices []string
	}{{"sim:2", []string{"usb:0", "usb:1"}}, {"sim:1", []string{"usb:0", "usb:0"}}} {
		t.Run(c.sim, func(t *testing.T) {
			t.Setenv(edgetpuinfo.EnvDevice, c.sim)
			code, stdout, stderr := cli(t, append(append([]string{"pipeline"}, segs...), "--image", image, "--runs", "3", "--json")...)
			if code != exitOK {
				t.Fatalf("status %d, stderr %q", code, stderr)
			}
			var r pipelineReport
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if r.Runs != 3 || r.MaxInFlight != 4 || r.Simulated != c.sim || len(r.Outputs) != 4 || r.Outputs[0].Name != "TFLite_Detection_PostProcess" {
				t.Errorf("report %+v", r)
			}
			if r.Sequential.PerSecond <= 0 || r.Pipelined.PerSecond <= 0 || r.Speedup <= 0 {
				t.Errorf("throughput %+v %+v", r.Sequential, r.Pipelined)
			}
			for k, s := range r.Segments {
				if s.Device != c.devices[k] || s.Runs != 3 || s.MeanMs <= 0 || s.Model != segs[k] {
					t.Errorf("segment %d: %+v", k, s)
				}
			}
			if !strings.Contains(stderr, "the Edge TPUs are simulated") {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
	t.Setenv(edgetpuinfo.EnvDevice, "sim:2")
	code, stdout, stderr := cli(t, append(append([]string{"pipeline"}, segs...), "--image", image, "--runs", "2")...)
	if code != exitOK || !strings.Contains(stdout, "pipelined:  2 runs") || !strings.Contains(stdout, "every pipelined output equals the sequential run's") {
		t.Errorf("text: status %d, %s%s", code, stdout, stderr)
	}
	raw := filepath.Join(t.TempDir(), "in.raw")
	if err := os.WriteFile(raw, make([]byte, 300*300*3), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = cli(t, append(append([]string{"pipeline"}, segs...), "--input", raw, "--runs", "2", "--devices", "usb:1,usb:0", "--json")...)
	if code != exitOK || !strings.Contains(stdout, `"device": "usb:1"`) {
		t.Errorf("--input and --devices: status %d, %s%s", code, stdout, stderr)
	}
	code, _, stderr = cli(t, append(append([]string{"pipeline"}, segs...), "--input", raw, "--devices", "usb:0")...)
	if code != exitUsage || !strings.Contains(stderr, "--devices names 1 devices for 2 segments") {
		t.Errorf("--devices for one segment: status %d, %s", code, stderr)
	}
	code, _, stderr = cli(t, append(append([]string{"pipeline"}, segs...), "--input", image)...)
	if code != exitError || !strings.Contains(stderr, "normalized_input_image_tensor") {
		t.Errorf("an input of the wrong size: status %d, %s", code, stderr)
	}
	if code, stdout, _ := cli(t, "devices"); code != exitOK || !strings.Contains(stdout, "usb:0  18d1:9302  ready") || !strings.Contains(stdout, "usb:1  18d1:9302  ready") {
		t.Errorf("devices: %d %q", code, stdout)
	}
}

// TestPipelineUsage: the command's mistakes are usage errors that say
// what is wrong.
func TestPipelineUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--image", "x.bmp"}, "need the segments"},
		{[]string{"a.tflite"}, "need --input FILE... or --image PICTURE"},
		{[]string{"a.tflite", "--image", "x", "--input", "y"}, "cannot be used together"},
		{[]string{"a.tflite", "--image", "x", "--runs", "0"}, "--runs must be at least 1"},
	} {
		code, _, stderr := cli(t, append([]string{"pipeline"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: status %d, stderr %q", c.args, code, stderr)
		}
	}
}

// TestPipelineStream: "delego pipeline" over a stream of two pictures on
// sim:2 gives one result per picture, in order: --output holds the last
// segment's outputs of each, byte for byte those of the segments run one
// after the other by "delego run" (segment 0's outputs fed to segment 1 as
// its --input files), and --json with --task detect gives, per picture,
// every output and the objects "delego run --task detect" reads from the
// same outputs, their boxes in the picture's pixels.
func TestPipelineStream(t *testing.T) {
	t.Setenv(edgetpuinfo.EnvDevice, "sim:2")
	segs := []string{
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite"),
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite"),
	}
	pictures := []string{shared.Model(t, "cat.bmp"), shared.Model(t, "grace_hopper.bmp")}
	labels := shared.Model(t, "coco_labels.txt")
	dir := t.TempDir()
	out := filepath.Join(dir, "pipelined.raw")
	args := append(slices.Clone(segs), "--image", pictures[0], "--image", pictures[1], "--runs", "3", "--json", "--task", "detect", "--labels", labels, "--output", out)
	code, stdout, stderr := cli(t, append([]string{"pipeline"}, args...)...)
	if code != exitOK {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	var r struct {
		Runs  int `json:"runs"`
		Items []struct {
			Inputs  []string          `json:"inputs"`
			Outputs []json.RawMessage `json:"outputs"`
			Task    string            `json:"task"`
			Results []adapters.Object `json:"results"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if r.Runs != 3 || len(r.Items) != 2 {
		t.Fatalf("%d runs, %d items; want 3 runs, 2 items", r.Runs, len(r.Items))
	}
	pipelined, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var sequential []byte
	for j, pic := range pictures {
		item := r.Items[j]
		if !slices.Equal(item.Inputs, []string{pic}) || len(item.Outputs) != 4 || item.Task != "detect" {
			t.Errorf("item %d: inputs %q, %d outputs, task %q", j, item.Inputs, len(item.Outputs), item.Task)
		}
		last, objs := sequentialRun(t, segs, pic, labels)
		sequential = append(sequential, last...)
		img, err := adapters.LoadImage(pic)
		if err != nil {
			t.Fatal(err)
		}
		w, h := float32(img.Bounds().Dx()), float32(img.Bounds().Dy())
		if len(item.Results) != len(objs) || len(objs) == 0 {
			t.Fatalf("item %d: %d objects, the sequential run %d", j, len(item.Results), len(objs))
		}
		for i, o := range objs {
			o.BBox = adapters.BBox{YMin: o.BBox.YMin * h, XMin: o.BBox.XMin * w, YMax: o.BBox.YMax * h, XMax: o.BBox.XMax * w}
			if item.Results[i] != o {
				t.Errorf("item %d object %d: %+v, the sequential run's in the picture's pixels %+v", j, i, item.Results[i], o)
			}
		}
	}
	if !bytes.Equal(pipelined, sequential) {
		t.Errorf("--output: %d bytes differ from the sequential run's %d: %s", len(pipelined), len(sequential), firstDiff(pipelined, sequential))
	}
}

// sequentialRun runs segs[0] on the picture and segs[1] on its outputs,
// with "delego run" on the Edge TPU, and returns segment 1's output bytes
// and the objects its --task detect reads (boxes normalised).
func sequentialRun(t *testing.T, segs []string, picture, labels string) ([]byte, []adapters.Object) {
	t.Helper()
	dir := t.TempDir()
	mid := filepath.Join(dir, "mid.raw")
	if code, _, stderr := cli(t, "run", segs[0], "--delegate", "edgetpu", "--image", picture, "--output", mid); code != exitOK {
		t.Fatalf("segment 0: status %d, %s", code, stderr)
	}
	b, err := os.ReadFile(mid)
	if err != nil {
		t.Fatal(err)
	}
	total := len(b)
	args := []string{"run", segs[1], "--delegate", "edgetpu", "--json", "--task", "detect", "--labels", labels, "--output", filepath.Join(dir, "last.raw")}
	for i, n := range []int{19 * 19 * 576, 10 * 10 * 256, 10 * 10 * 1280} { // segment 1's inputs, segment 0's outputs
		if len(b) < n {
			t.Fatalf("segment 0 gave %d bytes, too few for its outputs", total)
		}
		args = append(args, "--input", writeFile(t, dir, fmt.Sprintf("in%d.raw", i), b[:n]))
		b = b[n:]
	}
	code, stdout, stderr := cli(t, args...)
	if code != exitOK || len(b) != 0 {
		t.Fatalf("segment 1: status %d, %s (%d bytes of segment 0 left)", code, stderr, len(b))
	}
	var rep struct {
		Results []adapters.Object `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	last, err := os.ReadFile(filepath.Join(dir, "last.raw"))
	if err != nil {
		t.Fatal(err)
	}
	return last, rep.Results
}

// TestPipelineStreamText: a stream of --input groups (two inputs of the
// stream, raw bytes of the first segment's one input) prints, after the
// measurement, each input's files and its task's table, in order; --runs
// below the stream's length, --input files that do not fill the last
// group, and a task the outputs are not are errors, the last leaving no
// --output file behind.
func TestPipelineStreamText(t *testing.T) {
	t.Setenv(edgetpuinfo.EnvDevice, "sim:2")
	segs := []string{
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite"),
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite"),
	}
	dir := t.TempDir()
	a := writeFile(t, dir, "a.raw", make([]byte, 300*300*3))
	b := writeFile(t, dir, "b.raw", bytes.Repeat([]byte{200}, 300*300*3))
	pipe := func(args ...string) (int, string, string) {
		return cli(t, append(append([]string{"pipeline"}, segs...), args...)...)
	}
	code, stdout, stderr := pipe("--input", a, "--input", b, "--task", "detect")
	ia, ib := strings.Index(stdout, "\ninput 1: "+a+"\n"), strings.Index(stdout, "\ninput 2: "+b+"\n")
	if code != exitOK || ia < 0 || ib < ia || strings.Count(stdout, "rank  id  score") != 2 || !strings.Contains(stdout, "pipelined:  20 runs") {
		t.Errorf("two raw inputs: status %d\n%s%s", code, stdout, stderr)
	}
	pictures := []string{"--image", shared.Model(t, "cat.bmp"), "--image", shared.Model(t, "grace_hopper.bmp")}
	code, _, stderr = pipe(append(pictures, "--runs", "1")...)
	if code != exitUsage || !strings.Contains(stderr, "--runs 1 is fewer than the 2 inputs of the stream") {
		t.Errorf("--runs 1 for 2 pictures: status %d, %s", code, stderr)
	}
	code, _, stderr = cli(t, "pipeline", segs[1], "--input", a, "--input", b)
	if want := "the first segment takes 3 inputs, so --input files come in groups of 3, one group per input of the stream; got 2 files"; code != exitError || !strings.Contains(stderr, want) {
		t.Errorf("two files for segment 1's three inputs: status %d, %s; want %q", code, stderr, want)
	}
	out := filepath.Join(dir, "out.raw")
	code, _, stderr = pipe(append(pictures, "--task", "pose", "--output", out)...)
	if code != exitError || !strings.Contains(stderr, "input 1 of the stream ("+pictures[1]+"): --task pose: ") {
		t.Errorf("--task pose on detections: status %d, %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed pipeline left --output %s: %v", out, err)
	}
}

// TestPipelineCoralSegments: Coral's 3- and 4-segment SSD MobileNet V2
// pipelines (google-coral/test_data's pipeline/ folder, read from
// DELEGO_GITHUB_MODELS laid out as OWNER+NAME/PATH; not in ../shared) run
// over as many simulated Edge TPUs, and every pipelined output equals the
// run of the segments one after another (delego pipeline fails
// otherwise), for a stream of two pictures.
func TestPipelineCoralSegments(t *testing.T) {
	dir := os.Getenv("DELEGO_GITHUB_MODELS")
	if dir == "" {
		t.Skip("set DELEGO_GITHUB_MODELS (a folder of OWNER+NAME/PATH files) holding google-coral+test_data/pipeline/ssd_mobilenet_v2_coco_quant_postprocess_segment_*_of_{3,4}_edgetpu.tflite")
	}
	for _, n := range []int{3, 4} {
		t.Run(fmt.Sprintf("%d segments", n), func(t *testing.T) {
			t.Setenv(edgetpuinfo.EnvDevice, fmt.Sprintf("sim:%d", n))
			var args []string
			for i := range n {
				args = append(args, filepath.Join(dir, "google-coral+test_data", "pipeline",
					fmt.Sprintf("ssd_mobilenet_v2_coco_quant_postprocess_segment_%d_of_%d_edgetpu.tflite", i, n)))
			}
			out := filepath.Join(t.TempDir(), "out.raw")
			args = append(args, "--image", shared.Model(t, "cat.bmp"), "--image", shared.Model(t, "grace_hopper.bmp"), "--runs", "4", "--output", out)
			code, _, stderr := cli(t, append([]string{"pipeline"}, args...)...)
			if code != exitOK {
				t.Fatalf("status %d, stderr %q", code, stderr)
			}
			// Two inputs, each the last segment's four outputs: 20 boxes of 4,
			// 20 classes, 20 scores and the count, as float32.
			if b, err := os.ReadFile(out); err != nil || len(b) != 2*4*(80+20+20+1) {
				t.Errorf("--output: %d bytes (%v), want %d", len(b), err, 2*4*(80+20+20+1))
			}
		})
	}
}
