package tpusim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Planned faults: faults the device injects by itself on a chosen invoke,
// without a hook, so that a user can rehearse an Edge TPU failure from the
// command line (plugins/edgetpu reads them from DELEGO_EDGETPU_DEVICE,
// e.g. sim:unplug-after=3).
//
// An invoke is one run of an executable the device was told about (Learn)
// other than a parameter-caching one: the device counts one when it
// recognises the instruction bitstream of such a run on its bulk-out
// endpoint (one per Edge TPU node and interpreter Invoke; the parameters
// that go out once, before the first, are no invoke). A fault planned
// after N invokes strikes the first bulk-out transfer after the
// instructions of invoke N+1 (its input activations, usually), once, at
// the USB seam the driver sees, exactly as the device's failure there
// would.

// Planned is a fault the device injects on its own (Config.Faults).
type Planned struct {
	// Fault is Unplug (the device leaves the bus, and stays off it until
	// Bus.Plug), Hang (the transfer never completes: the driver's
	// timeout), Stall (the endpoint stalls) or Delay.
	Fault Fault
	// After is how many invokes run before the fault: it strikes invoke
	// After+1.
	After int
	// Delay is how long a Delay holds the transfer up.
	Delay time.Duration
}

// plannable are the faults a plan may hold, in the grammar's order.
func plannable() []Fault { return []Fault{Unplug, Hang, Stall, Delay} }

// plannedName is a plannable fault's name in the grammar.
func plannedName(f Fault) string {
	switch f {
	case Unplug:
		return "unplug"
	case Hang:
		return "timeout"
	case Stall:
		return "stall"
	case Delay:
		return "delay"
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// String writes the fault in the grammar ParseFaults reads, e.g.
// "unplug-after=3" or "delay-after=1:500ms".
func (p Planned) String() string {
	s := fmt.Sprintf("%s-after=%d", plannedName(p.Fault), p.After)
	if p.Fault == Delay {
		s += ":" + p.Delay.String()
	}
	return s
}

// FaultGrammar sums the grammar of ParseFaults up, for messages.
const FaultGrammar = "unplug-after=N, timeout-after=N, stall-after=N or delay-after=N:DURATION (N invokes run first; DURATION as in 500ms, 5s)"

// ParseFaults reads a comma-separated list of planned faults:
//
//	unplug-after=N          the device leaves the bus during invoke N+1
//	timeout-after=N         a transfer of invoke N+1 never completes, and
//	                        times out
//	stall-after=N           the device stalls its endpoint during invoke N+1
//	delay-after=N:DURATION  the device holds a transfer of invoke N+1 up
//	                        for DURATION (a Go duration: 500ms, 5s), which
//	                        times out when it is longer than the driver's
//	                        transfer timeout
//
// N counts from 0 (unplug-after=0 strikes the first invoke). Two faults
// may not strike the same invoke. An error names the fault that is wrong
// and says why.
func ParseFaults(s string) ([]Planned, error) {
	var out []Planned
	struck := map[int]string{}
	for _, spec := range strings.Split(s, ",") {
		p, err := parsePlanned(spec)
		if err != nil {
			return nil, err
		}
		if other, ok := struck[p.After]; ok {
			return nil, fmt.Errorf("faults %q and %q both strike invoke %d", other, spec, p.After+1)
		}
		struck[p.After] = spec
		out = append(out, p)
	}
	return out, nil
}

// parsePlanned reads one fault of the list.
func parsePlanned(spec string) (Planned, error) {
	if spec == "" {
		return Planned{}, fmt.Errorf("an empty fault in the list; want %s", FaultGrammar)
	}
	name, arg, ok := strings.Cut(spec, "-after=")
	if !ok {
		return Planned{}, fmt.Errorf("fault %q: want NAME-after=N: %s", spec, FaultGrammar)
	}
	var p Planned
	for _, f := range plannable() {
		if plannedName(f) == name {
			p.Fault = f
		}
	}
	if p.Fault == None {
		return Planned{}, fmt.Errorf("fault %q: unknown fault %q; want %s", spec, name, FaultGrammar)
	}
	count, dur, hasDur := strings.Cut(arg, ":")
	var err error
	if p.After, err = parseCount(count); err != nil {
		return Planned{}, fmt.Errorf("fault %q: %w", spec, err)
	}
	switch {
	case p.Fault == Delay && !hasDur:
		return Planned{}, fmt.Errorf("fault %q: want delay-after=N:DURATION, e.g. delay-after=%d:500ms", spec, p.After)
	case p.Fault != Delay && hasDur:
		return Planned{}, fmt.Errorf("fault %q: only delay takes a duration", spec)
	case hasDur:
		if p.Delay, err = time.ParseDuration(dur); err != nil || p.Delay <= 0 {
			return Planned{}, fmt.Errorf("fault %q: %q is not a duration above 0 (500ms, 5s)", spec, dur)
		}
	}
	return p, nil
}

// parseCount reads a number of invokes: a decimal number from 0.
func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%q is not a number of invokes (0, 1, ...)", s)
	}
	return n, nil
}

// plan is the faults a device injects by itself, and which have struck.
type plan struct {
	faults []Planned
	struck []bool
}

func newPlan(faults []Planned) plan {
	return plan{faults: faults, struck: make([]bool, len(faults))}
}

// strike returns the planned fault for op (None when there is none),
// marking it struck; the device's mutex is held. Only bulk-out transfers
// are struck: the host sends them in the order of its requests, so the
// fault lands on the same transfer of the same invoke every time, where
// the readers of the event and interrupt endpoints come and go as they
// please.
func (p *plan) strike(op Op) (Planned, bool) {
	if op.Kind != "bulk-out" {
		return Planned{}, false
	}
	for i, f := range p.faults {
		if !p.struck[i] && op.Invoke > f.After {
			p.struck[i] = true
			return f, true
		}
	}
	return Planned{}, false
}
