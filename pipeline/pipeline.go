// Package pipeline runs a model cut into segments, each on its own
// interpreter, as a pipeline: while segment 1 runs one input, segment 0
// runs the next. It is what Coral's PipelinedModelRunner (libcoral
// coral/pipeline) is to models compiled with edgetpu_compiler
// --num_segments: each segment
// (*_segment_K_of_N_edgetpu.tflite) on an interpreter of its own Edge TPU,
// so that N devices work at once and the throughput approaches that of the
// slowest segment.
//
// Push hands the pipeline the first segment's inputs; Pop returns the last
// segment's outputs, in the order of the pushes. Tensors pass from segment
// to segment by name: a segment's inputs are the pushed inputs or earlier
// segments' outputs of the same name, as libcoral matches them. At most
// Options.MaxInFlight items are pushed and not yet popped: Push waits while
// the pipeline is full (backpressure). The first error of any segment ends
// the pipeline with that error: Push and Pop return it, and every segment's
// goroutine returns. Close ends the pipeline, draining the items in flight
// or cancelling them, and returns once no goroutine of the pipeline is left.
//
// The pipeline neither opens nor closes the interpreters: build them (each
// with the delegate settings that put it on its device, see
// coral_settings.device), allocate their tensors, hand them to New, and
// close them after Close.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/tensor"
)

// Interpreter is what a segment runs on: *core.Interpreter, with its
// tensors allocated. The pipeline calls it from one goroutine at a time.
type Interpreter interface {
	NumInputs() int
	Input(i int) *core.Tensor
	NumOutputs() int
	Output(i int) *core.Tensor
	Invoke(ctx context.Context) error
}

// ErrClosed is what Push returns after Close, and Pop once Close cancelled
// the items that were still in flight.
var ErrClosed = errors.New("pipeline closed")

// SegmentError is the error of a segment that failed, which ended the
// pipeline.
type SegmentError struct {
	// Segment is the failed segment's index, from 0.
	Segment int
	// Err is the segment's error.
	Err error
}

// Error names the segment and says what went wrong.
func (e *SegmentError) Error() string {
	return fmt.Sprintf("pipeline segment %d: %v", e.Segment, e.Err)
}

// Unwrap returns the segment's error, for errors.Is and errors.As.
func (e *SegmentError) Unwrap() error { return e.Err }

// Options configure a pipeline.
type Options struct {
	// MaxInFlight is the most items pushed and not yet popped; Push waits
	// while the pipeline holds that many. 0: two per segment.
	MaxInFlight int
}

// Pipeline runs segments in a pipeline. Push, Pop, Stats and Close may be
// called from different goroutines.
type Pipeline struct {
	segs   []*segment
	inputs []*core.Tensor // the first segment's, as Push wants them
	// in feeds the first segment; out is the last segment's output. Every
	// queue holds MaxInFlight items, so that a segment never waits to hand
	// an item on: slots, which Push fills and Pop empties, keeps the items
	// in the pipeline within that bound.
	in, out chan *item
	slots   chan struct{}
	// life ends when a segment fails, when the context given to New ends,
	// or when Close cancels: its cause says which (see stop).
	life     context.Context
	stop     context.CancelCauseFunc
	mu       sync.Mutex // guards closed and the sends on in
	closed   bool
	finished chan struct{} // closed when every segment's goroutine has returned
}

// item is one pushed input on its way: the tensors by name, the pushed
// ones and then each segment's outputs, less those no later segment reads.
type item struct {
	tensors map[string]*tensor.Tensor
}

// New starts a pipeline of the segments, in order: one goroutine per
// segment. Each segment's inputs must be, by name, type and size, inputs of
// the first segment or outputs of an earlier one. ctx bounds the
// pipeline's life: when it ends, the pipeline ends with its error.
func New(ctx context.Context, segments []Interpreter, opts *Options) (*Pipeline, error) {
	if len(segments) == 0 {
		return nil, errors.New("a pipeline needs at least one segment")
	}
	segs, err := link(segments)
	if err != nil {
		return nil, err
	}
	n := 2 * len(segments)
	if opts != nil && opts.MaxInFlight > 0 {
		n = opts.MaxInFlight
	}
	p := &Pipeline{segs: segs, inputs: tensorsOf(segments[0].NumInputs(), segments[0].Input),
		in: make(chan *item, n), slots: make(chan struct{}, n), finished: make(chan struct{})}
	p.life, p.stop = context.WithCancelCause(ctx)
	context.AfterFunc(p.life, p.closeInput)
	var upstream sync.WaitGroup
	in := p.in
	for k, s := range segs {
		out := make(chan *item, n)
		if k < len(segs)-1 {
			upstream.Add(1)
			go func(in <-chan *item) {
				defer upstream.Done()
				p.run(k, s, in, out)
			}(in)
		} else {
			p.out = out
			go func(in <-chan *item) {
				defer close(p.finished)
				p.run(k, s, in, out)
				upstream.Wait()
			}(in)
		}
		in = out
	}
	return p, nil
}

// run is segment k's goroutine: it runs every item that comes in and hands
// it on, until the segment before it (or Close, for the first) closes its
// input. Once the pipeline has ended, the items still coming are dropped.
func (p *Pipeline) run(k int, s *segment, in <-chan *item, out chan<- *item) {
	defer close(out)
	for it := range in {
		if p.life.Err() != nil {
			continue
		}
		if err := s.run(p.life, it); err != nil {
			p.stop(&SegmentError{Segment: k, Err: err})
			continue
		}
		out <- it
	}
}

// closeInput takes no more pushes: the first segment ends once it has run
// what it holds, then each segment after it.
func (p *Pipeline) closeInput() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.in)
	}
}

// Push hands the pipeline one input: the first segment's input tensors, in
// its order, each of its type and size (the data is copied). It waits while
// the pipeline is full, until ctx ends. After the pipeline has ended it
// returns why: a *SegmentError, or ErrClosed.
func (p *Pipeline) Push(ctx context.Context, inputs []*tensor.Tensor) error {
	it, err := p.newItem(inputs)
	if err != nil {
		return err
	}
	if err := p.ended(); err != nil {
		return err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("push: %w", ctx.Err())
	case <-p.life.Done():
		return cmpOr(p.ended(), ErrClosed)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		<-p.slots
		return cmpOr(p.ended(), ErrClosed)
	}
	p.in <- it // never waits: slots bounds the items
	return nil
}

// newItem checks the pushed tensors against the first segment's inputs and
// copies them.
func (p *Pipeline) newItem(inputs []*tensor.Tensor) (*item, error) {
	if len(inputs) != len(p.inputs) {
		return nil, fmt.Errorf("push: %d input tensors for a first segment with %d inputs", len(inputs), len(p.inputs))
	}
	it := &item{tensors: make(map[string]*tensor.Tensor, len(inputs))}
	for i, want := range p.inputs {
		in := inputs[i]
		if in.Type != want.Type() || len(in.Data) != want.ByteSize() {
			return nil, fmt.Errorf("push: input %d (%q): %s with %d bytes, want %s with %d bytes",
				i, want.Name(), in.Type, len(in.Data), want.Type(), want.ByteSize())
		}
		it.tensors[want.Name()] = copyOf(want, in.Data)
	}
	return it, nil
}

// Pop returns the outputs of the oldest item, the last segment's output
// tensors in its order (copies: the caller's to keep), waiting for them
// until ctx ends. Once the pipeline has ended it returns io.EOF when it was
// closed and every result popped, else the error that ended it (a
// *SegmentError, ErrClosed after Close cancelled, or the error of the
// context given to New).
func (p *Pipeline) Pop(ctx context.Context) ([]*tensor.Tensor, error) {
	select {
	case it, ok := <-p.out:
		if !ok {
			return nil, cmpOr(p.ended(), io.EOF)
		}
		<-p.slots
		if err := p.ended(); err != nil {
			return nil, err
		}
		return p.segs[len(p.segs)-1].results(it), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("pop: %w", ctx.Err())
	}
}

// errDrained is the pipeline's end after Close has drained it: no error.
var errDrained = errors.New("pipeline drained")

// ended is the error that ended the pipeline, nil while it runs or when
// Close drained it.
func (p *Pipeline) ended() error {
	err := context.Cause(p.life)
	if errors.Is(err, errDrained) {
		return nil
	}
	return err
}

// Close ends the pipeline. It takes no more pushes and lets the items in
// flight through every segment, so that Pop still returns their outputs;
// when ctx ends first, it cancels them (the segments' invokes see the
// cancellation) and Pop returns ErrClosed. It returns once every segment's
// goroutine has returned: with the *SegmentError that ended the pipeline,
// if one did, else with ctx's error if the drain was cut short, else nil.
// Close may be called more than once.
func (p *Pipeline) Close(ctx context.Context) error {
	p.closeInput()
	var cut error
	select {
	case <-p.finished:
	case <-ctx.Done():
		cut = fmt.Errorf("close: the items in flight were cancelled: %w", ctx.Err())
		p.stop(ErrClosed)
		<-p.finished
	}
	p.stop(errDrained)
	var serr *SegmentError
	if err := p.ended(); errors.As(err, &serr) {
		return err
	}
	return cut
}

// Stats are each segment's figures so far.
func (p *Pipeline) Stats() []SegmentStats {
	out := make([]SegmentStats, len(p.segs))
	for k, s := range p.segs {
		out[k] = s.snapshot()
	}
	return out
}

// SegmentStats are a segment's figures: how many items it ran and how
// long they took, from copying the inputs in to copying the outputs out.
type SegmentStats struct {
	Runs     int           // the items it ran
	Total    time.Duration // their time, all together
	Min, Max time.Duration // the shortest and the longest run
}

// Mean is the mean time per run, 0 before the first.
func (s SegmentStats) Mean() time.Duration {
	if s.Runs == 0 {
		return 0
	}
	return s.Total / time.Duration(s.Runs)
}

// cmpOr is the first error that is not nil.
func cmpOr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Sequential runs inputs through segments one after the other, without a
// pipeline, passing tensors on by name as the pipeline does, and returns
// the last segment's outputs (copies): what a pipelined run of the same
// inputs must give.
func Sequential(ctx context.Context, segments []Interpreter, inputs [][]byte) ([][]byte, error) {
	if len(segments) == 0 {
		return nil, errors.New("no segments")
	}
	vals := map[string][]byte{}
	for i, b := range inputs {
		vals[segments[0].Input(i).Name()] = b
	}
	for k, it := range segments {
		if err := runSegment(ctx, it, vals); err != nil {
			return nil, &SegmentError{Segment: k, Err: err}
		}
	}
	last := segments[len(segments)-1]
	out := make([][]byte, last.NumOutputs())
	for i := range out {
		out[i] = vals[last.Output(i).Name()]
	}
	return out, nil
}

// runSegment runs it on the values of vals named as its inputs, and adds
// its outputs to vals.
func runSegment(ctx context.Context, it Interpreter, vals map[string][]byte) error {
	for i := range it.NumInputs() {
		in := it.Input(i)
		v, ok := vals[in.Name()]
		if !ok {
			return fmt.Errorf("input %d (%q) is no earlier segment's output", i, in.Name())
		}
		if err := in.CopyFrom(v); err != nil {
			return err
		}
	}
	if err := it.Invoke(ctx); err != nil {
		return fmt.Errorf("invoke: %w", err)
	}
	for i := range it.NumOutputs() {
		vals[it.Output(i).Name()] = slices.Clone(it.Output(i).Data())
	}
	return nil
}
