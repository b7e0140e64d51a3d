package lstm_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/model"

	"github.com/delego/delego/core"
	"github.com/delego/delego/tensor"
)

// TestLSTMThroughInterpreter runs the single-LSTM test models (see
// lstm_model_test.go) through the interpreter, which owns the variable state
// tensors and the intermediates, and checks both invokes against TFLite 2.9
// (integer outputs exactly, float ones within 2e-6).
func TestLSTMThroughInterpreter(t *testing.T) {
	models, err := filepath.Glob("../../../testdata/gen/lstm/lstm_*.tflite")
	if err != nil || len(models) == 0 {
		t.Fatalf("no test models: %v", err)
	}
	for _, path := range models {
		base := strings.TrimSuffix(path, ".tflite")
		t.Run(filepath.Base(base), func(t *testing.T) {
			m, err := model.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			it, err := core.NewInterpreter(m, &core.Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := it.AllocateTensors(); err != nil {
				t.Fatal(err)
			}
			in, err := os.ReadFile(base + ".input.raw")
			if err != nil {
				t.Fatal(err)
			}
			if err := it.Input(0).CopyFrom(in); err != nil {
				t.Fatal(err)
			}
			for k, suffix := range []string{".out1.raw", ".out2.raw"} {
				if err := it.Invoke(t.Context()); err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(base + suffix)
				if err != nil {
					t.Fatal(err)
				}
				got := it.Output(0).Data()
				if isFloat := it.Output(0).Type() == tensor.Float32; isFloat {
					lstmCloseFloats(t, k+1, got, want, 2e-6)
				} else if string(got) != string(want) {
					t.Errorf("invoke %d: output differs from TFLite 2.9", k+1)
				}
			}
			// After a reset the first invoke's output comes back.
			it.ResetVariables()
			if err := it.Invoke(t.Context()); err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(base + ".out1.raw")
			if got := it.Output(0).Data(); it.Output(0).Type() == tensor.Float32 {
				lstmCloseFloats(t, 3, got, want, 2e-6)
			} else if string(got) != string(want) {
				t.Error("invoke after ResetVariables differs from the first invoke")
			}
		})
	}
}

func lstmCloseFloats(t *testing.T, invoke int, got, want []byte, tol float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("invoke %d: %d bytes, want %d", invoke, len(got), len(want))
	}
	for i := 0; i+4 <= len(got); i += 4 {
		g := lstmF32(got[i:])
		w := lstmF32(want[i:])
		if !(g-w <= tol && w-g <= tol) {
			t.Errorf("invoke %d: value %d = %g, want %g", invoke, i/4, g, w)
			return
		}
	}
}

func lstmF32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
