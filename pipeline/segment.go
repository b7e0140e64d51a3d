package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/tensor"
)

// segment is one interpreter of the pipeline and what it reads and writes.
type segment struct {
	it Interpreter
	// inputs are the names of its input tensors, in order; drop the names
	// of the tensors no later segment reads, deleted from an item after it.
	inputs []string
	drop   []string

	mu    sync.Mutex
	stats SegmentStats
}

// link makes the segments, checking that each one's inputs are found, by
// name, among the first segment's inputs and the earlier segments'
// outputs, with the same type and size.
func link(its []Interpreter) ([]*segment, error) {
	avail := map[string]*core.Tensor{}
	for _, t := range tensorsOf(its[0].NumInputs(), its[0].Input) {
		avail[t.Name()] = t
	}
	lastRead := map[string]int{} // by tensor name: the last segment that reads it, else its maker
	segs := make([]*segment, len(its))
	for k, it := range its {
		s := &segment{it: it}
		for i, t := range tensorsOf(it.NumInputs(), it.Input) {
			src, ok := avail[t.Name()]
			switch {
			case !ok:
				return nil, fmt.Errorf("pipeline segment %d: input %d (%q) is neither an input of segment 0 nor an output of an earlier segment", k, i, t.Name())
			case src.Type() != t.Type() || src.ByteSize() != t.ByteSize():
				return nil, fmt.Errorf("pipeline segment %d: input %d (%q) is %s with %d bytes; the tensor of that name before it is %s with %d bytes",
					k, i, t.Name(), t.Type(), t.ByteSize(), src.Type(), src.ByteSize())
			}
			s.inputs = append(s.inputs, t.Name())
			lastRead[t.Name()] = k
		}
		if k < len(its)-1 {
			for _, t := range tensorsOf(it.NumOutputs(), it.Output) {
				avail[t.Name()] = t
				lastRead[t.Name()] = k
			}
		}
		segs[k] = s
	}
	for name := range avail {
		k := lastRead[name] // a pushed tensor nobody reads: 0, so dropped at once
		segs[k].drop = append(segs[k].drop, name)
	}
	for _, s := range segs {
		slices.Sort(s.drop)
	}
	return segs, nil
}

// tensorsOf lists n tensors by index.
func tensorsOf(n int, at func(int) *core.Tensor) []*core.Tensor {
	out := make([]*core.Tensor, n)
	for i := range out {
		out[i] = at(i)
	}
	return out
}

// run runs the segment on an item: its inputs in, Invoke, copies of its
// outputs added to the item, what no later segment reads dropped.
func (s *segment) run(ctx context.Context, it *item) error {
	start := time.Now()
	for i, name := range s.inputs {
		if err := s.it.Input(i).CopyFrom(it.tensors[name].Data); err != nil {
			return fmt.Errorf("input %d (%q): %w", i, name, err)
		}
	}
	if err := s.it.Invoke(ctx); err != nil {
		return err
	}
	for _, t := range tensorsOf(s.it.NumOutputs(), s.it.Output) {
		it.tensors[t.Name()] = copyOf(t, t.Data())
	}
	for _, name := range s.drop {
		delete(it.tensors, name)
	}
	s.record(time.Since(start))
	return nil
}

// results are the segment's outputs in its order, from an item it ran.
func (s *segment) results(it *item) []*tensor.Tensor {
	out := make([]*tensor.Tensor, s.it.NumOutputs())
	for i := range out {
		out[i] = it.tensors[s.it.Output(i).Name()]
	}
	return out
}

func (s *segment) record(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.stats
	if st.Runs == 0 || d < st.Min {
		st.Min = d
	}
	st.Max = max(st.Max, d)
	st.Runs++
	st.Total += d
}

func (s *segment) snapshot() SegmentStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// copyOf is a tensor like t (name, type, shape, quantization) holding a
// copy of data.
func copyOf(t *core.Tensor, data []byte) *tensor.Tensor {
	out := &tensor.Tensor{Name: t.Name(), Type: t.Type(), Shape: t.Shape(), Data: slices.Clone(data)}
	if q := t.Quantization(); q != nil {
		out.Quant = &tensor.Quantization{Scale: slices.Clone(q.Scale), ZeroPoint: slices.Clone(q.ZeroPoint), Axis: q.Axis}
	}
	return out
}
