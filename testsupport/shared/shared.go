// Package shared locates the project's shared test data (models, golden
// outputs) that sits beside the repository as ../shared, or wherever the
// DELEGO_SHARED environment variable points. It also crafts the hostile
// pictures tests feed the decoders (BMPHeader, PNGHeader).
//
// It is test support: tests import it, production code never does (the
// import rules in integration/layers_test.go hold that).
package shared

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Root returns the module's root: the nearest folder above the working
// directory that holds go.mod.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("go.mod not found above the working directory")
		}
	}
}

// Dir returns the shared directory: $DELEGO_SHARED, else the "shared" folder
// beside the module root.
func Dir() (string, error) {
	if d := os.Getenv("DELEGO_SHARED"); d != "" {
		return d, nil
	}
	root, err := Root()
	if err != nil {
		return "", err
	}
	s := filepath.Join(root, "..", "shared")
	if _, err := os.Stat(s); err != nil {
		return "", fmt.Errorf("shared data not found at %s (set DELEGO_SHARED): %w", s, err)
	}
	return filepath.Clean(s), nil
}

// Path joins elements onto the shared directory, failing the test when the
// directory is missing: the shared data is part of the test set-up, never optional.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	d, err := Dir()
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(append([]string{d}, elem...)...)
}

// Model returns the path of a model in shared/models.
func Model(tb testing.TB, name string) string { return Path(tb, "models", name) }

// GoldenTensor describes one tensor of a golden case.
type GoldenTensor struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Shape  []int  `json:"shape"`
	Bytes  int    `json:"bytes"`
	Offset int    `json:"offset"`
}

// GoldenCase is one golden case: a model, its input bytes and TFLite 2.9's outputs.
type GoldenCase struct {
	Name          string         `json:"case"`
	Model         string         `json:"model"`
	InputFile     string         `json:"input_file"`
	OutputFile    string         `json:"output_file"`
	XNNPackOutput string         `json:"xnnpack_output_file"`
	Invoke2Output string         `json:"output_invoke2_file"`
	Inputs        []GoldenTensor `json:"inputs"`
	Outputs       []GoldenTensor `json:"outputs"`
}

// Float reports whether the case's outputs are float32 (compared with a tolerance).
func (c GoldenCase) Float() bool {
	for _, o := range c.Outputs {
		if o.Type == "FLOAT32" {
			return true
		}
	}
	return false
}

// GoldenCases reads every case listed in shared/golden/manifest.json.
func GoldenCases(tb testing.TB) []GoldenCase {
	tb.Helper()
	var manifest struct {
		Cases []string `json:"cases"`
	}
	readJSON(tb, Path(tb, "golden", "manifest.json"), &manifest)
	if len(manifest.Cases) == 0 {
		tb.Fatal("golden manifest lists no cases")
	}
	out := make([]GoldenCase, len(manifest.Cases))
	for i, name := range manifest.Cases {
		readJSON(tb, Path(tb, "golden", name+".json"), &out[i])
		out[i].Name = name
	}
	return out
}

// GoldenCaseNamed is the golden case called name.
func GoldenCaseNamed(tb testing.TB, name string) GoldenCase {
	tb.Helper()
	for _, c := range GoldenCases(tb) {
		if c.Name == name {
			return c
		}
	}
	tb.Fatalf("no golden case %q", name)
	return GoldenCase{}
}

// ReadGolden reads a file of shared/golden.
func ReadGolden(tb testing.TB, file string) []byte {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, "golden", file))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func readJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}
