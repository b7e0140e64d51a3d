package model

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/testsupport/shared"
)

// structureOnly returns a shared model with its buffers emptied: the whole
// structure (operators, tensors, options, signatures) in a few kilobytes,
// so that a fuzzer mutates what the loader checks rather than weights. An
// emptied buffer keeps its (now empty) data vector, so its tensors are
// still constants and the model still loads.
func structureOnly(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	m := schema.GetRootAsModel(data, 0).UnPack()
	for _, b := range m.Buffers {
		if b != nil {
			b.Data = b.Data[:0:0]
		}
	}
	return modelbuild.Pack(m)
}

// FuzzLoad loads and verifies arbitrary bytes, reads every model that loads
// through its accessors and the generated object API, and extracts one of
// its nodes. Nothing may panic, and every error must wrap ErrMalformed and
// read like a sentence: no Go runtime text, no repeated prefix. It is seeded
// with small models (two of them cyclic) and the structure of every shared
// one, so that it runs thousands of times a second on one core.
func FuzzLoad(f *testing.F) {
	paths, err := filepath.Glob(shared.Model(f, "*.tflite"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no shared models: %v", err)
	}
	for _, p := range paths {
		f.Add(structureOnly(f, p))
	}
	example, _, _ := modelbuild.Example()
	f.Add(example)
	f.Add(cycleModel())
	f.Add(selfLoopModel())
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := New(data, WithMaxTensorBytes(1<<20), WithMaxOperators(1<<12), WithMaxTensors(1<<12))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("load error %v does not wrap ErrMalformed", err)
			}
			checkMessage(t, "load", err.Error())
			return
		}
		if err := unpackAll(m); err != nil {
			t.Fatalf("a model that loaded panics in the generated accessors: %v", err)
		}
		for si := range m.NumSubgraphs() {
			sg := m.Subgraph(si)
			for i := range sg.NumTensors() {
				_ = sg.Tensor(i)
			}
			for _, op := range sg.Operators() {
				_ = m.OpCodeOf(op).Name()
			}
		}
		for i := range m.Subgraph(0).NumOperators() {
			_ = m.NodeView(i)
		}
		checkExtract(t, "fuzz", m)
	})
}
