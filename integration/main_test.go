package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binPath is the delego binary built for this test run (set once by TestMain).
var binPath string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "delego-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "delego")
	if out, err := exec.Command("go", "build", "-o", binPath, "github.com/delego/delego/cmd/delego").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build cmd/delego: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
