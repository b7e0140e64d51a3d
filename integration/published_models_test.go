package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Real models published in public GitHub repositories (Google's LiteRT,
// Lyra and MediaPipe, and converted Keras models), run end to end in delego
// and in TensorFlow Lite 2.9 on the same inputs. They are not in this
// repository and no registry serves them: the test reads them from a folder
// named by DELEGO_GITHUB_MODELS, laid out as OWNER+NAME/PATH (the
// repository and the file's path in it; fetch the repository's snapshot and
// copy the file there), and runs TensorFlow Lite 2.9 through the one-model
// runner named by DELEGO_TFLITE29_RUN (testdata/gen/tflite29_run.c, built
// against ../shared/tools/tflite-ref). Integer outputs must agree byte for
// byte, float outputs within 1e-5 relative (or 1e-6 absolute near zero)
// unless a model's entry says otherwise and why.

// publishedModel is one published model and the inputs it runs on.
type publishedModel struct {
	file string // OWNER+NAME/PATH under DELEGO_GITHUB_MODELS
	what string // what it carries that the acceptance asks for
	// ints bounds the random values of integer inputs, [0, ints); a
	// WHILE model's inputs count its iterations.
	ints int
	// refused, when set, is what delego says when it refuses the model,
	// as TFLite 2.9 refuses it too.
	refused string
	// spread, when set, replaces the 1e-5 relative tolerance of float
	// outputs: each value may differ by spread times the output's largest
	// magnitude (the reason is in the table).
	spread float64
}

// publishedModels are the models, by what each one proves.
var publishedModels = []publishedModel{
	{"google-ai-edge+LiteRT/litert/test/testdata/torchaudio_conformer.tflite", "a transformer (torchaudio's Conformer): BATCH_MATMUL, SOFTMAX", 4, "", 0},
	// The two dynamic-range ("_dr") models quantize float activations to
	// int8 on the fly (hybrid kernels). delego's float kernels differ from
	// TFLite's in the last bits (summation order, within 1e-5), and a value
	// that sits on a rounding edge can then land one int8 step away, which
	// the rest of the model carries on. Made every tensor of subgraph 0 an
	// output: every tensor agrees within 1e-5 up to such a hybrid op (the
	// OCR's second bidirectional LSTM; HiFi-GAN's op 326, where three
	// neighbouring pixels move), and that op fed TFLite's own input agrees
	// within 1e-5 again. Hence the tolerance against the output's range.
	{"tulasiram58827+ocr_tflite/models/ocr_dr.tflite", "Keras's captcha OCR (bidirectional LSTMs as 4 WHILE loops over 8 subgraphs), dynamic-range quantized", 4, "", 1e-3},
	{"tulasiram58827+TTS_TFLite/models/hifigan_dr.tflite", "HiFi-GAN vocoder, dynamic-range quantized: TRANSPOSE_CONV, dilated convolutions (SPACE_TO_BATCH_ND)", 4, "", 1e-2},
	{"google-ai-edge+LiteRT/tflite/testdata/multi_subgraphs_while.bin", "WHILE", 4, "", 0},
	{"google-ai-edge+LiteRT/tflite/testdata/nested_while.bin", "nested WHILE", 4, "", 0},
	{"google-ai-edge+LiteRT/tflite/testdata/call_once_mul.bin", "CALL_ONCE and resource variables", 4, "", 0},
	{"google+lyra/lyra/model_coeffs/soundstream_encoder.tflite", "Lyra's encoder: CALL_ONCE, resource variables; CONV_2D version 6, which 2.9 lacks", 0, "(CONV_2D) version 6 is not supported; supported versions 1-5", 0},
	{"google+lyra/lyra/model_coeffs/lyragan.tflite", "Lyra's decoder: CALL_ONCE, resource variables; CONV_2D version 6, which 2.9 lacks", 0, "(CONV_2D) version 6 is not supported; supported versions 1-5", 0},
	{"google+lyra/lyra/model_coeffs/quantizer.tflite", "Lyra's quantizer: ONE_HOT, ARG_MIN, its \"decode\" signature (subgraph 0)", 8, "", 0},
	// Arm's DetectNet V2 (PeopleNet) example for i.MX 93 exports its
	// detector's box selection as a model of its own, built with
	// tf.image.non_max_suppression_with_scores: its integer input is
	// max_output_size, so ints spans 0 to all 2040 boxes.
	{"ArmDeveloperEcosystem+ml-object-detection-examples-for-imx93/detectnet_v2/nms_model.tflite", "a detector's NON_MAX_SUPPRESSION_V5 stage (Arm's DetectNet V2 for i.MX 93)", 2041, "", 0},
	// A trained YOLO11 detector exported by Ultralytics with nms=True
	// (NON_MAX_SUPPRESSION_V4); a grouped convolution makes every CONV_2D
	// version 6, which TFLite 2.9 refuses.
	{"OmarAbuShanb+yolo-object-detector-android/sample/src/main/assets/best_int8_nms.tflite", "a YOLO11 detector with NON_MAX_SUPPRESSION_V4; CONV_2D version 6, which 2.9 lacks", 0, "(CONV_2D) version 6 is not supported; supported versions 1-5", 0},
}

func TestPublishedModelsAgreeWithTFLite(t *testing.T) {
	dir, runner := os.Getenv("DELEGO_GITHUB_MODELS"), os.Getenv("DELEGO_TFLITE29_RUN")
	if dir == "" || runner == "" {
		t.Skip("set DELEGO_GITHUB_MODELS (a folder of OWNER+NAME/PATH files from GitHub snapshots) and DELEGO_TFLITE29_RUN (tflite29_run) to compare published models with TensorFlow Lite 2.9")
	}
	for _, pm := range publishedModels {
		t.Run(filepath.Base(pm.file), func(t *testing.T) {
			path := filepath.Join(dir, pm.file)
			m, err := model.Load(path)
			if err != nil {
				t.Fatalf("%s (%s): %v", pm.file, pm.what, err)
			}
			t.Cleanup(func() { m.Close() })
			if pm.refused != "" {
				checkBothRefuse(t, runner, m, path, pm.refused)
				return
			}
			ins := publishedInputs(allocated(t, m, &core.Options{}), pm.ints, 3)
			want := tflite29Outputs(t, runner, path, ins)
			for k, in := range ins {
				// A fresh interpreter each time, as the runner's: state
				// (resource variables, CALL_ONCE) starts anew.
				it := allocated(t, m, &core.Options{})
				feed(t, it, in)
				if err := it.Invoke(context.Background()); err != nil {
					t.Fatalf("invoke %d: %v", k, err)
				}
				compareWithTFLite(t, it, want[k], k, pm.spread)
			}
		})
	}
}

// checkBothRefuse checks that delego refuses the model m at path with a
// message holding want, and that TensorFlow Lite 2.9 refuses it too.
func checkBothRefuse(t *testing.T, runner string, m *model.Model, path, want string) {
	t.Helper()
	if _, err := core.NewInterpreter(m, &core.Options{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("delego: %v, want a refusal naming %q", err, want)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.raw")
	if err := os.WriteFile(in, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	msg, err := exec.CommandContext(t.Context(), runner, path, in, filepath.Join(dir, "out.raw"), filepath.Join(dir, "meta.json")).CombinedOutput()
	if err == nil {
		t.Errorf("TensorFlow Lite 2.9 ran %s, which delego refuses", path)
	} else {
		t.Logf("TensorFlow Lite 2.9 refuses it too: %s", bytes.TrimSpace(msg))
	}
}

// publishedInputs makes n sets of pseudo-random inputs for it, the same at
// every run: floats in [-1, 1), integers in [0, ints), BOOL at random.
func publishedInputs(it *core.Interpreter, ints, n int) [][][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][][]byte, n)
	for k := range out {
		for i := range it.NumInputs() {
			t := it.Input(i)
			b := make([]byte, len(t.Data()))
			size := t.Type().Size()
			for j := 0; j+size <= len(b); j += size {
				switch t.Type() {
				case tensor.Float32:
					binary.LittleEndian.PutUint32(b[j:], math.Float32bits(rng.Float32()*2-1))
				case tensor.Int32:
					binary.LittleEndian.PutUint32(b[j:], uint32(rng.IntN(ints)))
				case tensor.Int64:
					binary.LittleEndian.PutUint64(b[j:], uint64(rng.IntN(ints)))
				default:
					b[j] = byte(rng.IntN(256)) // one-byte types
				}
			}
			out[k] = append(out[k], b)
		}
	}
	return out
}

// tfliteRun is one Invoke's outputs from tflite29_run: their bytes and
// shapes.
type tfliteRun struct {
	data   [][]byte
	shapes [][]int
}

// tflite29Outputs runs the model at path in TensorFlow Lite 2.9 once per
// set of inputs, each time on a fresh interpreter.
func tflite29Outputs(t *testing.T, runner, path string, ins [][][]byte) []tfliteRun {
	t.Helper()
	dir := t.TempDir()
	out := make([]tfliteRun, len(ins))
	for k, in := range ins {
		inPath, outPath, metaPath := filepath.Join(dir, "in.raw"), filepath.Join(dir, "out.raw"), filepath.Join(dir, "meta.json")
		if err := os.WriteFile(inPath, bytes.Join(in, nil), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), runner, path, inPath, outPath, metaPath)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("TensorFlow Lite 2.9 on %s: %v: %s", path, err, msg)
		}
		raw, err := os.ReadFile(outPath)
		if err != nil {
			t.Fatal(err)
		}
		metaRaw, err := os.ReadFile(metaPath)
		if err != nil {
			t.Fatal(err)
		}
		var meta []struct {
			Bytes int   `json:"bytes"`
			Shape []int `json:"shape"`
		}
		if err := json.Unmarshal(metaRaw, &meta); err != nil {
			t.Fatalf("%s: %v", metaPath, err)
		}
		for _, o := range meta {
			out[k].data = append(out[k].data, raw[:o.Bytes])
			out[k].shapes = append(out[k].shapes, o.Shape)
			raw = raw[o.Bytes:]
		}
	}
	return out
}

// compareWithTFLite checks it's outputs after Invoke k against TFLite's.
func compareWithTFLite(t *testing.T, it *core.Interpreter, want tfliteRun, k int, spread float64) {
	t.Helper()
	if len(want.data) != it.NumOutputs() {
		t.Fatalf("invoke %d: %d outputs, TFLite has %d", k, it.NumOutputs(), len(want.data))
	}
	for i := range it.NumOutputs() {
		o := it.Output(i)
		if !slices.Equal(o.Shape(), want.shapes[i]) {
			t.Errorf("invoke %d output %d %q: shape %v, TFLite %v", k, i, o.Name(), o.Shape(), want.shapes[i])
			continue
		}
		if msg := outputDiff(o.Type(), o.Data(), want.data[i], spread); msg != "" {
			t.Errorf("invoke %d output %d %q: %s", k, i, o.Name(), msg)
		}
	}
}

// outputDiff says how got differs from TFLite's want: for FLOAT32 beyond
// 1e-5 relative (1e-6 absolute near zero) or, when spread > 0, beyond
// spread times want's largest magnitude; for other types in any byte.
func outputDiff(typ tensor.DType, got, want []byte, spread float64) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, TFLite %d", len(got), len(want))
	}
	if typ != tensor.Float32 {
		for j := range got {
			if got[j] != want[j] {
				return fmt.Sprintf("byte %d is %d, TFLite %d", j, got[j], want[j])
			}
		}
		return ""
	}
	f32 := func(b []byte, j int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[j:]))) }
	tol, floor := 1e-5, 1e-6
	if spread > 0 {
		peak := 0.0
		for j := 0; j+4 <= len(want); j += 4 {
			peak = max(peak, math.Abs(f32(want, j)))
		}
		tol, floor = 0, spread*peak // every value past the floor is over
	}
	worst, at, over := 0.0, -1, 0
	for j := 0; j+4 <= len(got); j += 4 {
		g, w := f32(got, j), f32(want, j)
		d := math.Abs(g - w)
		if d <= floor {
			continue
		}
		r := d / math.Abs(w)
		if r > tol || math.IsNaN(d) {
			over++
		}
		if r > worst || math.IsNaN(r) {
			worst, at = r, j/4
		}
	}
	if over > 0 {
		return fmt.Sprintf("%d of %d values beyond the tolerance; the worst, value %d, is %g relative from TFLite's (%g, TFLite %g)",
			over, len(got)/4, at, worst, f32(got, 4*at), f32(want, 4*at))
	}
	return ""
}

// publishedSignatureModels are published models with several signature
// defs, for "delego run --signature".
var publishedSignatureModels = []publishedModel{
	{"google-ai-edge+LiteRT/litert/js/packages/core/testdata/multi_signature_model.tflite", "signatures add, mul, sub over 3 subgraphs", 4, "", 0},
	{"google+mediapipe/mediapipe/util/tflite/testdata/test_two_signature_keys_model.tflite", "signatures model_one, model_two over 2 subgraphs", 4, "", 0},
	{"google+lyra/lyra/model_coeffs/quantizer.tflite", "Lyra's quantizer: decode (subgraph 0) and encode (subgraph 1)", 8, "", 0},
}

// TestPublishedSignaturesAgreeWithTFLite runs every signature of
// published multi-signature models with "delego run --signature", inputs
// given by name, and compares what --output writes with TensorFlow Lite
// 2.9. TFLite 2.9's C library has no signature runner, so it runs the
// model with the signature's subgraph moved first (the subgraph its
// SignatureRunner invokes), fed in that subgraph's input order.
func TestPublishedSignaturesAgreeWithTFLite(t *testing.T) {
	dir, runner := os.Getenv("DELEGO_GITHUB_MODELS"), os.Getenv("DELEGO_TFLITE29_RUN")
	if dir == "" || runner == "" {
		t.Skip("set DELEGO_GITHUB_MODELS and DELEGO_TFLITE29_RUN (see TestPublishedModelsAgreeWithTFLite)")
	}
	for _, pm := range publishedSignatureModels {
		path := filepath.Join(dir, pm.file)
		m, err := model.Load(path)
		if err != nil {
			t.Fatalf("%s: %v", pm.file, err)
		}
		t.Cleanup(func() { m.Close() })
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, sig := range m.Signatures() {
			t.Run(filepath.Base(pm.file)+"/"+sig.Key, func(t *testing.T) {
				first := subgraphFirst(t, raw, sig.Subgraph)
				fm, err := model.New(first)
				if err != nil {
					t.Fatal(err)
				}
				it := allocated(t, fm, &core.Options{})
				ins := publishedInputs(it, pm.ints, 1)[0]
				want := tflite29Outputs(t, runner, writeTemp(t, "first.tflite", first), [][][]byte{ins})[0]
				got := runSignature(t, path, sig, it, ins)
				outs := fm.Subgraph(0).Outputs()
				for i, st := range sig.Outputs {
					j := slices.Index(outs, st.Tensor)
					typ := fm.Subgraph(0).Tensor(st.Tensor).Type
					if msg := outputDiff(typ, got[i], want.data[j], 0); msg != "" {
						t.Errorf("output %q: %s", st.Name, msg)
					}
				}
			})
		}
	}
}

// subgraphFirst returns the model raw with subgraph k and subgraph 0
// swapped (the models here have no control flow that names subgraphs).
func subgraphFirst(t *testing.T, raw []byte, k int) []byte {
	t.Helper()
	mt := schema.GetRootAsModel(raw, 0).UnPack()
	mt.Subgraphs[0], mt.Subgraphs[k] = mt.Subgraphs[k], mt.Subgraphs[0]
	mt.SignatureDefs = nil
	b := flatbuffers.NewBuilder(len(raw))
	b.FinishWithFileIdentifier(mt.Pack(b), []byte("TFL3"))
	return b.FinishedBytes()
}

// writeTemp writes data to a new file named name and returns its path.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runSignature runs signature sig of the model at path with "delego run
// --signature", its inputs ins given as --input NAME=FILE in the order of
// the subgraph's inputs (it, the subgraph moved first), and returns each
// signature output's bytes from --output, in the signature's order.
func runSignature(t *testing.T, path string, sig model.Signature, it *core.Interpreter, ins [][]byte) [][]byte {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.raw")
	args := []string{"run", path, "--signature", sig.Key, "--output", out}
	for _, st := range sig.Inputs {
		i := -1
		for j := range it.NumInputs() {
			if it.Input(j) == it.Tensor(st.Tensor) {
				i = j
			}
		}
		if i < 0 {
			t.Fatalf("signature input %q is not an input of subgraph %d", st.Name, sig.Subgraph)
		}
		args = append(args, "--input", st.Name+"="+writeTemp(t, st.Name+".raw", ins[i]))
	}
	if _, stderr, err := runDelego(t, args...); err != nil {
		t.Fatalf("delego %v: %v: %s", args, err, stderr)
	}
	data := readFile(t, out)
	got := make([][]byte, len(sig.Outputs))
	for i, st := range sig.Outputs {
		n := len(it.Tensor(st.Tensor).Data())
		got[i], data = data[:n], data[n:]
	}
	return got
}
