package serve_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/serve"
	"github.com/delego/delego/testsupport/shared"
)

// repo writes a model repository: each path (relative to it) gets the
// content given, or, for a .tflite, a link to the shared model named.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if strings.HasSuffix(name, ".tflite") {
			err = os.Symlink(shared.Model(t, content), path)
		} else {
			err = os.WriteFile(path, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRepository serves a repository of one model in two versions (the
// quantized MobileNet as 1, the float one as 2): a request naming no
// version runs the latest, one naming 1 runs the golden quantized model,
// and the metadata lists both versions.
func TestRepository(t *testing.T) {
	dir := repo(t, map[string]string{
		"mnet/config.json":    `{"instances": 2, "max_queue": 4}`,
		"mnet/1/model.tflite": "mobilenet_v1_0.25_128_quant.tflite",
		"mnet/2/model.tflite": "mobilenet_v1_0.25_128_float.tflite",
		"mnet/labels.txt":     "files beside the versions are left alone",
		".hidden/1/x":         "skipped",
	})
	srcs, err := serve.Repository(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || *srcs[0].Config.Instances != 2 || *srcs[0].Config.MaxQueue != 4 {
		t.Fatalf("sources %+v", srcs)
	}
	r := start(t, srcs, serve.Options{})
	var meta struct {
		Versions []string
		Inputs   []struct{ Datatype string }
	}
	for path, want := range map[string]string{"/v2/models/mnet": "FP32", "/v2/models/mnet/versions/2": "FP32", "/v2/models/mnet/versions/1": "UINT8"} {
		rep := do(t, "GET", r.url+path, nil, nil)
		if err := json.Unmarshal(rep.body, &meta); err != nil || rep.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rep.status, rep.body)
		}
		if strings.Join(meta.Versions, ",") != "1,2" || meta.Inputs[0].Datatype != want {
			t.Errorf("GET %s: %s", path, rep.body)
		}
	}
	g := goldenCase(t, quantCase)
	rep := do(t, "POST", r.url+"/v2/models/mnet/versions/1/infer", g.jsonRequest(t), nil)
	resp := decode(t, rep)
	if rep.status != http.StatusOK || resp.ModelVersion != "1" {
		t.Fatalf("status %d: %s", rep.status, rep.body)
	}
	g.check(t, jsonBytes(t, "UINT8", resp.Outputs[0].Data))
	// Version 2 takes FP32: the UINT8 request is refused naming the input.
	rep = do(t, "POST", r.url+"/v2/models/mnet/infer", g.jsonRequest(t), nil)
	if resp := decode(t, rep); rep.status != http.StatusBadRequest || !strings.Contains(resp.Error, "FP32") {
		t.Errorf("latest version: %d %s", rep.status, rep.body)
	}
}

// TestRepositoryErrors checks that a repository laid out wrong is an error
// that names where.
func TestRepositoryErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		words []string
	}{
		{"empty", map[string]string{"README": "no models"}, []string{"holds no model"}},
		{"no version", map[string]string{"m/config.json": `{}`}, []string{`model "m"`, "no version folder"}},
		{"version not a number", map[string]string{"m/v1/model.tflite": "split_concat.tflite"}, []string{`"v1"`, "positive numbers"}},
		{"version zero", map[string]string{"m/0/model.tflite": "split_concat.tflite"}, []string{`"0"`}},
		{"no model file", map[string]string{"m/1/other.tflite": "split_concat.tflite"}, []string{`model "m" version 1`, "model.tflite"}},
		{"bad name", map[string]string{"m odel/1/model.tflite": "split_concat.tflite"}, []string{`"m odel"`, "' '"}},
		{"unknown config field", map[string]string{"m/config.json": `{"instance": 2}`, "m/1/model.tflite": "split_concat.tflite"}, []string{"config.json", `"instance"`, "max_queue"}},
		{"no instances", map[string]string{"m/config.json": `{"instances": 0}`, "m/1/model.tflite": "split_concat.tflite"}, []string{"config.json", "instances must be at least 1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := serve.Repository(repo(t, c.files))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestParseModel checks --model's NAME=PATH.
func TestParseModel(t *testing.T) {
	src, err := serve.ParseModel("mnet=/m/x=y.tflite")
	if err != nil || src.Name != "mnet" || src.Path != "/m/x=y.tflite" || src.Version != "1" {
		t.Errorf("ParseModel: %+v, %v", src, err)
	}
	for _, bad := range []string{"mnet", "mnet=", "=x.tflite", "a/b=x.tflite", "..=x.tflite"} {
		if _, err := serve.ParseModel(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseModel(%q): %v", bad, err)
		}
	}
}

// TestNewErrors checks that a model that cannot be served stops New with
// an error naming it, and that a name and version given twice is refused.
func TestNewErrors(t *testing.T) {
	srcs := models(t)
	bad := serve.Source{Name: "broken", Version: "3", Path: shared.Model(t, "model_invoking_error.tflite")}
	for _, c := range []struct {
		name    string
		sources []serve.Source
		words   []string
	}{
		{"twice", []serve.Source{srcs[0], srcs[1], srcs[0]}, []string{`model "quant" version 1 is given twice`}},
		{"cannot open", []serve.Source{srcs[0], bad}, []string{`model "broken" version 3`, "fake-op-double"}},
		{"missing file", []serve.Source{{Name: "gone", Version: "1", Path: filepath.Join(t.TempDir(), "gone.tflite")}}, []string{`model "gone" version 1`, "gone.tflite"}},
		{"none", nil, []string{"no model"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := serve.New(t.Context(), nil, c.sources, serve.Options{})
			if err == nil {
				s.Close()
				t.Fatal("no error")
			}
			for _, w := range c.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
