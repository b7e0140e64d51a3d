package nnapi

import (
	"context"
	"fmt"
	"sync"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/plugins/nnapi/nn"
	"github.com/delego/delego/tensor"
)

// executable is a compiled partition: the NNAPI model, its compilation,
// an optional burst, and one shared memory holding every input and output
// (NNAPI reads and writes it in place; Invoke copies the host's tensors in
// and out). Where the runtime can reuse an execution (feature level 5),
// the one execution is made at Compile; before, NNAPI allows each
// execution to compute once, so Invoke makes one per call: the only thing
// allocated per Invoke.
type executable struct {
	lib   *nn.Lib
	built *built
	comp  *nn.Compilation
	burst *nn.Burst
	io    *nn.Memory
	ins   []span
	outs  []span
	reuse *nn.Execution // nil: one execution per Invoke

	mu sync.Mutex // one Invoke at a time: the io memory is shared
}

// span is where one input or output lies in the io memory.
type span struct {
	off, size int
	flip      bool // int8 carried as uint8: xor 0x80 on the way
}

// compile builds g, compiles it for ds with the settings, and allocates
// the io memory.
func compile(f *found, g *graph, ds []*nn.Device, t target, s settings, partition []byte) (_ *executable, err error) {
	x := &executable{lib: f.lib}
	defer func() {
		if err != nil {
			x.Close()
		}
	}()
	if x.built, err = build(f.lib, g, s.fp16 && t.level >= level11, true); err != nil {
		return nil, err
	}
	if x.comp, err = f.lib.NewCompilation(x.built.model, ds); err != nil {
		return nil, err
	}
	if err := x.configure(f, t, s, partition); err != nil {
		return nil, err
	}
	if err := x.comp.Finish(); err != nil {
		return nil, err
	}
	if s.burst && t.level >= level12 {
		if x.burst, err = x.comp.NewBurst(); err != nil {
			return nil, err
		}
	}
	if err := x.allocate(g); err != nil {
		return nil, err
	}
	if f.lib.CanReuse() && f.level >= nn.FeatureLevel5 {
		if x.reuse, err = x.execution(true); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// configure applies preference, priority (feature level 30) and caching
// (29, with cache_directory and model_token), as TFLite does.
func (x *executable) configure(f *found, t target, s settings, partition []byte) error {
	if err := x.comp.SetPreference(s.preference); err != nil {
		return err
	}
	if s.priority != 0 && t.level >= level13 {
		if err := x.comp.SetPriority(s.priority); err != nil {
			return err
		}
	}
	if s.cacheDir != "" && t.level >= level12 {
		if err := x.comp.SetCaching(s.cacheDir, s.cacheToken(partition, t.level)); err != nil {
			return err
		}
	}
	return nil
}

// allocate lays out the io memory: inputs, then outputs.
func (x *executable) allocate(g *graph) (err error) {
	size := 0
	place := func(ops []uint32) []span {
		out := make([]span, len(ops))
		for i, o := range ops {
			op := g.operands[o]
			n := op.Type.ElementSize()
			for _, d := range op.Dims {
				n *= int(d)
			}
			size = alignUp(size)
			out[i] = span{off: size, size: n, flip: op.flip}
			size += n
		}
		return out
	}
	x.ins, x.outs = place(g.inputs), place(g.outputs)
	x.io, err = x.lib.NewMemory("io", size, true)
	return err
}

// execution makes an execution bound to the io memory.
func (x *executable) execution(reusable bool) (_ *nn.Execution, err error) {
	e, err := x.comp.NewExecution()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			e.Free()
		}
	}()
	if reusable {
		if err := e.SetReusable(true); err != nil {
			return nil, err
		}
	}
	for i, s := range x.ins {
		if err := e.SetInputFromMemory(i, x.io, s.off, s.size); err != nil {
			return nil, err
		}
	}
	for i, s := range x.outs {
		if err := e.SetOutputFromMemory(i, x.io, s.off, s.size); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Invoke copies the inputs into the io memory, computes and copies the
// outputs back.
func (x *executable) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(inputs) != len(x.ins) || len(outputs) != len(x.outs) {
		return fmt.Errorf("nnapi: %d inputs and %d outputs given; the partition has %d and %d", len(inputs), len(outputs), len(x.ins), len(x.outs))
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.io == nil {
		return fmt.Errorf("nnapi: invoke after close")
	}
	for i, t := range inputs {
		if err := x.copyIn(x.ins[i], t.Data, i); err != nil {
			return err
		}
	}
	if err := x.compute(); err != nil {
		return fmt.Errorf("nnapi: %w", err)
	}
	for i, t := range outputs {
		s := x.outs[i]
		if len(t.Data) != s.size {
			return fmt.Errorf("nnapi: output %d has %d bytes; the partition makes %d", i, len(t.Data), s.size)
		}
		copyFlip(t.Data, x.io.Bytes[s.off:s.off+s.size], s.flip)
	}
	return nil
}

func (x *executable) copyIn(s span, data []byte, i int) error {
	if len(data) != s.size {
		return fmt.Errorf("nnapi: input %d has %d bytes; the partition takes %d", i, len(data), s.size)
	}
	copyFlip(x.io.Bytes[s.off:s.off+s.size], data, s.flip)
	return nil
}

// copyFlip copies src to dst, flipping int8 to uint8 (or back) when asked.
func copyFlip(dst, src []byte, flip bool) {
	if !flip {
		copy(dst, src)
		return
	}
	for i, v := range src {
		dst[i] = v ^ 0x80
	}
}

// compute runs one execution: the reusable one, or a fresh one freed
// after; through the burst when there is one.
func (x *executable) compute() error {
	e := x.reuse
	if e == nil {
		var err error
		if e, err = x.execution(false); err != nil {
			return err
		}
		defer e.Free()
	}
	if x.burst != nil {
		return e.BurstCompute(x.burst)
	}
	return e.Compute()
}

// Close releases everything Compile made; safe twice.
func (x *executable) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.reuse.Free()
	x.burst.Free()
	x.comp.Free()
	x.built.free()
	x.io.Free()
	x.reuse, x.burst, x.comp, x.built, x.io = nil, nil, nil, nil, nil
	return nil
}

var _ delegate.Executable = (*executable)(nil)
