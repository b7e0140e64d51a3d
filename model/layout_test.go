package model

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestLayoutUpToDate regenerates layout_gen.go from the schema and checks
// it matches the file in the tree.
func TestLayoutUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs layoutgen")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "layout_gen.go")
	cmd := exec.Command(goTool, "run", "./internal/layoutgen",
		"-schema", "schema/schema.fbs", "-source", "model/schema/schema.fbs", "-o", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("layoutgen: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("layout_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(have, want) {
		t.Error("layout_gen.go is stale: run go generate ./model")
	}
}
