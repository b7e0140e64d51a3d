package core

import (
	"context"
	"runtime"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// BenchmarkInterpreterMemory measures what interpreters of one loaded
// model cost on the Go heap (after a collection): the first, each further
// one, and an interpreter's arena, in MB. The kernels' packed weights and
// per-channel constants are the model's (Model.Derived), and the nodes of
// an interpreter share one scratch, so each further interpreter costs its
// arena, that scratch and its kernels' small state.
//
//	go test -run - -bench InterpreterMemory -benchtime 1x ./core
func BenchmarkInterpreterMemory(b *testing.B) {
	for _, name := range []string{"mobilenet_v2_1.0_224_quant.tflite", "mobilenet_v2_1.0_224_float.tflite"} {
		b.Run(name, func(b *testing.B) {
			m, err := model.Load(shared.Model(b, name))
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			for b.Loop() {
				first, each, arena := interpreterCosts(b, m, 8)
				b.ReportMetric(first/1e6, "MB-first")
				b.ReportMetric(each/1e6, "MB-each-further")
				b.ReportMetric(arena/1e6, "MB-arena")
			}
		})
	}
}

// interpreterCosts builds 1+more interpreters of m and returns the heap the
// first took, the mean each further one took, and one's arena, in bytes.
func interpreterCosts(b *testing.B, m *model.Model, more int) (first, each, arena float64) {
	heap := func() float64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc)
	}
	var its []*Interpreter
	defer func() {
		for _, it := range its {
			it.Close()
		}
	}()
	add := func() {
		it, err := NewInterpreter(m, &Options{Threads: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := it.AllocateTensors(); err != nil {
			b.Fatal(err)
		}
		its = append(its, it)
	}
	base := heap()
	add()
	first = heap() - base
	for range more {
		add()
	}
	each = (heap() - base - first) / float64(more)
	return first, each, float64(its[0].ArenaBytes())
}

// TestInvokeAllocatesNothing: an Invoke of the MobileNets allocates nothing,
// on one thread or on two (the kernels keep their loops' bodies, so handing
// chunks to the team allocates nothing).
func TestInvokeAllocatesNothing(t *testing.T) {
	for _, name := range []string{"mobilenet_v2_1.0_224_quant.tflite", "mobilenet_v2_1.0_224_float.tflite"} {
		m, err := model.Load(shared.Model(t, name))
		if err != nil {
			t.Fatal(err)
		}
		var allocs [3]float64
		for _, threads := range []int{1, 2} {
			it, err := NewInterpreter(m, &Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			if err := it.AllocateTensors(); err != nil {
				t.Fatal(err)
			}
			allocs[threads] = testing.AllocsPerRun(10, func() {
				if err := it.Invoke(context.Background()); err != nil {
					t.Fatal(err)
				}
			})
			it.Close()
		}
		if allocs[1] != 0 || allocs[2] != 0 {
			t.Errorf("%s: %v allocations per Invoke on one thread, %v on two", name, allocs[1], allocs[2])
		}
	}
}
