package elementwise

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// TestWorkersSplit checks that a team runs every index exactly once, in the
// chunks ParallelFor would cut, with each chunk's worker index.
func TestWorkersSplit(t *testing.T) {
	for _, threads := range []int{2, 3, 4} {
		team := kernel.NewWorkers(threads)
		for _, c := range []struct{ n, align int }{{0, 1}, {1, 1}, {5, 4}, {49, 12}, {100, 16}, {7, 1}, {1001, 16}} {
			for round := range 3 {
				got := make([]int, c.n)
				want := make([]int, c.n)
				team.ParallelFor(c.n, threads, c.align, func(w, lo, hi int) {
					for i := lo; i < hi; i++ {
						got[i] += w + 1
					}
				})
				kernel.ParallelFor(c.n, threads, c.align, func(w, lo, hi int) {
					for i := lo; i < hi; i++ {
						want[i] += w + 1
					}
				})
				if !slices.Equal(got, want) {
					t.Errorf("threads %d, n %d, align %d, round %d: team %v, ParallelFor %v", threads, c.n, c.align, round, got, want)
				}
			}
		}
		team.Close()
	}
}

// TestWorkersPanic checks that a panic in a worker's chunk reaches the
// caller once the loop is over, and that the team still works after.
func TestWorkersPanic(t *testing.T) {
	team := kernel.NewWorkers(2)
	defer team.Close()
	func() {
		defer func() {
			if r := recover(); fmt.Sprint(r) != "chunk 1" {
				t.Errorf("recovered %v, want the worker's panic", r)
			}
		}()
		team.ParallelFor(10, 2, 1, func(w, lo, hi int) {
			if w == 1 {
				panic(fmt.Sprintf("chunk %d", w))
			}
		})
	}()
	sum := make([]int, 2)
	team.ParallelFor(10, 2, 1, func(w, lo, hi int) { sum[w] = hi - lo })
	if sum[0]+sum[1] != 10 {
		t.Errorf("after a panic: chunks cover %d of 10", sum[0]+sum[1])
	}
}

// TestWorkersAllocs checks that a loop on a team allocates nothing beyond
// its closure.
func TestWorkersAllocs(t *testing.T) {
	team := kernel.NewWorkers(2)
	defer team.Close()
	var sink [2]int
	fn := func(w, lo, hi int) { sink[w] += hi - lo }
	if a := testing.AllocsPerRun(100, func() { team.ParallelFor(64, 2, 1, fn) }); a != 0 {
		t.Errorf("%v allocations per loop", a)
	}
}

// BenchmarkParallelFor compares a loop's overhead on a team and with a
// goroutine per chunk.
func BenchmarkParallelFor(b *testing.B) {
	var sink [2]int
	fn := func(w, lo, hi int) { sink[w] += hi - lo }
	b.Run("workers", func(b *testing.B) {
		team := kernel.NewWorkers(2)
		defer team.Close()
		for b.Loop() {
			team.ParallelFor(2, 2, 1, fn)
		}
	})
	b.Run("goroutines", func(b *testing.B) {
		for b.Loop() {
			kernel.ParallelFor(2, 2, 1, fn)
		}
	})
}

// TestBinarySplit checks that ADD, SUB and MUL on large float and 8-bit
// tensors, cut among 2 or 3 threads, give the bytes of one thread.
func TestBinarySplit(t *testing.T) {
	const size = parallelMin + 1001
	r := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{"ADD", "SUB", "MUL"} {
		for _, typ := range []tensor.DType{tensor.Float32, tensor.Uint8, tensor.Int8} {
			mk := func() *tensor.Tensor {
				x := tv{typ: typ, shape: []int{1, size}, scale: 0.05, zp: 3}.tensor()
				if typ == tensor.Float32 {
					x.Quant = nil
				}
				for i := range x.Data {
					x.Data[i] = byte(r.Uint32())
				}
				if typ == tensor.Float32 {
					for i, v := range x.Float32s() {
						if v != v || v > 1e30 || v < -1e30 {
							x.Float32s()[i] = 1
						}
					}
				}
				return x
			}
			a, b := mk(), mk()
			var outs [][]byte
			for _, threads := range []int{1, 2, 3} {
				team := kernel.NewWorkers(threads)
				out := tv{typ: typ, scale: 0.1, zp: 2}.tensor()
				if typ == tensor.Float32 {
					out.Quant = nil
				}
				op := newEWOp(t, name, ewRelu, false)
				n := &kernel.Node{Inputs: []*tensor.Tensor{a, b}, Outputs: []*tensor.Tensor{out}, Threads: threads, Workers: team}
				if err := op.Prepare(n); err != nil {
					t.Fatal(err)
				}
				out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
				if err := op.Eval(n); err != nil {
					t.Fatal(err)
				}
				team.Close()
				outs = append(outs, out.Data)
			}
			for i := 1; i < len(outs); i++ {
				if !slices.Equal(outs[i], outs[0]) {
					t.Errorf("%s %s: %d threads differ from 1", name, typ, i+1)
				}
			}
		}
	}
}
