package integration

import (
	"compress/gzip"
	"encoding/binary"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// MediaPipe's selfie segmentation (the npm package
// @mediapipe/selfie_segmentation) ends in MediaPipe's custom op
// Convolution2DTransposeBias, which TFLite's own library cannot run: delego
// runs it on its CPU kernel (core/kernels/mediapipe). The models are not in
// the repository; with DELEGO_NPM_MODELS=1 the test fetches the package
// with `npm pack` into a temporary folder, runs both models on the Grace
// Hopper portrait and checks that the mask covers the person, and that it
// agrees with TensorFlow Lite 2.9 running the same model with the custom
// node rewritten into its builtin TRANSPOSE_CONV
// (testdata/gen/mediapipe/transpose_conv_bias_reference.py recorded those
// masks from the same input).

// selfieSegmentationPackage is the npm package, at the version the
// references were recorded with.
const selfieSegmentationPackage = "@mediapipe/selfie_segmentation@0.1.1675465747"

// npmModels fetches an npm package's files into a temporary folder and
// returns it, when DELEGO_NPM_MODELS=1 allows the test to reach the
// registry.
func npmModels(t *testing.T, pkg string) string {
	t.Helper()
	if os.Getenv("DELEGO_NPM_MODELS") != "1" {
		t.Skipf("set DELEGO_NPM_MODELS=1 to fetch %s with npm pack and run its models", pkg)
	}
	dir := t.TempDir()
	pack := exec.CommandContext(t.Context(), "npm", "pack", "--silent", "--pack-destination", dir, pkg)
	pack.Dir = dir
	name, err := pack.Output()
	if err != nil {
		t.Fatalf("npm pack %s: %v", pkg, err)
	}
	tgz := filepath.Join(dir, filepath.Base(string(trimNewline(name))))
	untar := exec.CommandContext(t.Context(), "tar", "xzf", tgz, "-C", dir)
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("unpacking %s: %v: %s", tgz, err, out)
	}
	return filepath.Join(dir, "package")
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// readF32Gz reads a gzipped file of little-endian float32 values.
func readF32Gz(t *testing.T, path string) []float32 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// boxMean is the mask's mean over rows [y0, y1) and columns [x0, x1),
// given as fractions of its height and width.
func boxMean(mask []float32, h, w int, y0, y1, x0, x1 float64) float64 {
	var sum float64
	n := 0
	for y := int(y0 * float64(h)); y < int(y1*float64(h)); y++ {
		for x := int(x0 * float64(w)); x < int(x1*float64(w)); x++ {
			sum += float64(mask[y*w+x])
			n++
		}
	}
	return sum / float64(n)
}

func TestSelfieSegmentationCoversPerson(t *testing.T) {
	dir := npmModels(t, selfieSegmentationPackage)
	img, err := adapters.LoadImage(shared.Model(t, "grace_hopper.bmp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"selfie_segmentation", "selfie_segmentation_landscape"} {
		t.Run(name, func(t *testing.T) {
			m, err := model.Load(filepath.Join(dir, name+".tflite"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			it := allocated(t, m, &core.Options{})
			in := it.Input(0)
			// MediaPipe feeds the picture as RGB floats in [0, 1].
			pixels, err := adapters.ImageInput(img, in.Type(), in.Shape(), adapters.Norm{Mean: 0, Std: 255})
			if err != nil {
				t.Fatal(err)
			}
			if err := in.CopyFrom(pixels); err != nil {
				t.Fatal(err)
			}
			if err := it.Invoke(t.Context()); err != nil {
				t.Fatal(err)
			}
			s := it.Output(0).Shape()
			if len(s) != 4 || s[0] != 1 || s[3] != 1 {
				t.Fatalf("mask of shape %v, want [1,H,W,1]", s)
			}
			h, w, mask := s[1], s[2], it.Output(0).Float32s()
			// The portrait: the face in the middle of the upper half, the
			// uniform filling the bottom; the top corners are background.
			face := boxMean(mask, h, w, 0.25, 0.5, 0.4, 0.6)
			topLeft := boxMean(mask, h, w, 0, 0.15, 0, 0.15)
			topRight := boxMean(mask, h, w, 0, 0.15, 0.85, 1)
			all := boxMean(mask, h, w, 0, 1, 0, 1)
			t.Logf("%dx%d mask: face %.3f, top corners %.3f and %.3f, whole %.3f", h, w, face, topLeft, topRight, all)
			if face < 0.95 || topLeft > 0.05 || topRight > 0.05 || all < 0.3 || all > 0.8 {
				t.Errorf("the mask does not cover the person: face %.3f (want >= 0.95), top corners %.3f and %.3f (want <= 0.05), whole %.3f (want 0.3 to 0.8)", face, topLeft, topRight, all)
			}
			ref := readF32Gz(t, filepath.Join("..", "testdata", "gen", "mediapipe", name+"_grace_hopper_tflite29.f32.gz"))
			if len(ref) != len(mask) {
				t.Fatalf("reference of %d values, mask of %d", len(ref), len(mask))
			}
			var maxDiff float64
			flips := 0
			for i, v := range mask {
				maxDiff = math.Max(maxDiff, math.Abs(float64(v)-float64(ref[i])))
				if (v > 0.5) != (ref[i] > 0.5) {
					flips++
				}
			}
			t.Logf("against TFLite 2.9 with TRANSPOSE_CONV: max difference %.3g, %d of %d pixels on the other side of 0.5", maxDiff, flips, len(mask))
			if maxDiff > 1e-4 || flips > 0 {
				t.Errorf("the mask differs from TFLite 2.9's: max difference %.3g (want <= 1e-4), %d pixels on the other side of 0.5", maxDiff, flips)
			}
		})
	}
}
