package tpusim

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/plugins/edgetpu/usb"
)

// TestParseFaults: the grammar of planned faults, and an error naming the
// fault and what is wrong with it for each malformed one.
func TestParseFaults(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Planned
	}{
		{"unplug-after=3", []Planned{{Fault: Unplug, After: 3}}},
		{"timeout-after=0", []Planned{{Fault: Hang}}},
		{"stall-after=2", []Planned{{Fault: Stall, After: 2}}},
		{"delay-after=1:500ms", []Planned{{Fault: Delay, After: 1, Delay: 500 * time.Millisecond}}},
		{"timeout-after=1,delay-after=4:2s,unplug-after=6", []Planned{
			{Fault: Hang, After: 1}, {Fault: Delay, After: 4, Delay: 2 * time.Second}, {Fault: Unplug, After: 6}}},
	} {
		got, err := ParseFaults(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
		var back []string
		for _, p := range got {
			back = append(back, p.String())
		}
		if s := strings.Join(back, ","); s != c.in {
			t.Errorf("%q written back as %q", c.in, s)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "an empty fault"},
		{"unplug-after=1,", "an empty fault"},
		{"unplug", `fault "unplug": want NAME-after=N`},
		{"explode-after=1", `fault "explode-after=1": unknown fault "explode"; want unplug-after=N`},
		{"unplug-after=x", `fault "unplug-after=x": "x" is not a number of invokes`},
		{"unplug-after=-1", `"-1" is not a number of invokes`},
		{"unplug-after=+1", `"+1" is not a number of invokes`},
		{"unplug-after=", `"" is not a number of invokes`},
		{"delay-after=2", `fault "delay-after=2": want delay-after=N:DURATION, e.g. delay-after=2:500ms`},
		{"delay-after=2:soon", `fault "delay-after=2:soon": "soon" is not a duration above 0`},
		{"delay-after=2:0s", `"0s" is not a duration above 0`},
		{"stall-after=2:5s", `fault "stall-after=2:5s": only delay takes a duration`},
		{"unplug-after=2,stall-after=2", `faults "unplug-after=2" and "stall-after=2" both strike invoke 3`},
	} {
		if _, err := ParseFaults(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.in, err, c.want)
		}
	}
}

// TestPlannedFaultStrikesOnce: a planned fault strikes the first bulk-out
// transfer after the instructions of invoke After+1, once, and nothing
// else: not the readers of the other endpoints, not the transfers before.
func TestPlannedFaultStrikesOnce(t *testing.T) {
	p := newPlan([]Planned{{Fault: Stall, After: 1}, {Fault: Unplug, After: 3}})
	for _, c := range []struct {
		op   Op
		want Fault
	}{
		{Op{Kind: "bulk-out", Invoke: 0}, None},
		{Op{Kind: "bulk-out", Invoke: 1}, None},
		{Op{Kind: "bulk-in", Endpoint: 2, Invoke: 2}, None},
		{Op{Kind: "bulk-out", Invoke: 2}, Stall},
		{Op{Kind: "bulk-out", Invoke: 2}, None},
		{Op{Kind: "bulk-out", Invoke: 3}, None},
		{Op{Kind: "interrupt-in", Endpoint: 3, Invoke: 4}, None},
		{Op{Kind: "bulk-out", Invoke: 4}, Unplug},
		{Op{Kind: "bulk-out", Invoke: 5}, None},
	} {
		got, _ := p.strike(c.op)
		if got.Fault != c.want {
			t.Errorf("%+v: %v, want %v", c.op, got.Fault, c.want)
		}
	}
}

// TestPlannedDelay: a delay holds the transfer up and lets it happen, or
// fails it when the host's context ends first.
func TestPlannedDelay(t *testing.T) {
	d, _ := open(t, Config{})
	_ = d.ClaimInterface(context.Background(), 0)
	e := effect{fault: Delay, delay: 50 * time.Millisecond, planned: "delay-after=0:50ms"}
	start := time.Now()
	if err := d.apply(context.Background(), e, "bulk out 1"); err != nil || time.Since(start) < e.delay {
		t.Errorf("%v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := d.apply(ctx, e, "bulk out 1")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "(planned fault delay-after=0:50ms)") {
		t.Errorf("a delay past the deadline: %v", err)
	}
	if err := d.apply(context.Background(), effect{fault: Unplug, planned: "unplug-after=0"}, "bulk out 1"); !errors.Is(err, usb.ErrDisconnected) {
		t.Errorf("unplug: %v", err)
	}
	if err := d.BulkOut(context.Background(), 1, []byte{1}); !errors.Is(err, usb.ErrDisconnected) {
		t.Errorf("a transfer after the unplug: %v", err)
	}
}
