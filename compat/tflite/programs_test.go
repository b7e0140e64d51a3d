package tflite_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// The programs in testdata are written for github.com/mattn/go-tflite.
// buildPrograms builds each with its import paths changed to this
// package's, and nothing else (go build's -overlay puts the changed file in
// the original's place), with CGO_ENABLED=0, into one directory with the
// delego-edgetpu plugin the edgetpu program starts.
var programs = struct {
	once      sync.Once
	dir       string
	err       error
	noXNNPACK string // why delego-xnnpack is not there, if it is not
}{}

func TestMain(m *testing.M) {
	code := m.Run()
	if programs.dir != "" {
		os.RemoveAll(programs.dir)
	}
	os.Exit(code)
}

var programNames = []string{"xor", "sin", "iris", "fizzbuzz", "textclassification", "labelimage", "edgetpu", "xnnpack", "mnist"}

func buildPrograms(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds programs; skipped with -short")
	}
	programs.once.Do(func() { programs.dir, programs.err = build() })
	if programs.err != nil {
		t.Fatal(programs.err)
	}
	return programs.dir
}

func build() (string, error) {
	dir, err := os.MkdirTemp("", "delego-compat-")
	if err != nil {
		return "", err
	}
	overlay := map[string]string{}
	// No symbol table or DWARF: linking is most of the build's time.
	args := []string{"build", "-ldflags=-s -w", "-overlay", filepath.Join(dir, "overlay.json"), "-o", dir}
	for _, name := range programNames {
		src, err := filepath.Abs(filepath.Join("testdata", name, "main.go"))
		if err != nil {
			return "", err
		}
		text, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		changed := filepath.Join(dir, name+".go")
		text = bytes.ReplaceAll(text, []byte(`"github.com/mattn/go-tflite`), []byte(`"github.com/delego/delego/compat/tflite`))
		if err := os.WriteFile(changed, text, 0o644); err != nil {
			return "", err
		}
		overlay[src] = changed
		args = append(args, "./testdata/"+name)
	}
	j, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), j, 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", append(args, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	// XNNPACK is a C library: its plugin needs cgo, the program does not.
	cmd = exec.Command("go", "build", "-o", dir, "github.com/delego/delego/plugins/xnnpack/cmd/delego-xnnpack")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		programs.noXNNPACK = "cannot build delego-xnnpack here: " + err.Error() + "\n" + string(out)
	}
	return dir, nil
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build the programs: " + e.err.Error() + "\n" + e.out }

// runProgram runs a built program with args and the environment env added,
// and returns its standard output.
func runProgram(t *testing.T, name string, env []string, args ...string) string {
	t.Helper()
	out, stderr, err := startProgram(t, name, env, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return out
}

// startProgram runs a built program and returns its standard output and
// error and how it ended.
func startProgram(t *testing.T, name string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return startProgramIn(t, "", name, env, args...)
}

// startProgramIn is startProgram in the working directory workDir ("":
// the test's), for go-tflite's examples, which open their files by
// relative names.
func startProgramIn(t *testing.T, workDir, name string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	dir := buildPrograms(t)
	cmd := exec.Command(filepath.Join(dir, name), args...)
	cmd.Dir = workDir
	cmd.Env = append(append(os.Environ(), "DELEGO_PLUGIN_PATH="+dir), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	return string(out), errb.String(), err
}

func TestProgramXOR(t *testing.T) {
	got := runProgram(t, "xor", nil, writeModel(t, "xor_model.tflite", xorModel()))
	want := "0 xor 0 = 0\n1 xor 0 = 1\n0 xor 1 = 1\n1 xor 1 = 0\n"
	if got != want {
		t.Errorf("xor printed\n%s\nwant\n%s", got, want)
	}
}

func TestProgramSin(t *testing.T) {
	out := runProgram(t, "sin", nil, writeModel(t, "sine_model.tflite", sinModel()))
	lines := 0
	for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); lines++ {
		f := strings.Fields(sc.Text())
		x, err1 := strconv.ParseFloat(f[0], 64)
		y, err2 := strconv.ParseFloat(f[1], 64)
		if len(f) != 2 || err1 != nil || err2 != nil || math.Abs(y-math.Sin(x)) > 1e-5 {
			t.Errorf("line %q: want x and sin(x)", sc.Text())
		}
	}
	if lines != 13 {
		t.Errorf("%d lines, want 13:\n%s", lines, out)
	}
}

// TestProgramIris classifies three flowers in one batch: the program
// resizes the input to [3, 4]. Each line must name the species the
// regression gives, with its probability computed here in float64.
func TestProgramIris(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "iris.csv")
	if err := os.WriteFile(csv, []byte("5.1,3.5,1.4,0.2\n7.0,3.2,4.7,1.4\n6.3,3.3,6.0,2.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runProgram(t, "iris", nil, writeModel(t, "iris.tflite", irisModel()), csv)
	flowers := [][4]float64{{5.1, 3.5, 1.4, 0.2}, {7.0, 3.2, 4.7, 1.4}, {6.3, 3.3, 6.0, 2.5}}
	want := []string{"setosa", "versicolor", "virginica"}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(flowers) {
		t.Fatalf("iris printed\n%s\nwant %d lines", out, len(flowers))
	}
	for i, line := range lines {
		f := strings.Fields(line) // [5.1 3.5 1.4 0.2] setosa 0.9823
		if len(f) < 2 {
			t.Errorf("line %q: want the species and its probability last", line)
			continue
		}
		p, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil || f[len(f)-2] != want[i] || math.Abs(p-irisProbability(flowers[i], i)) > 1e-4 {
			t.Errorf("line %q: want %s with probability %.4f", line, want[i], irisProbability(flowers[i], i))
		}
	}
}

// irisProbability is softmax(W·x + b)[class] of irisRegression in float64.
func irisProbability(x [4]float64, class int) float64 {
	w, b := irisRegression()
	var logits [3]float64
	sum := 0.0
	for c := range logits {
		logits[c] = float64(b[c])
		for j := range x {
			logits[c] += float64(w[c][j]) * x[j]
		}
		sum += math.Exp(logits[c])
	}
	return math.Exp(logits[class]) / sum
}

// TestProgramFizzBuzz runs go-tflite's own fizzbuzz example, which opens
// fizzbuzz_model.tflite in its working directory and passes &buf[0], a
// pointer to the first of 7 float32s, to CopyFromBuffer: the tensor's 28
// bytes are read from there, as go-tflite reads them.
func TestProgramFizzBuzz(t *testing.T) {
	model := writeModel(t, "fizzbuzz_model.tflite", fizzBuzzModel())
	out, stderr, err := startProgramIn(t, filepath.Dir(model), "fizzbuzz", nil)
	if err != nil || stderr != "" {
		t.Fatalf("fizzbuzz: %v\n%s", err, stderr)
	}
	var want strings.Builder
	for n := 1; n <= 100; n++ {
		switch {
		case n%15 == 0:
			want.WriteString("FizzBuzz\n")
		case n%3 == 0:
			want.WriteString("Fizz\n")
		case n%5 == 0:
			want.WriteString("Buzz\n")
		default:
			fmt.Fprintln(&want, n)
		}
	}
	if out != want.String() {
		t.Errorf("fizzbuzz printed\n%s\nwant\n%s", out, want.String())
	}
}

// TestProgramTextClassification: sentences become word ids by a
// vocabulary file and the program prints each one's scores as the model's
// softmax of the words' mean embedding gives them.
func TestProgramTextClassification(t *testing.T) {
	var vocab strings.Builder
	for id, w := range textVocabulary {
		fmt.Fprintf(&vocab, "%s %d\n", w, id)
	}
	vocabPath := filepath.Join(t.TempDir(), "vocab.txt")
	if err := os.WriteFile(vocabPath, []byte(vocab.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sentences := []string{"a good movie", "the movie was bad", "Great great good", "awful awful movie", "unknown words only"}
	out := runProgram(t, "textclassification", nil, append([]string{writeModel(t, "text.tflite", textModel()), vocabPath}, sentences...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(sentences) {
		t.Fatalf("textclassification printed %d lines for %d sentences:\n%s", len(lines), len(sentences), out)
	}
	index := map[string]int{}
	for id, w := range textVocabulary {
		index[w] = id
	}
	for i, s := range sentences {
		slots := []int{index["<START>"]}
		for _, w := range strings.Fields(strings.ToLower(s)) {
			id, ok := index[w]
			if !ok {
				id = index["<UNKNOWN>"]
			}
			slots = append(slots, id)
		}
		var mean [2]float64
		for k := range 8 {
			id := index["<PAD>"]
			if k < len(slots) {
				id = slots[k]
			}
			mean[0] += float64(textEmbedding[id][0]) / 8
			mean[1] += float64(textEmbedding[id][1]) / 8
		}
		neg := 1 / (1 + math.Exp(mean[1]-mean[0]))
		label := "negative"
		if 1-neg > neg {
			label = "positive"
		}
		var gotLabel string
		var gotNeg, gotPos float64
		if _, err := fmt.Sscanf(lines[i], "%s negative %f positive %f:", &gotLabel, &gotNeg, &gotPos); err != nil {
			t.Fatalf("line %q: %v", lines[i], err)
		}
		if gotLabel != label+":" || math.Abs(gotNeg-neg) > 1e-5 || math.Abs(gotPos-(1-neg)) > 1e-5 || !strings.HasSuffix(lines[i], ": "+s) {
			t.Errorf("%q: printed %q, want %s with negative %.6f positive %.6f", s, lines[i], label, neg, 1-neg)
		}
	}
}

// TestProgramXNNPACK runs XOR through the delego-xnnpack plugin.
func TestProgramXNNPACK(t *testing.T) {
	if buildPrograms(t); programs.noXNNPACK != "" {
		t.Skip(programs.noXNNPACK)
	}
	got := runProgram(t, "xnnpack", nil, writeModel(t, "xor_model.tflite", xorModel()))
	want := "0 xor 0 = 0\n1 xor 0 = 1\n0 xor 1 = 1\n1 xor 1 = 0\n"
	if got != want {
		t.Errorf("xnnpack printed\n%s\nwant\n%s", got, want)
	}
	if pids := processesOf(t, buildPrograms(t)); len(pids) > 0 {
		t.Errorf("processes still running from %s: %v", buildPrograms(t), pids)
	}
}

// TestProgramMNIST: the LSTM's state carries over to the second invoke
// and ResetVariableTensors clears it for the third, as in TensorFlow Lite.
func TestProgramMNIST(t *testing.T) {
	got := runProgram(t, "mnist", nil, shared.Model(t, "keras_lstm_mnist_ptq.tflite"),
		shared.Path(t, "golden", "keras_lstm_mnist_ptq__digit7.input.raw"))
	first := shared.ReadGolden(t, "keras_lstm_mnist_ptq__digit7.output.raw")
	second := shared.ReadGolden(t, "keras_lstm_mnist_ptq__digit7.output_invoke2.raw")
	want := fmt.Sprintf("run 1 %v top 7\nrun 2 %v top 7\nrun 3 %v top 7\n", first, second, first)
	if got != want {
		t.Errorf("mnist printed\n%s\nwant\n%s", got, want)
	}
}

// goldenTop is the golden output's top class.
func goldenTop(t *testing.T) int {
	scores := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")
	top := 0
	for i, s := range scores {
		if s > scores[top] {
			top = i
		}
	}
	return top
}

func TestProgramLabelImage(t *testing.T) {
	got := runProgram(t, "labelimage", nil, shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"),
		shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw"))
	top := "top " + strconv.Itoa(goldenTop(t)) + " "
	for _, want := range []string{"input input UInt8 [1 128 128 3] 49152 bytes\n", "UInt8 [1 1001] scale 0.00390625 zero 0\n", top} {
		if !strings.Contains(got, want) {
			t.Errorf("labelimage printed\n%s\nwant %q in it", got, want)
		}
	}
}

// TestProgramEdgeTPU runs the Edge TPU program on the simulated device:
// it lists it, runs the Edge TPU model through the delego-edgetpu plugin,
// and leaves no plugin process behind. The simulator's scores are not a
// model's, so only their number is checked.
func TestProgramEdgeTPU(t *testing.T) {
	got := runProgram(t, "edgetpu", []string{"DELEGO_EDGETPU_DEVICE=sim"},
		shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"),
		shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw"))
	for _, want := range []string{"device 1 usb:0\n", "classes 1001 top "} {
		if !strings.Contains(got, want) {
			t.Errorf("edgetpu printed\n%s\nwant %q in it", got, want)
		}
	}
	if pids := processesOf(t, buildPrograms(t)); len(pids) > 0 {
		t.Errorf("processes still running from %s: %v", buildPrograms(t), pids)
	}
}

// processesOf lists the processes whose command line names dir.
func processesOf(t *testing.T, dir string) []string {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []string
	for _, f := range cmdlines {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(dir)) {
			pids = append(pids, filepath.Base(filepath.Dir(f)))
		}
	}
	return pids
}

// TestProgramEdgeTPUWithoutDevice: with no simulator, a build without cgo
// has no USB to look on, and DeviceList says so.
func TestProgramEdgeTPUWithoutDevice(t *testing.T) {
	_, stderr, err := startProgram(t, "edgetpu", []string{"DELEGO_EDGETPU_DEVICE="},
		shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"), os.DevNull)
	if err == nil || !strings.Contains(stderr, "without cgo") {
		t.Errorf("edgetpu without a device: %v\n%s", err, stderr)
	}
}
