package core

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TestFallbacksAreBounded: a plugin lost in every other Invoke, and
// restarted in the next, records an event per Invoke without end; Fallbacks
// keeps the move to the CPU for good of another partition and the last
// KeptFallbacks of them, and FallbackCount counts them all.
func TestFallbacksAreBounded(t *testing.T) {
	m := addRelu(t)
	in := float32Bytes(-2, -0.5, 0.5, 2)
	want, err := invokeWith(t, newReady(t, m, nil), in)
	if err != nil {
		t.Fatal(err)
	}
	lost := &scripted{op: schema.BuiltinOperatorADD}
	lost.invoke = func(ctx context.Context, in, out []*tensor.Tensor) error {
		if lost.invokes%2 == 1 {
			return crash(ctx, in, out)
		}
		return doubler(ctx, in, out)
	}
	broken := &scripted{name: "broken", op: schema.BuiltinOperatorRELU, compileErr: errors.New("no RELU here")}
	it := newReady(t, m, &Options{Delegates: []delegate.Delegate{lost, broken}, Settings: fallbackSettings(true, true),
		Restarts: Restarts{Backoff: time.Nanosecond}})
	const runs = 1000
	for run := range runs {
		got, err := invokeWith(t, it, in)
		if err != nil || !bytes.Equal(got[0], want[0]) {
			t.Fatalf("run %d: %v, %v", run, err, got)
		}
	}
	fbs := it.Fallbacks()
	if len(fbs) != 1+KeptFallbacks {
		t.Fatalf("%d events kept, want the move for good and the last %d", len(fbs), KeptFallbacks)
	}
	if first := fbs[0]; first.Outcome != delegate.MovedToCPU || first.Partition != 1 || first.Stage != delegate.StageCompile {
		t.Errorf("first event %v, want partition 1's compile failure", first)
	}
	if last := fbs[len(fbs)-1]; last.Outcome != delegate.Restarted || last.Partition != 0 {
		t.Errorf("last event %v, want partition 0 restarted", last)
	}
	ran, restarted := it.FallbackCount(delegate.RanOnCPU), it.FallbackCount(delegate.Restarted)
	if ran != runs/2 || restarted != runs/2 || it.FallbackCount() != 1+runs ||
		it.FallbackCount(delegate.MovedToCPU, delegate.Restarted) != 1+runs/2 {
		t.Errorf("counts: %d in all, %d ran on the CPU, %d restarted; want %d, %d, %d",
			it.FallbackCount(), ran, restarted, 1+runs, runs/2, runs/2)
	}
}
