package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// This file runs the nnapi plugin (delego-nnapi) end to end against
// delego's test NNAPI runtime (plugins/nnapi/testruntime), a
// libneuralnetworks.so with the NDK ABI built by
// scripts/build-nnapi-testlib.sh and loaded through DELEGO_NNAPI_LIBRARY:
// the real dlopen path, the real calls, with real C kernels behind them.

// nnapiEnv is a delego with delego-nnapi beside it, and the test runtimes.
type nnapiEnv struct {
	t          *testing.T
	delego     string
	lib, lib27 string // the full runtime, and one with NNAPI 1.0's functions only
}

func newNnapiEnv(t *testing.T) *nnapiEnv {
	t.Helper()
	dir, libs := t.TempDir(), t.TempDir()
	if err := goBuild(dir, nil, "github.com/delego/delego/cmd/delego", "github.com/delego/delego/plugins/nnapi/cmd/delego-nnapi"); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join("..", "scripts", "build-nnapi-testlib.sh")
	if out, err := exec.CommandContext(t.Context(), "bash", script, libs).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return &nnapiEnv{t: t, delego: filepath.Join(dir, "delego"),
		lib: filepath.Join(libs, "libneuralnetworks.so"), lib27: filepath.Join(libs, "api27", "libneuralnetworks.so")}
}

// run runs delego with the full runtime and env added.
func (e *nnapiEnv) run(env []string, args ...string) (string, string, error) {
	return e.runLib(e.lib, env, args...)
}

// runLib runs delego with the runtime at lib ("": none) and env added.
func (e *nnapiEnv) runLib(lib string, env []string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(e.t.Context(), e.delego, args...)
	cmd.Env = append(os.Environ(), env...)
	if lib != "" {
		cmd.Env = append(cmd.Env, "DELEGO_NNAPI_LIBRARY="+lib)
	} else {
		cmd.Env = append(cmd.Env, "DELEGO_NNAPI_LIBRARY=")
	}
	var o, s strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &s
	err := cmd.Run()
	return o.String(), s.String(), err
}

// golden runs golden case c with args added and compares its output.
func (e *nnapiEnv) golden(lib string, env []string, c shared.GoldenCase, args ...string) (stderr string, err error) {
	e.t.Helper()
	out := filepath.Join(e.t.TempDir(), "out.raw")
	_, stderr, err = e.runLib(lib, env, append(goldenArgs(e.t, c, out), args...)...)
	if err != nil {
		return stderr, err
	}
	if err := compareOutputs(c, readFile(e.t, out), shared.ReadGolden(e.t, c.OutputFile)); err != nil {
		e.t.Errorf("%s: %v", c.Name, err)
	}
	return stderr, nil
}

// TestNnapiGolden runs every golden case through `delego run --delegate
// nnapi` on the test runtime at its default feature level (30): integers
// byte for byte, floats within the golden tolerance; and the quantized
// MobileNet again on the runtime of NNAPI 1.0 (no device introspection,
// startCompute and an event, no fp16 relaxation).
func TestNnapiGolden(t *testing.T) {
	e := newNnapiEnv(t)
	for _, c := range shared.GoldenCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			if stderr, err := e.golden(e.lib, nil, c, "--delegate", "nnapi"); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
		})
	}
	t.Run("api27", func(t *testing.T) {
		c := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
		if stderr, err := e.golden(e.lib27, nil, c, "--delegate", "nnapi"); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
	})
	t.Run("settings", func(t *testing.T) {
		// Every NNAPISettings field delego honours, set: a named device,
		// caching, preference, priority, bursts.
		s := filepath.Join(t.TempDir(), "nnapi.json")
		writeFile(t, s, `{"delegate": "NNAPI", "nnapi_settings": {"accelerator_name": "delego-test-npu",
			"cache_directory": "`+t.TempDir()+`", "model_token": "mobilenet", "execution_preference": "NNAPI_SUSTAINED_SPEED",
			"execution_priority": "NNAPI_PRIORITY_HIGH", "use_burst_computation": true}}`)
		log := filepath.Join(t.TempDir(), "calls.log")
		c := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
		if stderr, err := e.golden(e.lib, []string{"DELEGO_NNAPI_TEST_LOG=" + log}, c, "--settings", s); err != nil || stderr != "" {
			t.Fatalf("%v\n%s", err, stderr)
		}
		calls := string(readFile(t, log))
		for _, want := range []string{"ANeuralNetworksCompilation_createForDevices", "ANeuralNetworksCompilation_setPreference",
			"ANeuralNetworksCompilation_setPriority", "ANeuralNetworksCompilation_setCaching", "ANeuralNetworksBurst_create",
			"ANeuralNetworksExecution_burstCompute", "ANeuralNetworksModel_setOperandValueFromMemory", "ANeuralNetworksMemory_createFromFd"} {
			if !strings.Contains(calls, want) {
				t.Errorf("no call to %s", want)
			}
		}
	})
}

// TestNnapiPlan: each MobileNet lands whole in one nnapi partition at
// feature level 30; the post-training-quantized MobileNet V2 is planned
// differently at 27, 28, 29 and 30, each refusal explained; and a float
// graph of PAD and MEAN (NNAPI 1.1 ops) shows 27 against 28.
func TestNnapiPlan(t *testing.T) {
	e := newNnapiEnv(t)
	for _, m := range []string{"mobilenet_v1_0.25_128_float", "mobilenet_v1_0.25_128_quant", "mobilenet_v2_1.0_224_float", "mobilenet_v2_1.0_224_quant"} {
		stdout, stderr, err := e.run(nil, "plan", shared.Model(t, m+".tflite"), "--delegate", "nnapi")
		if err != nil || !strings.Contains(stdout, "on delegates in 1 partition, 0 on the CPU") {
			t.Errorf("%s: %v\n%s%s", m, err, stdout, stderr)
		}
	}
	ptq := shared.Model(t, "tf2_mobilenet_v2_1.0_224_ptq.tflite")
	for _, c := range []struct {
		level string
		want  []string
	}{
		{"27", []string{"68 nodes: 12 on delegates", `CONV_2D v3 (int8) needs NNAPI feature level 29; the NNAPI runtime has 27`,
			`MEAN v2 needs NNAPI feature level 28`}},
		{"28", []string{"68 nodes: 12 on delegates", `MEAN v2 (quantized) needs NNAPI feature level 29; the NNAPI runtime has 28`}},
		{"29", []string{"68 nodes: 66 on delegates", `QUANTIZE v1 (int8 output) needs NNAPI feature level 30; the NNAPI runtime has 29`}},
		{"30", []string{"68 nodes: 67 on delegates in 2 partitions, 1 on the CPU", "input and output quantized differently"}},
	} {
		env := []string{"DELEGO_NNAPI_TEST_FEATURE_LEVEL=" + c.level,
			"DELEGO_NNAPI_TEST_DEVICES=delego-test-npu:accelerator:" + c.level + ",nnapi-reference:cpu:" + c.level}
		stdout, stderr, err := e.run(env, "plan", ptq, "--delegate", "nnapi")
		for _, w := range c.want {
			if err != nil || !strings.Contains(stdout, w) {
				t.Errorf("level %s: want %q: %v\n%s%s", c.level, w, err, stdout, stderr)
			}
		}
	}
	// The device's level, not the runtime's, when the device is older.
	stdout, _, err := e.run([]string{"DELEGO_NNAPI_TEST_DEVICES=npu-x:accelerator:28"}, "plan", ptq, "--delegate", "nnapi")
	if err != nil || !strings.Contains(stdout, `CONV_2D v3 (int8) needs NNAPI feature level 29; device "npu-x" has 28`) {
		t.Errorf("an older device: %v\n%s", err, stdout)
	}
}

// TestNnapiFaults: a failure at model finish (in CheckNodes' check models),
// at compilation and at execution each ends in the error naming the call
// and the code, or, with fallback settings, in the CPU's golden result.
func TestNnapiFaults(t *testing.T) {
	e := newNnapiEnv(t)
	c := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	fallback := filepath.Join(t.TempDir(), "fallback.json")
	writeFile(t, fallback, `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true,
		"allow_automatic_fallback_on_execution_error": true}}`)
	for _, f := range []string{"ANeuralNetworksModel_finish", "ANeuralNetworksCompilation_finish", "ANeuralNetworksExecution_compute",
		"ANeuralNetworksMemory_createFromFd:OUT_OF_MEMORY", "ANeuralNetworksExecution_setInputFromMemory:UNMAPPABLE"} {
		t.Run(f, func(t *testing.T) {
			env := []string{"DELEGO_NNAPI_TEST_FAIL=" + f}
			call, code, _ := strings.Cut(f, ":")
			if code == "" {
				code = "OP_FAILED"
			}
			stderr, err := e.golden(e.lib, env, c, "--delegate", "nnapi")
			if err == nil || !strings.Contains(stderr, call+": ANEURALNETWORKS_"+code) {
				t.Errorf("without fallback: %v\n%s", err, stderr)
			}
			stderr, err = e.golden(e.lib, env, c, "--delegate", "nnapi", "--settings", fallback)
			if err != nil || !strings.Contains(stderr, "the result came from the CPU fallback") {
				t.Errorf("with fallback: %v\n%s", err, stderr)
			}
		})
	}
}

// TestNnapiUnavailable: without NNAPI, `delego plugins` lists nnapi as not
// usable and says why, `--delegate nnapi` fails, and with fallback settings
// the CPU gives the golden result.
func TestNnapiUnavailable(t *testing.T) {
	e := newNnapiEnv(t)
	stdout, stderr, err := e.runLib("", nil, "plugins")
	if err != nil || !strings.Contains(stdout, "usable    no: NNAPI is only on Android (libneuralnetworks.so not found)") {
		t.Errorf("plugins: %v\n%s%s", err, stdout, stderr)
	}
	c := shared.GoldenCaseNamed(t, "split_concat__seed1")
	if stderr, err := e.golden("", nil, c, "--delegate", "nnapi"); err == nil || !strings.Contains(stderr, "NNAPI is only on Android") {
		t.Errorf("run: %v\n%s", err, stderr)
	}
	fallback := filepath.Join(t.TempDir(), "fallback.json")
	writeFile(t, fallback, `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	if stderr, err := e.golden("", nil, c, "--delegate", "nnapi", "--settings", fallback); err != nil {
		t.Errorf("with fallback: %v\n%s", err, stderr)
	}
}
