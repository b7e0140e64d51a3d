package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/delego/delego/delegate/plugin"
)

// binDir is where delegoBinary builds delego: beside the plugins, not on
// $DELEGO_PLUGIN_PATH (set once by TestMain).
var binDir string

// delegoBinary is the delego command built from this package, for the
// tests that must run it as a process of its own (signals, its own
// standard output); it is built once, on first use.
var delegoBinary = sync.OnceValues(func() (string, error) {
	build := exec.Command("go", "build", "-o", binDir+"/", "github.com/delego/delego/cmd/delego")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build delego: %v\n%s", err, out)
	}
	return filepath.Join(binDir, "delego"), nil
})

// TestMain builds the delego-edgetpu plugin into a temporary directory and
// puts that directory on $DELEGO_PLUGIN_PATH: delego runs the Edge TPU only
// as a plugin process, so the tests that drive it (on the simulator, or
// without a device) need the binary. A test of what a fresh clone does sets
// $DELEGO_PLUGIN_PATH to an empty directory instead.
func TestMain(m *testing.M) {
	os.Exit(runWithPlugins(m))
}

func runWithPlugins(m *testing.M) int {
	dir, err := os.MkdirTemp("", "delego-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", dir, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build delego-edgetpu: %v\n%s", err, out)
		return 1
	}
	os.Setenv(plugin.EnvPath, dir)
	return m.Run()
}
