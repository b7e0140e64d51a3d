package core

import (
	"slices"

	"github.com/delego/delego/delegate"
)

// KeptFallbacks is how many of the fallback events that recur (a partition
// that ran on the CPU once, or whose plugin was restarted, paused or
// recovered) an interpreter keeps: the most recent ones. Those that moved
// work to the CPU for good, at most one per delegate and partition, are all
// kept. FallbackCount counts every event.
const KeptFallbacks = 64

// eventLog is an interpreter's record of its fallbacks: the events
// Fallbacks lists, in order, and how many of each outcome there were.
type eventLog struct {
	events    []delegate.Event
	recurring int // how many of events recur (see KeptFallbacks)
	counts    map[delegate.Outcome]int
}

// add records e, dropping the oldest recurring event past KeptFallbacks.
func (l *eventLog) add(e delegate.Event) {
	if l.counts == nil {
		l.counts = make(map[delegate.Outcome]int)
	}
	l.counts[e.Outcome]++
	l.events = append(l.events, e)
	if !recurs(e) {
		return
	}
	if l.recurring++; l.recurring > KeptFallbacks {
		i := slices.IndexFunc(l.events, recurs)
		l.events = slices.Delete(l.events, i, i+1)
		l.recurring--
	}
}

// recurs reports whether e may happen again and again: all but a move to
// the CPU for good.
func recurs(e delegate.Event) bool { return e.Outcome != delegate.MovedToCPU }

// count is how many events of the outcomes given (all when none) there were.
func (l *eventLog) count(outcomes ...delegate.Outcome) int {
	n := 0
	for o, k := range l.counts {
		if len(outcomes) == 0 || slices.Contains(outcomes, o) {
			n += k
		}
	}
	return n
}

// Fallbacks lists the interpreter's fallbacks in order: every one that
// moved work to the CPU for good, and the last KeptFallbacks of those that
// recur (a plugin lost and restarted again and again would otherwise grow
// the list without end). FallbackCount counts them all.
func (it *Interpreter) Fallbacks() []delegate.Event { return slices.Clone(it.fb.log.events) }

// FallbackCount is how many fallback events of the given outcomes (all
// when none are given) the interpreter has recorded since it was built,
// including those Fallbacks no longer lists.
func (it *Interpreter) FallbackCount(outcomes ...delegate.Outcome) int {
	return it.fb.log.count(outcomes...)
}
