package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExampleWritesAndRuns(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := realMain(t.Context(), []string{"example", "--dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, f := range []string{"example.tflite", "input.raw", "labels.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// All four labels are ranked, each once.
	for _, label := range []string{"circle", "square", "stripes", "noise"} {
		if strings.Count(out.String(), label) != 1 {
			t.Errorf("output should rank %q once:\n%s", label, out.String())
		}
	}
}
