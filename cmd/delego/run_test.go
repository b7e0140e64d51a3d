package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/testsupport/shared"
)

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// firstDiff says where a differs from b first.
func firstDiff(a, b []byte) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d bytes, want %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Sprintf("byte %d is %d, want %d", i, a[i], b[i])
		}
	}
	return ""
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestRunErrorsLeaveNoOutput(t *testing.T) {
	in := t.TempDir()
	splitConcat := shared.Model(t, "split_concat.tflite")
	good := [][]byte{make([]byte, 192), make([]byte, 64), make([]byte, 128)}
	in0 := writeFile(t, in, "in0.raw", good[0])
	in1 := writeFile(t, in, "in1.raw", good[1])
	in2 := writeFile(t, in, "in2.raw", good[2])
	short := writeFile(t, in, "short.raw", make([]byte, 5))
	real, err := os.ReadFile(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	garbage := writeFile(t, in, "garbage.tflite", []byte("this is not a flatbuffer at all"))
	truncated := writeFile(t, in, "truncated.tflite", real[:4096])
	three := writeFile(t, in, "three.raw", []byte{1, 2, 3})

	for _, c := range []struct {
		name string
		args []string
		want []string // all of these in the message
		is   error
	}{
		{"too few inputs", []string{splitConcat, "--input", in0},
			[]string{"needs 3 --input files", `"input1", "inputs/rnn1", "inputs/rnn2"`, "got 1 file"}, nil},
		{"too many inputs", []string{splitConcat, "--input", in0, "--input", in1, "--input", in2, "--input", in2},
			[]string{"needs 3 --input files", "got 4 files"}, nil},
		{"no inputs", []string{splitConcat}, []string{"needs 3 --input files", "got 0 files"}, nil},
		{"wrong size", []string{splitConcat, "--input", in0, "--input", short, "--input", in2},
			[]string{`input 1 (tensor 1 "inputs/rnn1", UINT8 [1,8,8,1])`, "short.raw is 5 bytes long", "needs 64"}, nil},
		{"missing file", []string{splitConcat, "--input", in0, "--input", in1, "--input", filepath.Join(in, "nope.raw")},
			[]string{`input 2 (tensor 2 "inputs/rnn2"`, "nope.raw"}, os.ErrNotExist},
		{"missing model", []string{filepath.Join(in, "nope.tflite"), "--input", in0},
			[]string{"load model", "nope.tflite"}, os.ErrNotExist},
		{"garbage model", []string{garbage, "--input", in0},
			[]string{"garbage.tflite", "malformed model", "TFL3"}, model.ErrMalformed},
		{"truncated model", []string{truncated, "--input", in0},
			[]string{"truncated.tflite", "malformed model"}, model.ErrMalformed},
		{"unresolved custom op", []string{shared.Model(t, "model_invoking_error.tflite"), "--input", three},
			[]string{"create interpreter", "fake-op-double version 1 (node 0): unresolved custom op"}, core.ErrUnsupportedOp},
		{"edge tpu model", []string{shared.Model(t, "split_concat_edgetpu.tflite"), "--input", in0, "--input", in1, "--input", in2},
			[]string{"edgetpu-custom-op", "compiled for the Edge TPU", "its CPU twin is " + splitConcat}, core.ErrUnsupportedOp},
		{"image for a three-input model", []string{splitConcat, "--image", shared.Model(t, "cat.bmp")},
			[]string{"--image needs a model with one image input", "3 inputs"}, nil},
		{"image for a non-image input", []string{shared.Model(t, "keras_lstm_mnist_ptq.tflite"), "--image", shared.Model(t, "cat.bmp")},
			[]string{"UINT8 [1,28,28]", "not an image input"}, nil},
		{"mean for a uint8 model", []string{shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"), "--image", shared.Model(t, "cat.bmp"), "--mean", "0"},
			[]string{"--mean and --std apply to FLOAT32 inputs", "UINT8"}, nil},
		{"picture that is not one", []string{shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"), "--image", garbage},
			[]string{"decode image", "garbage.tflite"}, nil},
		{"missing labels", []string{splitConcat, "--input", in0, "--input", in1, "--input", in2, "--labels", filepath.Join(in, "nope.txt")},
			[]string{"read labels", "nope.txt"}, os.ErrNotExist},
	} {
		t.Run(c.name, func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.raw")
			var stdout, stderr bytes.Buffer
			err := runCmd(context.Background(), append(c.args, "--output", out), &stdout, &stderr)
			checkRunFails(t, err, c.want...)
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q is not %v", err, c.is)
			}
			if _, ok := errors.AsType[*usageError](err); ok {
				t.Errorf("error %q is a usage error; it depends on the model, not the command line", err)
			}
			if names := dirEntries(t, outDir); len(names) != 0 {
				t.Errorf("a failed run left %q in the output directory", names)
			}
		})
	}
}

func TestRunErrorExitStatus(t *testing.T) {
	code, out, errOut := cli(t, "run", filepath.Join(t.TempDir(), "none.tflite"), "--input", "x")
	if code != exitError || out != "" || !strings.HasPrefix(errOut, "delego: load model") {
		t.Errorf("status %d, stdout %q, stderr %q; want 1 and a one-line error", code, out, errOut)
	}
}

// splitConcatRegistry runs split_concat.tflite with kernels that fill every
// output with v.
func splitConcatRegistry(v byte) *kernel.Registry {
	return fakeRegistry(map[schema.BuiltinOperator]func(*kernel.Node) error{
		schema.BuiltinOperatorSPLIT:         fill(v),
		schema.BuiltinOperatorCONCATENATION: fill(v),
	})
}

func splitConcatInputs(t *testing.T, dir string) []string {
	return []string{
		"--input", writeFile(t, dir, "in0.raw", make([]byte, 192)),
		"--input", writeFile(t, dir, "in1.raw", make([]byte, 64)),
		"--input", writeFile(t, dir, "in2.raw", make([]byte, 128)),
	}
}

func TestRunWritesOutputsAtomically(t *testing.T) {
	dir := t.TempDir()
	out := writeFile(t, dir, "out.raw", []byte("previous contents"))
	args := append([]string{"--output", out, "-v", shared.Model(t, "split_concat.tflite")}, splitConcatInputs(t, t.TempDir())...)
	var stdout, stderr bytes.Buffer
	if err := runWith(context.Background(), args, &stdout, &stderr, env{registry: splitConcatRegistry(7)}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Five outputs: four [1,8,8,1] and one [1,8,8,2], concatenated.
	if want := bytes.Repeat([]byte{7}, 4*64+128); !bytes.Equal(got, want) {
		t.Errorf("output is %d bytes %v..., want 384 bytes of 7", len(got), got[:min(8, len(got))])
	}
	if names := dirEntries(t, dir); len(names) != 1 {
		t.Errorf("output directory holds %q, want only out.raw", names)
	}
	if stdout.Len() != 0 {
		t.Errorf("run --output printed %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "wrote 384 bytes (5 outputs)") {
		t.Errorf("-v did not report the write: %q", stderr.String())
	}

	// A failing run keeps the previous file untouched.
	failing := fakeRegistry(map[schema.BuiltinOperator]func(*kernel.Node) error{
		schema.BuiltinOperatorSPLIT:         fill(1),
		schema.BuiltinOperatorCONCATENATION: func(*kernel.Node) error { return errors.New("boom") },
	})
	err = runWith(context.Background(), args, &stdout, &stderr, env{registry: failing})
	if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "CONCATENATION") {
		t.Fatalf("err = %v, want the kernel's failure with its op", err)
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, got) {
		t.Error("a failed run changed the existing output")
	}
	if names := dirEntries(t, dir); len(names) != 1 {
		t.Errorf("output directory holds %q after a failure", names)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	args := append([]string{shared.Model(t, "split_concat.tflite"), "--output", filepath.Join(dir, "out.raw")}, splitConcatInputs(t, t.TempDir())...)
	var stdout, stderr bytes.Buffer
	err := runWith(ctx, args, &stdout, &stderr, env{registry: splitConcatRegistry(7)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("a cancelled run left %q", names)
	}
}

func TestRunPrintsSummary(t *testing.T) {
	args := append([]string{shared.Model(t, "split_concat.tflite")}, splitConcatInputs(t, t.TempDir())...)
	var stdout, stderr bytes.Buffer
	if err := runWith(context.Background(), args, &stdout, &stderr, env{registry: splitConcatRegistry(200)}); err != nil {
		t.Fatal(err)
	}
	got := stdout.String()
	for _, want := range []string{
		`output 0 "concat/split0" UINT8 [1,8,8,1] (scale 0.0078125 zp 128)`,
		"  values:      200 200 200 200 200 200 200 200 200 200 ...\n",
		"  dequantized: 0.5625 0.5625",
		`output 4 "outputs/rnn2" UINT8 [1,8,8,2]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

// TestRunImageTopK feeds the cat picture to mobilenet with stand-in kernels
// that record the input they see and produce TFLite's golden output, and
// checks both the input bytes and the printed top 5 with its tie.
func TestRunImageTopK(t *testing.T) {
	golden := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")
	var seen []byte
	reg := fakeRegistry(map[schema.BuiltinOperator]func(*kernel.Node) error{
		schema.BuiltinOperatorCONV_2D: func(n *kernel.Node) error {
			if n.Inputs[0].Name == "input" {
				seen = bytes.Clone(n.Inputs[0].Data)
			}
			return nil
		},
		schema.BuiltinOperatorDEPTHWISE_CONV_2D: fill(0),
		schema.BuiltinOperatorAVERAGE_POOL_2D:   fill(0),
		schema.BuiltinOperatorRESHAPE:           fill(0),
		schema.BuiltinOperatorSOFTMAX: func(n *kernel.Node) error {
			copy(n.Outputs[0].Data, golden)
			return nil
		},
	})
	args := []string{shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"),
		"--image", shared.Model(t, "cat.bmp"), "--labels", shared.Model(t, "imagenet_labels.txt")}
	var stdout, stderr bytes.Buffer
	if err := runWith(context.Background(), args, &stdout, &stderr, env{registry: reg}); err != nil {
		t.Fatal(err)
	}
	if want := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.input.raw"); !bytes.Equal(seen, want) {
		t.Errorf("the model's input differs from the golden input: %s", firstDiff(seen, want))
	}
	rows := regexp.MustCompile(`(?m)^(\d+)\s+(\d+)\s+(\S+)\s+(.*)$`).FindAllStringSubmatch(stdout.String(), -1)
	want := [][3]string{
		{"286", "0.265625", "Egyptian cat"}, // ties: the higher class first, as libcoral
		{"283", "0.265625", "tiger cat"},
		{"282", "0.234375", "tabby, tabby cat"},
		{"194", "0.0429688", "Australian terrier"},
		{"185", "0.0429688", "Irish terrier"},
	}
	if len(rows) != len(want) {
		t.Fatalf("printed %d rows, want 5:\n%s", len(rows), stdout.String())
	}
	for i, r := range rows {
		if got := [3]string{r[2], r[3], r[4]}; got != want[i] {
			t.Errorf("rank %d: %q, want %q", i+1, got, want[i])
		}
	}
}
