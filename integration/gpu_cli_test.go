package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// noOpenCL is the reason a machine without an OpenCL platform gives.
const noOpenCL = "no OpenCL platform (install an ICD: pocl-opencl-icd, or your GPU vendor's)"

// TestGpuPluginCLI runs the float MobileNet through the delego-gpu plugin
// from the command line: within the golden tolerance on the OpenCL device
// here (PoCL), and, with the ICD loader pointed at an empty directory, a
// plugin that says why it cannot run, a run that fails naming it, and with
// fallback settings the CPU's golden result.
func TestGpuPluginCLI(t *testing.T) {
	dir := t.TempDir()
	if err := goBuild(dir, nil, "github.com/delego/delego/cmd/delego", "github.com/delego/delego/plugins/gpu/cmd/delego-gpu"); err != nil {
		t.Fatal(err)
	}
	delego := filepath.Join(dir, "delego")
	run := func(env []string, args ...string) (string, string, error) {
		cmd := exec.CommandContext(t.Context(), delego, args...)
		cmd.Env = append(os.Environ(), env...)
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		return o.String(), e.String(), err
	}
	c := shared.GoldenCaseNamed(t, gpuGoldenCase)
	out := filepath.Join(t.TempDir(), "out.raw")
	args := append(goldenArgs(t, c, out), "--delegate", "gpu")
	if _, stderr, err := run(nil, args...); err != nil {
		t.Fatalf("delego %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	if err := compareOutputs(c, readFile(t, out), shared.ReadGolden(t, c.OutputFile)); err != nil {
		t.Errorf("through delego-gpu: %v", err)
	}
	// The plan says which OpenCL device would run it, and that PoCL, which
	// has no fp16, runs is_precision_loss_allowed in fp32.
	stdout, stderr, err := run(nil, "plan", shared.Model(t, c.Model), "--delegate", "gpu")
	if err != nil || !strings.Contains(stdout, "gpu device 0: ") || !strings.Contains(stdout, "in use") ||
		!strings.Contains(stdout, "fp16 no: is_precision_loss_allowed runs in fp32") ||
		!strings.Contains(stdout, "31 nodes: 31 on delegates in 1 partition, 0 on the CPU") {
		t.Errorf("plan: %v\n%s%s", err, stdout, stderr)
	}

	empty := []string{"OCL_ICD_VENDORS=" + t.TempDir()}
	stdout, stderr, err = run(empty, "plugins", "--json")
	if err != nil {
		t.Fatalf("plugins: %v\n%s", err, stderr)
	}
	var r struct {
		Plugins []struct {
			Name, Reason string
			Usable       bool
		}
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Plugins) != 1 || r.Plugins[0].Name != "gpu" || r.Plugins[0].Usable || !strings.Contains(r.Plugins[0].Reason, noOpenCL) {
		t.Errorf("plugins without OpenCL: %+v", r.Plugins)
	}
	os.Remove(out)
	if _, stderr, err := run(empty, args...); err == nil || !strings.Contains(stderr, noOpenCL) {
		t.Errorf("run without OpenCL: %v, stderr %q", err, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed run wrote its output")
	}
	settings := filepath.Join(t.TempDir(), "fallback.json")
	writeFile(t, settings, `{"delegate": "GPU", "fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	_, stderr, err = run(empty, append(args, "--settings", settings)...)
	if err != nil {
		t.Fatalf("with fallback: %v\n%s", err, stderr)
	}
	if err := compareOutputs(c, readFile(t, out), shared.ReadGolden(t, c.OutputFile)); err != nil {
		t.Errorf("with fallback: %v", err)
	}
	if !strings.Contains(stderr, noOpenCL) || !strings.Contains(stderr, "the result came from the CPU fallback") {
		t.Errorf("with fallback: stderr %q", stderr)
	}
}
