package integration

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/testsupport/shared"
)

// PoseNet through the Go API: Coral's PosenetDecoderOp runs on delego's
// CPU kernel, alone after the Edge TPU partition of the compiled model, and
// whole in the CPU model; poses are read with the adapters package and
// checked against Coral's reference as libcoral's own test checks them.

const posenet = "posenet_mobilenet_v1_075_353_481_16_quant_decoder"

// runPoseNet runs the model at path on the PoseNet test picture with opts
// and returns its poses, normalised, with the interpreter.
func runPoseNet(t *testing.T, path string, opts *core.Options) ([]shared.RefPose, *core.Interpreter) {
	t.Helper()
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	it := allocated(t, m, opts)
	img, err := adapters.LoadImage(shared.Model(t, "posenet_test_image.bmp"))
	if err != nil {
		t.Fatal(err)
	}
	in := it.Input(0)
	pixels, err := adapters.ImageInput(img, in.Type(), in.Shape(), adapters.Norm{Mean: adapters.DefaultMean, Std: adapters.DefaultStd})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.CopyFrom(pixels); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	outs := make([]adapters.Tensor, it.NumOutputs())
	for i := range outs {
		outs[i] = it.Output(i)
	}
	s := in.Shape()
	poses, err := adapters.Poses(outs, adapters.PoseOptions{Input: adapters.Frame{Width: s[2], Height: s[1]}})
	if err != nil {
		t.Fatal(err)
	}
	ref := make([]shared.RefPose, len(poses))
	for i, p := range poses {
		ref[i].Score = float64(p.Score)
		for k, kp := range p.Keypoints {
			ref[i].Keypoints[k] = shared.RefKeypoint{Score: float64(kp.Score), X: float64(kp.X), Y: float64(kp.Y)}
		}
	}
	return ref, it
}

func TestPoseNetMatchesCoralReference(t *testing.T) {
	got, _ := runPoseNet(t, shared.Model(t, posenet+".tflite"), &core.Options{})
	c, err := shared.ComparePoses(got, shared.PoseReference(t, posenet+"_reference.csv"))
	if err != nil {
		t.Fatal(err)
	}
	t.Log(c)
}

// TestPoseNetEdgeTPUSimulated: on the simulated Edge TPU the compiled model
// runs, its decoder on the CPU after the Edge TPU partition (the poses are
// the simulator's, not checked).
func TestPoseNetEdgeTPUSimulated(t *testing.T) {
	opts, err := edgetpu.EnvOptions(func(k string) (string, bool) { return "sim", k == edgetpuinfo.EnvDevice })
	if err != nil {
		t.Fatal(err)
	}
	path := shared.Model(t, posenet+"_edgetpu.tflite")
	_, it := runPoseNet(t, path, &core.Options{Delegates: []delegate.Delegate{edgetpu.New(opts...)}})
	p := it.Plan()
	if len(p.Partitions) != 1 || p.Partitions[0].Delegate != "edgetpu" || len(p.CPUNodes) != 1 {
		t.Fatalf("plan: %d partitions, CPU nodes %+v; want the Edge TPU partition and one CPU node", len(p.Partitions), p.CPUNodes)
	}
	node := p.CPUNodes[0].Node
	if op := it.Model().NodeView(node).Name; op != "PosenetDecoderOp" || p.Steps[len(p.Steps)-1].Node != node {
		t.Errorf("the last step is node %d (%s), want PosenetDecoderOp on the CPU", node, op)
	}
	if tw := it.Twin(); tw != nil {
		t.Errorf("the simulated Edge TPU fell back to the twin: %v", tw)
	}
	if n := it.Output(3).Float32s()[0]; n < 0 || n > 20 {
		t.Errorf("%v poses", n)
	}
}

// TestPoseNetEdgeTPUTwin: an Edge TPU that fails hands the compiled model
// to its CPU twin, which gives the reference poses.
func TestPoseNetEdgeTPUTwin(t *testing.T) {
	path := shared.Model(t, posenet+"_edgetpu.tflite")
	tpu := &failingTPU{}
	got, it := runPoseNet(t, path, &core.Options{Delegates: []delegate.Delegate{tpu}, Settings: fallbackSettings(false, true), Twin: core.LoadTwin(edgetpuinfo.TwinPath(path))})
	if it.Twin() == nil || tpu.runs != 1 {
		t.Fatalf("Twin() = %v after %d Edge TPU runs; want the twin after one", it.Twin(), tpu.runs)
	}
	if _, err := shared.ComparePoses(got, shared.PoseReference(t, posenet+"_reference.csv")); err != nil {
		t.Fatal(err)
	}
}

// TestPoseNetThroughCLI: the delego binary's run --json --task pose gives
// the reference poses (in the picture's pixels, 640x480), beside every
// output tensor with the shape the decoder gave it.
func TestPoseNetThroughCLI(t *testing.T) {
	stdout, stderr, err := runDelego(t, "run", shared.Model(t, posenet+".tflite"), "--image", shared.Model(t, "posenet_test_image.bmp"), "--task", "pose", "--json")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	var r struct {
		Outputs []struct {
			Shape []int `json:"shape"`
		} `json:"outputs"`
		Results []adapters.Pose `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Outputs) != 4 || !slices.Equal(r.Outputs[0].Shape, []int{1, 20, 17, 2}) {
		t.Fatalf("outputs %+v", r.Outputs)
	}
	got := make([]shared.RefPose, len(r.Results))
	for i, p := range r.Results {
		got[i].Score = float64(p.Score)
		for k, kp := range p.Keypoints {
			got[i].Keypoints[k] = shared.RefKeypoint{Score: float64(kp.Score), X: float64(kp.X) / 640, Y: float64(kp.Y) / 480}
		}
	}
	if _, err := shared.ComparePoses(got, shared.PoseReference(t, posenet+"_reference.csv")); err != nil {
		t.Fatal(err)
	}
}

// TestClassesFromSharedModel: the classification adapter on MobileNet's
// output for the cat picture, through the Go API.
func TestClassesFromSharedModel(t *testing.T) {
	m, err := model.Load(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	it, err := core.NewInterpreter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if err := it.Input(0).CopyFrom(shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.input.raw")); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	labels, err := adapters.ReadLabels(shared.Model(t, "imagenet_labels.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got := adapters.Classes(it.Output(0), 3, 0.1, labels)
	want := []string{"Egyptian cat", "tiger cat", "tabby, tabby cat"} // tied first two: the higher class first, as libcoral
	if len(got) != 3 {
		t.Fatalf("classes %+v", got)
	}
	for i, c := range got {
		if c.Label != want[i] || c.Score < 0.1 {
			t.Errorf("class %d: %+v, want %q", i, c, want[i])
		}
	}
}
