package main

import (
	"fmt"
	"os"
	"os/exec"

	"testing"

	"github.com/delego/delego/delegate/plugin"
)

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
	build := exec.Command("go", "build", "-o", dir, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build delego-edgetpu: %v\n%s", err, out)
		return 1
	}
	os.Setenv(plugin.EnvPath, dir)
	return m.Run()
}
