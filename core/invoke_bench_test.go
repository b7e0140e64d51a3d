package core

import (
	"context"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// BenchmarkInvokeSmall measures Invoke on graphs whose nodes do almost no
// work (split_concat: three nodes over a few hundred bytes), where the
// interpreter's own cost per Invoke and per node is what is timed.
//
//	go test -run - -bench InvokeSmall ./core
func BenchmarkInvokeSmall(b *testing.B) {
	m, err := model.Load(shared.Model(b, "split_concat.tflite"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	it, err := NewInterpreter(m, &Options{Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		if err := it.Invoke(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
