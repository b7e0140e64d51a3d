package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/testsupport/shared"
)

// TestRunVerbosePluginStderr: with -v, "delego run" streams its plugins'
// standard error to its own, each line after the plugin's name; without
// it, a plugin that does not crash is not heard. The fault plugin's
// chatty mode says "chatty plugin starting" as it starts, on its file
// descriptor 2, which the host reads to the end before the run returns.
func TestRunVerbosePluginStderr(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, plugin.Prefix+"fault-chatty")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/delego/delego/testsupport/faultplugin").CombinedOutput(); err != nil {
		t.Fatalf("build the fault plugin: %v\n%s", err, out)
	}
	t.Setenv(plugin.EnvPath, dir)
	args := []string{"run", shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"),
		"--input", shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw"),
		"--output", filepath.Join(t.TempDir(), "out.raw"), "--delegate", "fault-chatty"}

	code, _, stderr := cli(t, append(args, "-v")...)
	if code != 0 {
		t.Fatalf("-v: status %d, stderr %s", code, stderr)
	}
	if !strings.Contains("\n"+stderr, "\n[fault-chatty] chatty plugin starting\n") {
		t.Errorf("-v: stderr lacks the plugin's line after its name:\n%s", stderr)
	}
	code, _, stderr = cli(t, args...)
	if code != 0 || strings.Contains(stderr, "chatty") {
		t.Errorf("without -v: status %d, stderr %q; want the plugin unheard", code, stderr)
	}
}
