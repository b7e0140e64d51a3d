package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/delego/delego/delegate/delegatetest"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/testsupport/shared"
)

// conformPlugins builds the plugins delego conform is tried on, once: cpu,
// xnnpack, gpu, and testsupport/wrongplugin under each of its names. It
// returns their directory (apart from $DELEGO_PLUGIN_PATH's).
var conformPlugins = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(filepath.Dir(binDir), "conform")
	build := exec.Command("go", "build", "-o", dir+"/",
		"github.com/delego/delego/plugins/cpu/cmd/delego-cpu",
		"github.com/delego/delego/plugins/xnnpack/cmd/delego-xnnpack",
		"github.com/delego/delego/plugins/gpu/cmd/delego-gpu")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the plugins: %v\n%s", err, out)
	}
	wrong := filepath.Join(dir, "wrongplugin")
	build = exec.Command("go", "build", "-o", wrong, "github.com/delego/delego/testsupport/wrongplugin")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the wrong plugin: %v\n%s", err, out)
	}
	for _, mode := range []string{"offbyone", "nocompile", "stdout"} {
		if err := os.Link(wrong, filepath.Join(dir, "delego-wrong-"+mode)); err != nil {
			return "", err
		}
	}
	return dir, nil
})

// conformPlugin returns the path of the plugin binary delego-name that
// conformPlugins built.
func conformPlugin(t *testing.T, name string) string {
	t.Helper()
	dir, err := conformPlugins()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "delego-"+name)
}

// passSummary is the last line of a report that passed.
var passSummary = regexp.MustCompile(`(?m)^PASS: \d+ passed, 0 failed, \d+ not covered$`)

// TestConformPlugins: delego's cpu and xnnpack plugins pass delego conform,
// xnnpack declaring one quantization step (its quantized kernels round
// otherwise than delego's).
func TestConformPlugins(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"cpu", nil},
		{"xnnpack", []string{"--int-tolerance", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) { conformPasses(t, c.name, c.args...) })
	}
}

// TestConformGPU: the gpu plugin passes delego conform on PoCL, declaring
// one quantization step (it computes 8-bit ops in float and rounds back),
// one graph per case (each compile builds OpenCL programs, which PoCL
// compiles slowly: the longest of these tests).
func TestConformGPU(t *testing.T) {
	conformPasses(t, "gpu", "--int-tolerance", "1", "--cases", "1")
}

// conformPasses runs delego conform on the plugin delego-name that
// conformPlugins built, and checks that every check passed.
func conformPasses(t *testing.T, name string, args ...string) {
	t.Helper()
	code, stdout, stderr := cli(t, append([]string{"conform", conformPlugin(t, name)}, args...)...)
	if code != exitOK || !passSummary.MatchString(stdout) {
		t.Fatalf("exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	for _, check := range []string{"start", "ops", "faults", "concurrency", "resize", "release"} {
		if !strings.Contains(stdout, "PASS        "+check+": ") {
			t.Errorf("no %s case passed:\n%s", check, stdout)
		}
	}
}

// TestConformByName: PLUGIN is a name found on the search path, as
// delego plugins finds it; an unknown name is an error that says where it
// looked.
func TestConformByName(t *testing.T) {
	t.Setenv("DELEGO_PLUGIN_PATH", filepath.Dir(conformPlugin(t, "cpu")))
	code, stdout, stderr := cli(t, "conform", "cpu", "--cases", "1", "--json")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var r delegatetest.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.Plugin != "cpu" || r.Seed != 1 || r.Graphs != 1 || len(r.Cases) < 100 || r.Failed() {
		t.Errorf("report of %q, seed %d, %d graphs per case, %d cases, failed %v", r.Plugin, r.Seed, r.Graphs, len(r.Cases), r.Failed())
	}
	code, _, stderr = cli(t, "conform", "nosuch")
	if code != exitError || !strings.Contains(stderr, "no plugin binary delego-nosuch in") {
		t.Errorf("unknown plugin: exit %d, stderr %q", code, stderr)
	}
}

// TestConformWrongPlugins: a plugin off by one on ADD, one that declares
// MUL and cannot compile it, and one that prints to stdout each fail delego
// conform (exit 1), with a line that names the op, its version and type and
// the case's seed, or says what it printed.
func TestConformWrongPlugins(t *testing.T) {
	for _, c := range []struct {
		mode string
		want *regexp.Regexp
	}{
		{"offbyone", regexp.MustCompile(`(?m)^FAIL        ops: ADD v\d (FLOAT32|UINT8) \(seed \d+\): invoke \d, output 0 \(\w+ \[[\d ]+\]\): element 0 is .*, want `)},
		{"nocompile", regexp.MustCompile(`(?m)^FAIL        ops: MUL v\d (FLOAT32|UINT8) \(seed \d+\): declared, but the plugin failed to compile it: .*this accelerator cannot compile MUL`)},
		{"stdout", regexp.MustCompile(`(?m)^FAIL        start: handshake: the plugin printed "wrong plugin: accelerator ready" to its standard output, which is reserved for the go-plugin handshake line`)},
	} {
		t.Run(c.mode, func(t *testing.T) {
			code, stdout, stderr := cli(t, "conform", conformPlugin(t, "wrong-"+c.mode), "--cases", "1")
			if code != exitError || !strings.Contains(stderr, "fails conformance") {
				t.Errorf("exit %d, stderr %q", code, stderr)
			}
			if !c.want.MatchString(stdout) {
				t.Errorf("no line matches %s:\n%s", c.want, stdout)
			}
		})
	}
}

// TestConformEdgeTPUSimulated: the edgetpu plugin declares only
// edgetpu-custom-op, which random graphs cannot hold: delego conform runs
// the shared Edge TPU model given with --model on the simulator, which
// computes from the CPU twin (on delego-cpu), and compares it with the
// twin; every check passes. (Before the simulator forgot a released
// partition's executables, the second partition of a model in one process
// was computed with the first's closed twin: release and concurrency
// failed.)
func TestConformEdgeTPUSimulated(t *testing.T) {
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	t.Setenv(edgetpuinfo.EnvTwin, edgetpuinfo.TwinPath(model))
	t.Setenv("DELEGO_PLUGIN_PATH", os.Getenv("DELEGO_PLUGIN_PATH")+string(filepath.ListSeparator)+filepath.Dir(conformPlugin(t, "cpu")))
	code, stdout, stderr := cli(t, "conform", "edgetpu", "--model", model)
	if code != exitOK || !passSummary.MatchString(stdout) {
		t.Fatalf("exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	for _, check := range []string{"start", "models", "faults", "concurrency", "release"} {
		if !strings.Contains(stdout, "PASS        "+check+": ") {
			t.Errorf("no %s case passed:\n%s", check, stdout)
		}
	}
	if !strings.Contains(stdout, "PASS        models: "+model+": 1 nodes on the plugin, equal to its twin") {
		t.Errorf("the model case did not pass:\n%s", stdout)
	}
}

// TestConformUsage: usage errors exit 2 and say what is wrong.
func TestConformUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"conform"}, "conform takes one plugin (a name or a path), got 0 arguments"},
		{[]string{"conform", "a", "b"}, "got 2 arguments"},
		{[]string{"conform", "cpu", "--cases", "0"}, "--cases 0: want at least 1"},
		{[]string{"conform", "cpu", "--float-tolerance", "-1"}, "--float-tolerance -1: want a number above 0"},
		{[]string{"conform", "cpu", "--int-tolerance", "-1"}, "--int-tolerance -1: want 0 or more"},
		{[]string{"conform", "cpu", "--model", "foo.tflite"}, `--model "foo.tflite": give the model and its CPU twin as FILE:TWIN`},
		{[]string{"conform", "cpu", "--seed", "x"}, `invalid value "x" for flag -seed`},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
