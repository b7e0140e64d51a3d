package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/testsupport/shared"
)

// pillowDigests are the SHA-256 digests of Pillow's resizes of the shared
// pictures (adapters/testdata/pilresize.py made them with Pillow 9.4), by
// "picture filter WxH" and "picture filter letterbox WxH".
func pillowDigests(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../../adapters/testdata/pilresize.json")
	if err != nil {
		t.Fatal(err)
	}
	var refs struct {
		Cases []struct {
			Picture, Mode, Filter string
			Width, Height         int
			SHA256                string
		}
		Letterbox []struct {
			Picture, Filter string
			InputWidth      int `json:"input_width"`
			InputHeight     int `json:"input_height"`
			SHA256          string
		}
	}
	if err := json.Unmarshal(data, &refs); err != nil {
		t.Fatal(err)
	}
	d := map[string]string{}
	for _, c := range refs.Cases {
		if c.Mode == "RGB" {
			d[fmt.Sprintf("%s %s %dx%d", c.Picture, c.Filter, c.Width, c.Height)] = c.SHA256
		}
	}
	for _, c := range refs.Letterbox {
		d[fmt.Sprintf("%s %s letterbox %dx%d", c.Picture, c.Filter, c.InputWidth, c.InputHeight)] = c.SHA256
	}
	return d
}

// modelInput runs "delego run" on mobilenet_v1_0.25_128_quant with args
// and stand-in kernels, and returns the input its first convolution saw.
func modelInput(t *testing.T, args ...string) []byte {
	t.Helper()
	var seen []byte
	reg := fakeRegistry(map[schema.BuiltinOperator]func(*kernel.Node) error{
		schema.BuiltinOperatorCONV_2D: func(n *kernel.Node) error {
			if n.Inputs[0].Name == "input" {
				seen = bytes.Clone(n.Inputs[0].Data)
			}
			return nil
		},
		schema.BuiltinOperatorDEPTHWISE_CONV_2D: fill(0),
		schema.BuiltinOperatorAVERAGE_POOL_2D:   fill(0),
		schema.BuiltinOperatorRESHAPE:           fill(0),
		schema.BuiltinOperatorSOFTMAX:           fill(0),
	})
	args = append([]string{shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"), "--image", shared.Model(t, "cat.bmp"), "--output", "/dev/null"}, args...)
	var stdout, stderr bytes.Buffer
	if err := runWith(context.Background(), args, &stdout, &stderr, env{registry: reg}); err != nil {
		t.Fatalf("run %q: %v\n%s", args, err, stderr.String())
	}
	if len(seen) != 128*128*3 {
		t.Fatalf("the model saw %d input bytes, want 128x128x3", len(seen))
	}
	return seen
}

// TestRunResize: --resize feeds the model Pillow's Image.resize bytes
// (lanczos is what pycoral's classify_image.py feeds), and --fit letterbox
// pycoral's set_resized_input's.
func TestRunResize(t *testing.T) {
	digests := pillowDigests(t)
	for _, c := range []struct {
		args []string
		ref  string
	}{
		{[]string{"--resize", "lanczos"}, "cat.bmp lanczos 128x128"},
		{[]string{"--resize", "nearest"}, "cat.bmp nearest 128x128"},
		{[]string{"--resize", "bilinear"}, "cat.bmp bilinear 128x128"},
		{[]string{"--resize", "bicubic"}, "cat.bmp bicubic 128x128"},
		{[]string{"--resize", "area"}, "cat.bmp box 128x128"},
		{[]string{"--resize", "hamming"}, "cat.bmp hamming 128x128"},
		{[]string{"--resize", "lanczos", "--fit", "letterbox"}, "cat.bmp lanczos letterbox 128x128"},
		{[]string{"--fit", "letterbox", "--resize", "nearest"}, "cat.bmp nearest letterbox 128x128"},
	} {
		want, ok := digests[c.ref]
		if !ok {
			t.Fatalf("no reference %q", c.ref)
		}
		d := sha256.Sum256(modelInput(t, c.args...))
		if got := hex.EncodeToString(d[:]); got != want {
			t.Errorf("%q: the model's input is not Pillow's %s", c.args, c.ref)
		}
	}
	// Without --resize, delego's own nearest neighbour, as before.
	if got, want := modelInput(t), shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.input.raw"); !bytes.Equal(got, want) {
		t.Errorf("without --resize the input is not the golden one: %s", firstDiff(got, want))
	}
}

// TestRunLetterboxPose: PoseNet on a letterboxed picture gives keypoints
// in the picture's pixels (the scale reaches --task), within libcoral's
// tolerances of Coral's reference poses.
func TestRunLetterboxPose(t *testing.T) {
	const name = "posenet_mobilenet_v1_075_353_481_16_quant_decoder"
	r := runJSONReport(t, env{}, shared.Model(t, name+".tflite"), "--image", shared.Model(t, "posenet_test_image.bmp"),
		"--task", "pose", "--resize", "lanczos", "--fit", "letterbox")
	var poses []struct {
		Score     float64
		Keypoints []struct{ Y, X, Score float64 }
	}
	if err := json.Unmarshal(r.Results, &poses); err != nil {
		t.Fatal(err)
	}
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
}

func TestRunResizeUsage(t *testing.T) {
	m := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{m, "--input", "x.raw", "--resize", "lanczos"}, "--resize and --fit apply to --image only"},
		{[]string{m, "--input", "x.raw", "--fit", "letterbox"}, "--resize and --fit apply to --image only"},
		{[]string{m, "--image", "x.bmp", "--resize", "antialias"}, `--resize "antialias": want nearest, bilinear, bicubic, lanczos, area or hamming`},
		{[]string{m, "--image", "x.bmp", "--fit", "crop"}, `--fit "crop": want stretch or letterbox`},
	} {
		_, err := parseRunFlags(c.args, &bytes.Buffer{})
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestTuneResize: tune takes --resize and --fit for --image as run does.
func TestTuneResize(t *testing.T) {
	m := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	f, err := parseTuneFlags([]string{m, "--delegate", "cpu", "--out", t.TempDir(), "--image", "x.bmp", "--resize", "area", "--fit", "letterbox"}, &bytes.Buffer{})
	if err != nil || f.resize.resize != adapters.PILBox || f.resize.fit != adapters.Letterbox {
		t.Errorf("parsed %+v, %v; want Pillow's box, letterboxed", f, err)
	}
	_, err = parseTuneFlags([]string{m, "--delegate", "cpu", "--out", t.TempDir(), "--resize", "area"}, &bytes.Buffer{})
	if want := "--resize and --fit apply to --image only"; err == nil || err.Error() != want {
		t.Errorf("--resize without --image: %v, want %q", err, want)
	}
}

// TestPipelineResize: pipeline takes --resize and --fit for --image as run
// does.
func TestPipelineResize(t *testing.T) {
	f, err := parsePipelineFlags([]string{"a.tflite", "--image", "x.bmp", "--resize", "lanczos", "--fit", "letterbox"}, &bytes.Buffer{})
	if err != nil || f.resize.resize != adapters.PILLanczos || f.resize.fit != adapters.Letterbox {
		t.Errorf("parsed %+v, %v; want Pillow's lanczos, letterboxed", f, err)
	}
	_, err = parsePipelineFlags([]string{"a.tflite", "--input", "x.raw", "--fit", "letterbox"}, &bytes.Buffer{})
	if want := "--resize and --fit apply to --image only"; err == nil || err.Error() != want {
		t.Errorf("--fit without --image: %v, want %q", err, want)
	}
}
