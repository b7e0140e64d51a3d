package delegate

import (
	"errors"
	"fmt"

	"github.com/delego/delego/delegate/config"
)

// Sentinel errors a delegate or the host wraps, so callers can test with errors.Is.
var (
	// ErrNoDevice: the delegate's device is missing, or the delegate cannot run here.
	ErrNoDevice = errors.New("no usable device")
	// ErrUnknownDelegate: settings or flags name a delegate that is not available.
	ErrUnknownDelegate = errors.New("unknown delegate")
	// ErrLost: the process that ran the delegate died or was killed (a
	// plugin that crashed, or did not answer in time). Compiling the
	// partition again starts a fresh one, so the interpreter restarts it.
	ErrLost = errors.New("delegate process lost")
	// ErrHung: the delegate did not answer a call within its limit (the
	// interpreter's watchdog); a plugin that hung is killed.
	ErrHung = errors.New("delegate did not answer in time")
)

// Stage is where a delegate failed.
type Stage string

// The stages a delegate can fail in.
const (
	StageCompile Stage = "compile"
	StageExecute Stage = "execute"
)

// Error is a delegate's failure on one partition.
type Error struct {
	Delegate  string
	Partition int // index in the plan, -1 when not tied to one partition
	Stage     Stage
	Err       error
}

func (e *Error) Error() string {
	if e.Partition < 0 {
		return fmt.Sprintf("delegate %s: %s: %v", e.Delegate, e.Stage, e.Err)
	}
	return fmt.Sprintf("delegate %s: partition %d: %s: %v", e.Delegate, e.Partition, e.Stage, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Fallback is TFLiteSettings.fallback_settings, and the one place delego
// decides whether a delegate's failure moves work to its CPU kernels. Both
// default to false, as in configuration.proto: a failure reaches the caller.
type Fallback struct {
	OnCompilationError bool
	OnExecutionError   bool
}

// FallbackFrom reads the fallback settings (nil settings: no fallback).
func FallbackFrom(s *config.TFLiteSettings) Fallback {
	fs := s.GetFallbackSettings()
	return Fallback{
		OnCompilationError: fs.GetAllowAutomaticFallbackOnCompilationError(),
		OnExecutionError:   fs.GetAllowAutomaticFallbackOnExecutionError(),
	}
}

// Decide returns nil when failure err (a *Error) may be absorbed by running
// the partition on the CPU, and the error to return to the caller otherwise.
func (f Fallback) Decide(err *Error) error {
	allowed := false
	switch err.Stage {
	case StageCompile:
		allowed = f.OnCompilationError
	case StageExecute:
		allowed = f.OnExecutionError
	}
	if allowed {
		return nil
	}
	return err
}

// Event records what a delegate's failure led to: which partition moved to
// the CPU, ran there once, or came back on its delegate, and why.
type Event struct {
	Delegate  string
	Partition int // -1 for a failure of the whole delegate (its Support)
	Nodes     []int
	Stage     Stage
	Err       error
	Outcome   Outcome
}

// Outcome is what happened to a partition after its delegate failed.
type Outcome int

// The outcomes of a failure.
const (
	// MovedToCPU: the partition runs on the CPU kernels from now on.
	MovedToCPU Outcome = iota
	// RanOnCPU: the invocation that saw the failure ran the partition on
	// the CPU; the delegate, whose process was lost, is restarted later.
	RanOnCPU
	// Restarted: the partition was compiled again after its delegate's
	// process was lost (a fresh plugin process) and runs on it again; Err
	// is the failure it came back from.
	Restarted
	// TwinStoodIn: as RanOnCPU, for a partition no CPU kernel runs (an
	// Edge TPU's): the model's CPU twin ran the invocation instead.
	TwinStoodIn
	// RestartsPaused: the partition's restarts failed too often in a row
	// (a circuit breaker opened): its delegate is not tried again until
	// the pause that Err describes ends. Meanwhile the CPU (or the CPU
	// twin) runs it when the fallback settings allow it, else its
	// invocations fail at once.
	RestartsPaused
	// Recovered: after its restarts paused, the partition ran on a
	// restarted delegate again (the breaker closed); Err is the pause it
	// recovered from.
	Recovered
)

func (o Outcome) String() string {
	switch o {
	case MovedToCPU:
		return "moved to the CPU"
	case RanOnCPU:
		return "ran on the CPU once"
	case Restarted:
		return "restarted"
	case TwinStoodIn:
		return "the CPU twin stood in once"
	case RestartsPaused:
		return "restarts paused"
	case Recovered:
		return "recovered"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

func (e Event) String() string {
	what := fmt.Sprintf("partition %d (%s, %d nodes)", e.Partition, e.Delegate, len(e.Nodes))
	switch e.Outcome {
	case RanOnCPU:
		return fmt.Sprintf("%s ran on the CPU once after %s, until its delegate restarts: %v", what, e.Stage.failure(), e.Err)
	case Restarted:
		return fmt.Sprintf("%s was compiled again on a restarted %s after: %v", what, e.Delegate, e.Err)
	case TwinStoodIn:
		return fmt.Sprintf("%s failed with %s; the CPU twin ran that invocation, until its delegate restarts: %v", what, e.Stage.failure(), e.Err)
	case RestartsPaused:
		return fmt.Sprintf("%s is not tried on %s until its restarts' pause ends: %v", what, e.Delegate, e.Err)
	case Recovered:
		return fmt.Sprintf("%s runs on a restarted %s again, after: %v", what, e.Delegate, e.Err)
	}
	return fmt.Sprintf("%s fell back to the CPU after %s: %v", what, e.Stage.failure(), e.Err)
}

// failure names a failure in this stage, after an article.
func (s Stage) failure() string {
	switch s {
	case StageCompile:
		return "a compilation error"
	case StageExecute:
		return "an execution error"
	}
	return fmt.Sprintf("a %s error", string(s))
}
