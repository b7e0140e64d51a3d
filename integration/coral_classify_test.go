package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// coralClassification is one of Coral's expectations for a CPU classifier:
// libcoral's (coral/classification/model_test_cases.bzl: the label among
// the top k with at least the score) or pycoral's (tests/classify_test.py:
// the label first, scoring more than the score).
type coralClassification struct {
	model, picture string
	label, k       int
	score          float64
	// resize is the --resize that gives Coral's checks their pictures:
	// pycoral's tests resize with Pillow's NEAREST; libcoral's with a
	// half-pixel bilinear of its own, for which Pillow's LANCZOS (what
	// pycoral's examples use) stands in.
	resize  string
	pycoral bool // pycoral's check: top 1, score strictly above
}

// coralClassifications are Coral's checks on the CPU models that
// google-coral/test_data holds. Those in ../shared/models run always; the
// others need DELEGO_GITHUB_MODELS (google-coral+test_data/FILE, see
// published_models_test.go). pycoral's runs the Edge TPU model; here its
// CPU twin.
var coralClassifications = []coralClassification{
	{"mobilenet_v1_0.25_128_quant.tflite", "cat.bmp", 283, 3, 0.25, "lanczos", false},
	{"mobilenet_v2_1.0_224_quant.tflite", "cat.bmp", 286, 3, 0.7, "lanczos", false},
	{"tf2_mobilenet_v2_1.0_224_ptq.tflite", "cat.bmp", 286, 3, 0.6, "lanczos", false},
	{"mobilenet_v1_0.5_160_quant.tflite", "cat.bmp", 286, 3, 0.51, "lanczos", false},
	{"mobilenet_v1_0.75_192_quant.tflite", "cat.bmp", 283, 3, 0.35, "lanczos", false},
	{"mobilenet_v2_1.0_224_inat_bird_quant.tflite", "bird.bmp", 659, 1, 0.5, "lanczos", false},
	{"mobilenet_v2_1.0_224_inat_insect_quant.tflite", "dragonfly.bmp", 912, 1, 0.2, "lanczos", false},
	{"mobilenet_v1_0.5_160_quant.tflite", "cat.bmp", 286, 1, 0.67, "nearest", true},
}

// coralFile is name from ../shared/models, else from
// DELEGO_GITHUB_MODELS's copy of google-coral/test_data; "" when neither
// has it.
func coralFile(t *testing.T, name string) string {
	t.Helper()
	if p := shared.Model(t, name); exists(p) {
		return p
	}
	if dir := os.Getenv("DELEGO_GITHUB_MODELS"); dir != "" {
		return filepath.Join(dir, "google-coral+test_data", name)
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestCoralClassificationsThroughCLI: delego run, with the --resize that
// matches Coral's preprocessing, passes Coral's classification checks
// (delego's default nearest neighbour fails 3 of these 8).
func TestCoralClassificationsThroughCLI(t *testing.T) {
	for _, c := range coralClassifications {
		t.Run(c.model+"/"+c.resize, func(t *testing.T) {
			model, picture := coralFile(t, c.model), coralFile(t, c.picture)
			if model == "" || picture == "" {
				t.Skip("not in ../shared/models; set DELEGO_GITHUB_MODELS to a folder holding google-coral+test_data/" + c.model)
			}
			stdout, stderr, err := runDelego(t, "run", model, "--image", picture, "--resize", c.resize,
				"--task", "classify", "--top", strconv.Itoa(c.k), "--json")
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			var r struct {
				Results []struct {
					ID    int
					Score float64
				}
			}
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("%v:\n%s", err, stdout)
			}
			for i, got := range r.Results {
				if got.ID != c.label {
					continue
				}
				if c.pycoral && (i != 0 || !(got.Score > c.score)) || !(got.Score >= c.score) {
					break
				}
				t.Logf("class %d at rank %d, score %.4f (Coral asks %v)", got.ID, i+1, got.Score, c.score)
				return
			}
			t.Errorf("want class %d in the top %d scoring at least %v; got %+v", c.label, c.k, c.score, r.Results)
		})
	}
}
