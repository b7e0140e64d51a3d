package integration

import (
	"image"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// MediaPipe's face landmark model with attention (in the npm package
// @mediapipe/face_mesh, packed into its assets file) refines the lips and
// eyes with sub-networks on crops of its own feature map: each crop's
// matrix comes from the mesh (Landmarks2TransformMatrix), the crop is
// sampled (TransformTensorBilinear) and the refined landmarks are mapped
// back to the picture (TransformLandmarks). TFLite cannot run those ops;
// delego runs them on its CPU kernels (core/kernels/mediapipe). No
// reference runtime is at hand, but the model checks itself: the refined
// landmarks must land where the mesh puts the same points (MediaPipe's
// tensors_to_face_landmarks_with_attention.pbtxt maps them), which a wrong
// crop matrix, sampling or mapping back breaks (a 0.3 rad error in the
// crop's rotation moves the lips 9 pixels). With DELEGO_NPM_MODELS=1.

const faceMeshPackage = "@mediapipe/face_mesh@0.4.1657299874"

// The mesh landmarks that the lips, left eye and right eye refinements
// replace, in the refinements' order (MediaPipe's
// tensors_to_face_landmarks_with_attention.pbtxt).
var (
	faceLipsMesh = []int{
		61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 185, 40, 39, 37, 0, 267,
		269, 270, 409, 78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308, 191, 80,
		81, 82, 13, 312, 311, 310, 415, 76, 77, 90, 180, 85, 16, 315, 404, 320,
		307, 306, 184, 74, 73, 72, 11, 302, 303, 304, 408, 62, 96, 89, 179, 86, 15,
		316, 403, 319, 325, 292, 183, 42, 41, 38, 12, 268, 271, 272, 407,
	}
	faceLeftEyeMesh = []int{
		33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157,
		173, 130, 25, 110, 24, 23, 22, 26, 112, 243, 247, 30, 29, 27, 28, 56, 190,
		226, 31, 228, 229, 230, 231, 232, 233, 244, 113, 225, 224, 223, 222, 221,
		189, 35, 124, 46, 53, 52, 65, 143, 111, 117, 118, 119, 120, 121, 128, 245,
		156, 70, 63, 105, 66, 107, 55, 193,
	}
	faceRightEyeMesh = []int{
		263, 249, 390, 373, 374, 380, 381, 382, 362, 466, 388, 387, 386, 385, 384,
		398, 359, 255, 339, 254, 253, 252, 256, 341, 463, 467, 260, 259, 257, 258,
		286, 414, 446, 261, 448, 449, 450, 451, 452, 453, 464, 342, 445, 444, 443,
		442, 441, 413, 265, 353, 276, 283, 282, 295, 372, 340, 346, 347, 348, 349,
		350, 357, 465, 383, 300, 293, 334, 296, 336, 285, 417,
	}
)

// packedAsset cuts a file out of an Emscripten packed assets file, at the
// offsets its loader script gives.
func packedAsset(t *testing.T, dir, loader, data, name string) string {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(dir, loader))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"filename": "[^"]*/` + regexp.QuoteMeta(name) + `", "start": (\d+), "end": (\d+)`).FindSubmatch(js)
	if m == nil {
		t.Fatalf("%s does not list %s", loader, name)
	}
	start, _ := strconv.Atoi(string(m[1]))
	end, _ := strconv.Atoi(string(m[2]))
	packed, err := os.ReadFile(filepath.Join(dir, data))
	if err != nil {
		t.Fatal(err)
	}
	if start < 0 || end > len(packed) || start >= end {
		t.Fatalf("%s: %s at [%d, %d) outside the %d bytes of %s", loader, name, start, end, len(packed), data)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, packed[start:end], 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFaceMeshAttentionRefinementsAgree(t *testing.T) {
	dir := npmModels(t, faceMeshPackage)
	path := packedAsset(t, dir, "face_mesh_solution_packed_assets_loader.js", "face_mesh_solution_packed_assets.data", "face_landmark_with_attention.tflite")
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	it := allocated(t, m, &core.Options{})
	img, err := adapters.LoadImage(shared.Model(t, "grace_hopper.bmp"))
	if err != nil {
		t.Fatal(err)
	}
	// The face of the 512x600 portrait, as a face detector would crop it.
	face := img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(142, 85, 402, 345))
	in := it.Input(0)
	pixels, err := adapters.ImageInput(face, in.Type(), in.Shape(), adapters.Norm{Mean: 0, Std: 255})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.CopyFrom(pixels); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]float32{}
	for i := range it.NumOutputs() {
		outputs[it.Output(i).Name()] = it.Output(i).Float32s()
	}
	if flag := outputs["conv_faceflag"]; len(flag) != 1 || !(flag[0] > 0) {
		t.Errorf("face flag %v, want a positive logit (a face)", flag)
	}
	mesh := outputs["output_mesh_identity"]
	if len(mesh) != 468*3 {
		t.Fatalf("mesh of %d values, want 468 landmarks (x, y, z)", len(mesh))
	}
	for _, r := range []struct {
		name   string
		output string
		mesh   []int
	}{
		{"lips", "output_lips", faceLipsMesh},
		{"left eye", "output_left_eye", faceLeftEyeMesh},
		{"right eye", "output_right_eye", faceRightEyeMesh},
	} {
		pts := outputs[r.output]
		if len(pts) != 2*len(r.mesh) {
			t.Errorf("%s: %d values, want %d landmarks (x, y)", r.name, len(pts), len(r.mesh))
			continue
		}
		var sum, worst float64
		for j, k := range r.mesh {
			d := math.Hypot(float64(pts[2*j]-mesh[3*k]), float64(pts[2*j+1]-mesh[3*k+1]))
			sum += d
			worst = math.Max(worst, d)
		}
		mean := sum / float64(len(r.mesh))
		t.Logf("%s: refined landmarks %.2f px from the mesh's on average, %.2f at most (192 px input)", r.name, mean, worst)
		if !(mean < 3.5 && worst < 5) {
			t.Errorf("%s: refined landmarks %.2f px from the mesh's on average, %.2f at most; want under 3.5 and 5", r.name, mean, worst)
		}
	}
}
