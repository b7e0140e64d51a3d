package nnapi

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// testRuntime builds delego's test NNAPI runtime into a temporary
// directory and points LibraryEnv at it for the test.
func testRuntime(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join("..", "..", "scripts", "build-nnapi-testlib.sh")
	if out, err := exec.CommandContext(t.Context(), "bash", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	t.Setenv(LibraryEnv, filepath.Join(dir, "libneuralnetworks.so"))
}

func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	return len(es)
}

// TestCompileInvokeCloseLeaksNothing compiles the quantized MobileNet as
// one partition, invokes it and closes it again and again: no file
// descriptor (memfds included) may be left behind.
func TestCompileInvokeCloseLeaksNothing(t *testing.T) {
	testRuntime(t)
	data, err := os.ReadFile(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(data)
	if err != nil {
		t.Fatal(err)
	}
	sg := m.Subgraph(0)
	in, out := sg.Tensor(sg.Inputs()[0]), sg.Tensor(sg.Outputs()[0])
	dl := New()
	ctx := context.Background()
	if _, err := dl.Support(ctx); err != nil {
		t.Fatal(err)
	}
	run := func() {
		x, err := dl.Compile(ctx, &delegate.Partition{Model: data})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		it := &tensor.Tensor{Type: in.Type, Shape: in.Shape, Data: make([]byte, 128*128*3)}
		ot := &tensor.Tensor{Type: out.Type, Shape: out.Shape, Data: make([]byte, 1001)}
		for range 2 {
			if err := x.Invoke(ctx, []*tensor.Tensor{it}, []*tensor.Tensor{ot}); err != nil {
				t.Fatal(err)
			}
		}
	}
	run()
	before := openFDs(t)
	for range 10 {
		run()
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d open files before, %d after 10 compile-invoke-close rounds", before, after)
	}
}

// TestLowerGoldenModels lowers every golden model whole at level 30: one
// NNAPI operation per node or more, every operand typed.
func TestLowerGoldenModels(t *testing.T) {
	for _, name := range []string{"mobilenet_v1_0.25_128_float", "mobilenet_v1_0.25_128_quant", "mobilenet_v2_1.0_224_quant", "split_concat"} {
		m, err := model.Load(shared.Model(t, name+".tflite"))
		if err != nil {
			t.Fatal(err)
		}
		g, err := lowerModel(m, 30)
		m.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(g.operations) < m.Subgraph(0).NumOperators() || len(g.inputs) == 0 || len(g.outputs) == 0 {
			t.Errorf("%s: %d operations, %d inputs, %d outputs", name, len(g.operations), len(g.inputs), len(g.outputs))
		}
	}
}
