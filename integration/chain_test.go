package integration

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// writeChain writes a model of n ADDs in a chain, t(i+1) = t(i) + in, so
// that its output is (n+1)·in, with a one-float input file of value 1.
func writeChain(t testing.TB, dir string, n int) (modelPath, inputPath string) {
	t.Helper()
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{1})
	prev := in
	for i := range n {
		next := b.Tensor("t"+strconv.Itoa(i), tensor.Float32, []int{1})
		b.Op(schema.BuiltinOperatorADD, 1, []int{prev, in}, []int{next}, nil)
		prev = next
	}
	b.Inputs(in)
	b.Outputs(prev)
	modelPath = filepath.Join(dir, fmt.Sprintf("chain%d.tflite", n))
	inputPath = filepath.Join(dir, "one.raw")
	if err := os.WriteFile(modelPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inputPath, binary.LittleEndian.AppendUint32(nil, math.Float32bits(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return modelPath, inputPath
}

// runChain runs `delego run` on a chain with extra flags, checks its output
// and returns the command's peak resident memory in bytes.
func runChain(t testing.TB, n int, modelPath, inputPath string, extra ...string) int64 {
	t.Helper()
	out := filepath.Join(filepath.Dir(modelPath), "out.raw")
	cmd := exec.Command(binPath, append([]string{"run", modelPath, "--input", inputPath, "--output", out}, extra...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("delego run %d-op chain %v: %v\n%s", n, extra, err, b)
	}
	got := readFile(t, out)
	if len(got) != 4 || math.Float32frombits(binary.LittleEndian.Uint32(got)) != float32(n+1) {
		t.Fatalf("%d-op chain %v: output % x, want %v", n, extra, got, float32(n+1))
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
}

// TestLongChain runs a 20,000-op chain on the CPU kernels and as one
// partition of the cpu plugin: long graphs are no special case.
func TestLongChain(t *testing.T) {
	m, in := writeChain(t, t.TempDir(), 20000)
	runChain(t, 20000, m, in)
	runChain(t, 20000, m, in, "--delegate", "cpu")
}

// BenchmarkChain times `delego run` (load, verify, plan, allocate, invoke)
// on chains of 10k to 100k ops, on the CPU kernels and with the whole chain
// delegated to the cpu plugin, and reports the peak resident memory of the
// process or its plugin, whichever is larger. Each doubling should about
// double both.
func BenchmarkChain(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{10000, 20000, 40000, 100000} {
		m, in := writeChain(b, dir, n)
		for _, c := range []struct {
			name  string
			flags []string
		}{{"kernels", nil}, {"delegate-cpu", []string{"--delegate", "cpu"}}} {
			b.Run(fmt.Sprintf("ops=%d/%s", n, c.name), func(b *testing.B) {
				var peak int64
				for range b.N {
					peak = max(peak, runChain(b, n, m, in, c.flags...))
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
			})
		}
	}
}
