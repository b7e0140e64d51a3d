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

// Event records a fallback that happened: which partition moved to the CPU and why.
type Event struct {
	Delegate  string
	Partition int
	Nodes     []int
	Stage     Stage
	Err       error
}

func (e Event) String() string {
	return fmt.Sprintf("partition %d (%s, %d nodes) fell back to the CPU after a %s error: %v",
		e.Partition, e.Delegate, len(e.Nodes), e.Stage, e.Err)
}
