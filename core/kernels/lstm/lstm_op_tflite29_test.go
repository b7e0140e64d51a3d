package lstm

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/lstm/lstm_op_tflite29.json.gz holds one-operator LSTM and
// BIDIRECTIONAL_SEQUENCE_LSTM models run by the real TensorFlow Lite 2.9
// (made by testdata/gen/lstm/lstm_op_tflite29_gen.py): each case's input
// bytes and the outputs of several Invokes on one interpreter, the state
// carrying over between them, or the stage at which TFLite failed.

// lstmOpCase is one recorded case.
type lstmOpCase struct {
	Name    string   `json:"name"`
	Model   string   `json:"model"`
	Input   string   `json:"input"`   // the non-constant, non-variable inputs' bytes, in order
	Invokes []string `json:"invokes"` // per Invoke, the outputs' bytes concatenated
	Error   string   `json:"error"`   // "load", "prepare" or "eval"
	Message string   `json:"message"`
}

// Cases named *_oob are ones TFLite 2.9 runs while reading memory outside
// their tensors (an integer cell state of INT8, read as INT16; merged
// outputs of a batch-major input; auxiliary input rows shorter than the
// input's): its results depend on its arena's layout, and delego refuses
// them as unsupported.

func TestLSTMOpsAgainstTFLite29(t *testing.T) {
	var cases []lstmOpCase
	kerneltest.DecodeRecording(t, "lstm/lstm_op_tflite29.json.gz", &cases)
	if len(cases) < 100 {
		t.Fatalf("only %d cases", len(cases))
	}
	reg := kernel.NewRegistry(Ops()...)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			outs, err := lstmOpRun(t, reg, &c)
			switch {
			case c.Error != "":
				if err == nil {
					t.Fatalf("TFLite fails (%s: %s), we succeed", c.Error, c.Message)
				}
				return
			case strings.HasSuffix(c.Name, "_oob"):
				if !errors.Is(err, kernel.ErrUnsupported) {
					t.Fatalf("TFLite reads outside the tensors; we return %v, want a refusal", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			for k, want := range c.Invokes {
				wb, _ := base64.StdEncoding.DecodeString(want)
				off := 0
				for j, o := range outs[k] {
					if off+len(o.data) > len(wb) {
						t.Fatalf("invoke %d: %d output bytes, TFLite has %d", k+1, off+len(o.data), len(wb))
					}
					lstmCompareRel(t, c.Name, k+1, j, o.typ, o.data, wb[off:off+len(o.data)])
					off += len(o.data)
				}
				if off != len(wb) {
					t.Fatalf("invoke %d: %d output bytes, TFLite has %d", k+1, off, len(wb))
				}
			}
		})
	}
}

type lstmOpOutput struct {
	typ  tensor.DType
	data []byte
}

// lstmOpRun makes, prepares and runs the case's node as the interpreter
// would, returning each Invoke's outputs.
func lstmOpRun(t *testing.T, reg *kernel.Registry, c *lstmOpCase) ([][]lstmOpOutput, error) {
	t.Helper()
	model, err := base64.StdEncoding.DecodeString(c.Model)
	if err != nil {
		t.Fatal(err)
	}
	input, err := base64.StdEncoding.DecodeString(c.Input)
	if err != nil {
		t.Fatal(err)
	}
	n, info, code := lstmModelNode(t, model, 0)
	r, ok := reg.Lookup(code, "")
	if !ok {
		t.Fatalf("no registration for %s", kernel.OpName(code))
	}
	if !r.Versions.Contains(info.Version) {
		return nil, kernel.Unsupported("%s version %d", r.Name(), info.Version)
	}
	k, err := r.New(info)
	if err != nil {
		return nil, err
	}
	if err := k.Prepare(n); err != nil {
		return nil, err
	}
	for _, o := range n.Outputs {
		if o != nil {
			o.Data = tensor.NewTensor(o.Type, o.Shape...).Data
		}
	}
	// The subgraph's inputs: the operator's non-constant, non-variable
	// inputs, each once, in order.
	seen := map[*tensor.Tensor]bool{}
	for _, in := range n.Inputs {
		if in == nil || in.Const || in.Variable || seen[in] {
			continue
		}
		seen[in] = true
		if len(input) < len(in.Data) {
			t.Fatalf("case input has too few bytes for input %v", in.Shape)
		}
		copy(in.Data, input)
		input = input[len(in.Data):]
	}
	if len(input) != 0 {
		t.Fatalf("%d case input bytes left over", len(input))
	}
	var outs [][]lstmOpOutput
	for range max(len(c.Invokes), 1) {
		if err := k.Eval(n); err != nil {
			return nil, err
		}
		var step []lstmOpOutput
		for _, o := range n.Outputs {
			if o != nil {
				step = append(step, lstmOpOutput{o.Type, bytes.Clone(o.Data)})
			}
		}
		outs = append(outs, step)
	}
	return outs, nil
}

// lstmCompareRel compares output j of invoke k: integer outputs byte for
// byte, float32 ones within 1e-5 (relative above 1).
func lstmCompareRel(t *testing.T, name string, k, j int, typ tensor.DType, got, want []byte) {
	t.Helper()
	if typ != tensor.Float32 {
		if !bytes.Equal(got, want) {
			t.Errorf("%s: invoke %d output %d: got %v, want %v", name, k, j, got, want)
		}
		return
	}
	for i := 0; i+4 <= len(got); i += 4 {
		g := float64(math.Float32frombits(binary.LittleEndian.Uint32(got[i:])))
		w := float64(math.Float32frombits(binary.LittleEndian.Uint32(want[i:])))
		if g != w && !(math.Abs(g-w) <= 1e-5*math.Max(1, math.Abs(w))) {
			t.Errorf("%s: invoke %d output %d: value %d = %g, want %g", name, k, j, i/4, g, w)
			return
		}
	}
}
