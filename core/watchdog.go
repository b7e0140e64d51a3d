package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/delego/delego/delegate"
)

// Watchdog bounds every call the interpreter makes to its delegates, so
// that a delegate that hangs (a plugin stopped, a device that never
// answers) is a delegate error, which the fallback settings decide, and not
// a hung caller. A call past its limit fails with delegate.ErrHung; a plugin
// is killed (and restarted: see Restarts). The caller's own context
// deadline keeps its meaning beside it. The zero value is the defaults.
//
// Every call is bounded, the compile that restarts a lost plugin inside an
// Invoke included (which starts its fresh process): such an Invoke may take
// the compile limit for the restart, then the Invoke limit for the run.
type Watchdog struct {
	// Invoke, when positive, is the limit of every partition Invoke, and
	// of every other delegate call unless Compile says otherwise.
	// Otherwise the limit is derived from the partition's own runs: First
	// for its first Invoke after each compile, then Factor times its
	// slowest Invoke so far, and never less than Floor.
	Invoke time.Duration
	// First is the limit of a partition's first Invoke; 0 means 30 s.
	First time.Duration
	// Floor is the least derived limit; 0 means 2 s.
	Floor time.Duration
	// Factor scales the slowest Invoke into the limit; 0 means 20.
	Factor float64
	// Compile bounds each Support, CheckNodes and Compile call, a
	// restart's compile inside Invoke included; 0 means the Invoke limit
	// when Invoke is set, else 2 minutes.
	Compile time.Duration
	// Off leaves delegate calls to the caller's context alone.
	Off bool
}

// Restarts say how a partition whose delegate's process was lost comes back
// (delegate.ErrLost: a plugin that crashed, or was killed after it hung).
// The Invoke that saw the loss fails, or falls back; the next one compiles
// the partition again, which starts a fresh process. Each further attempt
// without a successful Invoke in between waits twice as long as the last
// (Backoff first, at most a minute).
//
// After Max attempts in a row have failed, a circuit breaker opens: the
// restarts pause for Cooldown, then one attempt probes the delegate. A probe
// whose Invoke succeeds closes the breaker (the count starts again from 0);
// one that fails pauses the restarts for another Cooldown. Fallbacks records
// each pause (delegate.RestartsPaused) and the recovery (delegate.Recovered),
// not each Invoke in between.
//
// A partition waiting for its next attempt runs on the CPU (or, when no CPU
// kernel runs it, the CPU twin runs the Invoke) when the execution fallback
// allows it. Otherwise its Invokes fail: during a backoff, after waiting
// for the attempt; during a pause, at once, with a *PausedError that says
// when the next attempt comes. Variables (an LSTM's state) continue from
// the host's copy, as it was before the failed Invoke.
type Restarts struct {
	// Max is how many restarts in a row may fail (come without a
	// successful Invoke) before the restarts pause; 0 means 5, negative
	// means never restart: a lost partition fails, or falls back for good.
	Max int
	// Backoff is the wait before the second attempt in a row; 0 means
	// 100 ms.
	Backoff time.Duration
	// Cooldown is how long the restarts pause after Max failed in a row,
	// and again after each failed probe; 0 means 30 s.
	Cooldown time.Duration
}

// PausedError is the failure of an Invoke that needed a partition's
// delegate while its restarts paused (see Restarts). It unwraps to the
// loss the restarts could not mend (delegate.ErrLost).
type PausedError struct {
	// Failed is how many restarts in a row failed; Cooldown is the pause
	// and Next when the next restart is tried.
	Failed   int
	Cooldown time.Duration
	Next     time.Time
	// Err is the partition's last loss.
	Err error
}

func (e *PausedError) Error() string {
	return fmt.Sprintf("%d restarts in a row failed, so restarts pause for %v (circuit breaker open); the next is tried at %s; last failure: %v",
		e.Failed, e.Cooldown, e.Next.Format("15:04:05.000"), e.Err)
}

// Unwrap returns the partition's last loss.
func (e *PausedError) Unwrap() error { return e.Err }

const maxBackoff = time.Minute

// withDefaults fills in the zero fields.
func (w Watchdog) withDefaults() Watchdog {
	if w.First <= 0 {
		w.First = 30 * time.Second
	}
	if w.Floor <= 0 {
		w.Floor = 2 * time.Second
	}
	if w.Factor <= 0 {
		w.Factor = 20
	}
	if w.Compile <= 0 {
		w.Compile = w.Invoke
	}
	if w.Compile <= 0 {
		w.Compile = 2 * time.Minute
	}
	return w
}

// StartLimit is how long a delegate may take to start (a plugin's process,
// before the interpreter is built) under w: the compile limit when the
// caller set Compile or Invoke, else 0, which leaves the delegate its own
// default. A host that starts plugins for an interpreter passes it on
// (delego.Plugins.StartTimeout), so that no call on the way to a result
// outlasts the limit the caller gave.
func (w Watchdog) StartLimit() time.Duration {
	if w.Off || w.Compile <= 0 && w.Invoke <= 0 {
		return 0
	}
	return w.withDefaults().Compile
}

func (r Restarts) withDefaults() Restarts {
	if r.Max == 0 {
		r.Max = 5
	}
	if r.Backoff <= 0 {
		r.Backoff = 100 * time.Millisecond
	}
	if r.Cooldown <= 0 {
		r.Cooldown = 30 * time.Second
	}
	return r
}

// backoff is the wait before a partition's next restart after n attempts
// in a row: none before the first.
func (r Restarts) backoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := r.Backoff
	for range n - 1 {
		if d *= 2; d >= maxBackoff {
			return maxBackoff
		}
	}
	return d
}

// pause opens p's circuit breaker: its restarts pause for the cooldown.
func (p *delegated) pause(r Restarts) {
	p.retryAt = time.Now().Add(r.Cooldown)
	p.paused = &PausedError{Failed: p.restarts, Cooldown: r.Cooldown, Next: p.retryAt, Err: p.lost}
	p.probe = nil
}

// due returns nil when p's next restart may begin, after waiting out the
// backoff when nothing else can run p this time (no fallback); else why
// not: a pause, which is never waited out, the backoff, or ctx's end.
func (p *delegated) due(ctx context.Context, fallback bool) error {
	wait := time.Until(p.retryAt)
	switch {
	case wait <= 0:
		return nil
	case p.paused != nil:
		return p.paused
	case fallback:
		return p.lost
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting to restart after: %w (%w)", p.lost, ctx.Err())
	case <-t.C:
		return nil
	}
}

// invokeLimit is the watchdog's limit for p's next Invoke; 0: none.
func (it *Interpreter) invokeLimit(p *delegated) time.Duration {
	w := it.opts.Watchdog
	switch {
	case w.Off:
		return 0
	case w.Invoke > 0:
		return w.Invoke
	case p.slowest == 0:
		return w.First
	}
	return max(w.Floor, time.Duration(w.Factor*float64(p.slowest)))
}

// errWatchdog is the cause of a context the watchdog ended.
var errWatchdog = errors.New("watchdog")

// compileLimit is the watchdog's limit for a Support, CheckNodes or
// Compile call; 0: none.
func (it *Interpreter) compileLimit() time.Duration {
	if it.opts.Watchdog.Off {
		return 0
	}
	return it.opts.Watchdog.Compile
}

// bounded makes call under ctx, ended after limit (none when 0). It returns
// the call's error, or a *HungError when the watchdog ended it: when the
// limit passed before the caller's own deadline, even if the call noticed
// it a moment before the context did (a plugin's start has a timer of its
// own, set to the same deadline).
func bounded(ctx context.Context, limit time.Duration, call func(context.Context) error) error {
	if limit <= 0 {
		return call(ctx)
	}
	wctx, cancel := context.WithTimeoutCause(ctx, limit, errWatchdog)
	defer cancel()
	err := call(wctx)
	if err != nil && ctxDone(ctx) == nil && ctxDone(wctx) != nil {
		return &HungError{Limit: limit, Err: err}
	}
	return err
}

// HungError is a delegate call that the watchdog ended: it is
// delegate.ErrHung. Err is what the call returned when it ended (for a
// plugin, that it was killed).
type HungError struct {
	Limit time.Duration
	Err   error
}

func (e *HungError) Error() string {
	return fmt.Sprintf("no answer within %v (the watchdog's limit): %v", e.Limit, e.Err)
}

// Unwrap makes a HungError delegate.ErrHung, and not the context error
// that ended the call (which is not the caller's).
func (e *HungError) Unwrap() error { return delegate.ErrHung }
