package core

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/testsupport/shared"
)

func realModels(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob(shared.Path(tb, "models", "*.tflite"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no models in shared/models: %v", err)
	}
	return paths
}

func TestLoadRealModels(t *testing.T) {
	for _, p := range realModels(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			m, err := model.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			sg := m.Subgraph(0)
			if sg.NumOperators() == 0 || len(sg.Inputs()) == 0 || len(sg.Outputs()) == 0 {
				t.Fatalf("subgraph 0 has %d ops, %d inputs, %d outputs", sg.NumOperators(), len(sg.Inputs()), len(sg.Outputs()))
			}
			for i := range sg.NumOperators() {
				if oc := m.OpCodeOf(sg.Operator(i)); oc.Name() == "" {
					t.Errorf("op code %+v has no name", oc)
				}
			}
		})
	}
}

func TestOpCodeAcrossSchemaRevisions(t *testing.T) {
	// mobilenet_v1_0.25_128_quant.tflite is from the 2018 schema: only the
	// deprecated byte is set. The TF2 model sets both fields.
	for _, c := range []struct {
		model string
		want  schema.BuiltinOperator
	}{
		{"mobilenet_v1_0.25_128_quant.tflite", schema.BuiltinOperatorCONV_2D},
		{"tf2_mobilenet_v2_1.0_224_ptq.tflite", schema.BuiltinOperatorQUANTIZE},
	} {
		m, err := model.Load(shared.Model(t, c.model))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, oc := range m.OpCodes() {
			found = found || oc.Builtin == c.want
		}
		if !found {
			t.Errorf("%s: no %s among op codes %+v", c.model, builtinName(c.want), m.OpCodes())
		}
	}
}

func builtinName(c schema.BuiltinOperator) string { return schema.EnumNamesBuiltinOperator[c] }

func TestUnresolvedCustomOp(t *testing.T) {
	m, err := model.Load(shared.Model(t, "model_invoking_error.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewInterpreter(m, nil)
	var uerr *UnsupportedOpError
	if !errors.As(err, &uerr) || !errors.Is(err, ErrUnsupportedOp) {
		t.Fatalf("err = %v, want UnsupportedOpError", err)
	}
	if !strings.Contains(err.Error(), "fake-op-double") || uerr.Node != 0 {
		t.Errorf("error %q should name node 0 and fake-op-double", err)
	}
}

func TestMalformedModels(t *testing.T) {
	good, err := os.ReadFile(shared.Model(t, "split_concat.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":         nil,
		"short":         good[:6],
		"bad ident":     append([]byte{0, 0, 0, 0, 'X', 'X', 'X', 'X'}, good[8:]...),
		"half":          good[:len(good)/2],
		"root past end": append([]byte{0xff, 0xff, 0xff, 0x7f}, good[4:]...),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := model.New(data)
			if !errors.Is(err, model.ErrMalformed) {
				t.Fatalf("err = %v, want model.ErrMalformed", err)
			}
		})
	}
}

func TestTruncatedAndCorruptedRealModels(t *testing.T) {
	for _, p := range realModels(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 2<<20 {
			continue // the small models cover the same tables; keep the test fast
		}
		for _, frac := range []int{2, 3, 10, 100} {
			cut := data[:len(data)*(frac-1)/frac]
			if _, err := model.New(cut); err == nil {
				// A cut that leaves every table intact can still verify; it must then run safely.
				checkRuns(t, cut)
			}
		}
		// Flip bytes at deterministic positions; any outcome but a panic is acceptable.
		state := uint32(1)
		for i := 0; i < 200; i++ {
			c := append([]byte(nil), data...)
			for j := 0; j < 4; j++ {
				state = state*1664525 + 1013904223
				c[int(state>>8)%len(c)] ^= byte(state)
			}
			checkRuns(t, c)
		}
	}
}

// checkRuns loads data and, when it verifies, builds and runs an interpreter
// on it with zero inputs. Errors are fine; panics fail the test (through the
// test binary's crash), and kernel panics caught by guard are reported.
func checkRuns(t *testing.T, data []byte) {
	t.Helper()
	m, err := model.New(data, model.WithMaxTensorBytes(16<<20))
	if err != nil {
		if !errors.Is(err, model.ErrMalformed) {
			t.Fatalf("load error %v does not wrap model.ErrMalformed", err)
		}
		return
	}
	it, err := NewInterpreter(m, nil)
	if err != nil {
		return
	}
	if err := it.AllocateTensors(); err != nil {
		return
	}
	_ = it.Invoke(t.Context())
}

// FuzzNewModel feeds mutated real models to the loader and, when they
// verify, to the interpreter: any outcome but an error wrapping
// ErrMalformedModel from the loader, a panic that escapes, or a run that takes
// longer than a few seconds (a loop that never ends) fails.
func FuzzNewModel(f *testing.F) {
	for _, p := range realModels(f) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) <= 64<<10 { // small graphs: thousands of runs, not a handful
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		result := make(chan error, 1)
		go func() {
			m, err := model.New(data, model.WithMaxTensorBytes(1<<20))
			if err != nil && !errors.Is(err, model.ErrMalformed) {
				result <- fmt.Errorf("load error %v does not wrap model.ErrMalformed", err)
				return
			}
			if err == nil {
				if it, err := NewInterpreter(m, nil); err == nil && it.AllocateTensors() == nil {
					_ = it.Invoke(t.Context())
				}
			}
			result <- nil
		}()
		select {
		case err := <-result:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("load, allocate and invoke did not finish within 10s")
		}
	})
}
