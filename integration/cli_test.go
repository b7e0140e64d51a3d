package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// runDelego runs the delego binary that TestMain built with args.
func runDelego(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runDelegoEnv(t, nil, args...)
}

// runDelegoEnv runs delego with env added to the test's environment.
func runDelegoEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binPath, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// readFile returns a file's bytes, failing the test when it cannot be read.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFile writes data to path, failing the test on error.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenThroughCLI runs every golden case through `delego run` with one
// --input file per input tensor and compares the --output file.
func TestGoldenThroughCLI(t *testing.T) {
	for _, c := range shared.GoldenCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.raw")
			args := goldenArgs(t, c, out)
			if _, stderr, err := runDelego(t, args...); err != nil {
				t.Fatalf("delego %s: %v\n%s", strings.Join(args, " "), err, stderr)
			}
			got := readFile(t, out)
			if err := compareOutputs(c, got, shared.ReadGolden(t, c.OutputFile)); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestImageThroughCLI feeds cat.bmp with --image: the CLI's resize must give
// the golden input, hence the golden output and its top-5.
func TestImageThroughCLI(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.raw")
	stdout, stderr, err := runDelego(t, "run", shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"),
		"--image", shared.Model(t, "cat.bmp"), "--output", out,
		"--labels", shared.Model(t, "imagenet_labels.txt"), "--top", "5")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	got := readFile(t, out)
	if !bytes.Equal(got, shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")) {
		t.Error("output differs from the golden cat_128 output")
	}
	if !strings.Contains(stdout, "tiger cat") || !strings.Contains(stdout, "Egyptian cat") {
		t.Errorf("top-5 should name the cats:\n%s", stdout)
	}
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.raw")
	if err := os.WriteFile(short, []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.tflite")
	data, err := os.ReadFile(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, data[:len(data)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.raw")
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"wrong input size", []string{"run", shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"), "--input", short, "--output", out},
			[]string{"3 bytes", "49152"}},
		{"unresolved custom op", []string{"run", shared.Model(t, "model_invoking_error.tflite"), "--input", short, "--output", out},
			[]string{"fake-op-double"}},
		{"truncated model", []string{"run", truncated, "--input", short, "--output", out},
			[]string{"malformed model"}},
		{"missing model", []string{"inspect", filepath.Join(dir, "nope.tflite")},
			[]string{"nope.tflite"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, err := runDelego(t, c.args...)
			if err == nil {
				t.Fatal("exit status 0")
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q should contain %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "goroutine ") {
				t.Errorf("stderr holds a stack trace:\n%s", stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a failed run left an output file")
			}
		})
	}
}
