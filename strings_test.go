package delego_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// stringsAndFloats writes a model with two paths to a file: words (STRING
// [3]) gathered by pos (INT32 [2]) into picked (STRING), and x (FLOAT32
// [4]) added to itself into sum.
func stringsAndFloats(t *testing.T) string {
	t.Helper()
	b := modelbuild.New()
	words := b.Tensor("words", tensor.String, []int{3})
	pos := b.Tensor("pos", tensor.Int32, []int{2})
	picked := b.Tensor("picked", tensor.String, []int{2})
	x := b.Tensor("x", tensor.Float32, []int{4})
	sum := b.Tensor("sum", tensor.Float32, []int{4})
	b.Op(schema.BuiltinOperatorGATHER, 1, []int{words, pos}, []int{picked},
		modelbuild.Options(schema.BuiltinOptionsGatherOptions, &schema.GatherOptionsT{}))
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, x}, []int{sum},
		modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Inputs(words, pos, x)
	b.Outputs(picked, sum)
	path := filepath.Join(t.TempDir(), "strings.tflite")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStringNodesStayOnCPU: with the delego-cpu plugin, which runs ADD and
// GATHER, the node that touches STRING tensors stays on the CPU kernels and
// the plan says why, the ADD goes to the plugin, and both give their
// answers through the Go API.
func TestStringNodesStayOnCPU(t *testing.T) {
	dir := buildCPUPlugin(t)
	ctx := context.Background()
	it, err := delego.Open(ctx, stringsAndFloats(t), delego.WithDelegates("cpu"), delego.WithPluginDirs(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	plan := it.Plan()
	if len(plan.Partitions) != 1 || !slices.Equal(plan.Partitions[0].Nodes, []int{1}) {
		t.Fatalf("partitions %+v, want the ADD (node 1) alone on the plugin", plan.Partitions)
	}
	if len(plan.CPUNodes) != 1 || plan.CPUNodes[0].Node != 0 || len(plan.CPUNodes[0].Reasons) != 1 ||
		!strings.Contains(plan.CPUNodes[0].Reasons[0], `cpu: STRING tensor "words": delegates never receive STRING tensors`) {
		t.Fatalf("CPU nodes %+v, want GATHER (node 0) with the STRING reason", plan.CPUNodes)
	}
	if err := it.Input(0).SetStrings([]string{"zero", "one", "two"}); err != nil {
		t.Fatal(err)
	}
	copy(it.Input(1).Int32s(), []int32{2, 0})
	copy(it.Input(2).Float32s(), []float32{1, 2, 3, 4})
	if err := it.Invoke(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := it.Output(0).Strings()
	if err != nil || !slices.Equal(got, []string{"two", "zero"}) {
		t.Errorf("picked = %q, %v; want [two zero]", got, err)
	}
	if sum := it.Output(1).Float32s(); !slices.Equal(sum, []float32{2, 4, 6, 8}) {
		t.Errorf("sum = %v, want [2 4 6 8]", sum)
	}
}
