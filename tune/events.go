package tune

import (
	"errors"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate/config"
	"google.golang.org/protobuf/proto"
)

// kTfLiteError is TfLiteStatus's generic error, the tflite_error of every
// ErrorCode tune writes.
const kTfLiteError = 1

// stamp is an event of type t for c, timestamped now.
func stamp(c *Candidate, t config.BenchmarkEventType) *config.BenchmarkEvent {
	ev := &config.BenchmarkEvent{
		TfliteSettings: proto.CloneOf(c.Settings),
		EventType:      t.Enum(),
		WallclockUs:    proto.Int64(time.Now().UnixMicro()),
	}
	if us, ok := boottimeUs(); ok {
		ev.BoottimeUs = proto.Int64(us)
	}
	return ev
}

// startEvent is the START of c.
func startEvent(c *Candidate) *config.BenchmarkEvent {
	return stamp(c, config.BenchmarkEventType_START)
}

// outcomeEvent is how c ended: its ERROR, or its END.
func outcomeEvent(c *Candidate, th Thresholds) *config.BenchmarkEvent {
	if c.Err != nil {
		return errorEvent(c)
	}
	return endEvent(c, th)
}

// endEvent is the END of a candidate that finished: its timings, memory,
// accuracy figures and whether they were within th.
func endEvent(c *Candidate, th Thresholds) *config.BenchmarkEvent {
	ev := stamp(c, config.BenchmarkEventType_END)
	r := &config.BenchmarkResult{
		InitializationTimeUs: []int64{c.Init.Microseconds()},
		Ok:                   proto.Bool(c.OK()),
	}
	for _, t := range c.Times {
		r.InferenceTimeUs = append(r.InferenceTimeUs, t.Microseconds())
	}
	if c.PeakMemoryKB > 0 {
		r.MaxMemoryKb = proto.Int32(int32(c.PeakMemoryKB))
	}
	for _, a := range c.Accuracy {
		r.Metrics = append(r.Metrics, &config.BenchmarkMetric{Name: proto.String(a.Metric()), Values: []float32{float32(a.Value())}})
	}
	r.Metrics = append(r.Metrics,
		&config.BenchmarkMetric{Name: proto.String("max_steps_allowed"), Values: []float32{float32(th.MaxSteps)}},
		&config.BenchmarkMetric{Name: proto.String("max_relative_error_allowed"), Values: []float32{float32(th.MaxRelativeError)}},
		&config.BenchmarkMetric{Name: proto.String("delegated_nodes"), Values: []float32{float32(c.Delegated), float32(c.Nodes)}})
	ev.Result = r
	return ev
}

// errorEvent is the ERROR of a candidate that did not finish: the stage
// it failed in and an ErrorCode from its delegate (source NONE for a
// plugin the enum cannot name, as for delego's CPU kernels).
func errorEvent(c *Candidate) *config.BenchmarkEvent {
	ev := stamp(c, config.BenchmarkEventType_ERROR)
	code := &config.ErrorCode{TfliteError: proto.Int32(kTfLiteError)}
	if d, ok := enumOf(c.Name); ok {
		code.Source = d.Enum()
	}
	ev.Error = &config.BenchmarkError{Stage: c.Stage.Enum(), ErrorCode: []*config.ErrorCode{code}}
	if code, signal, ok := exitStatus(c.Err); ok {
		ev.Error.ExitCode = proto.Int32(int32(code))
		if signal != 0 {
			ev.Error.Signal = proto.Int32(int32(signal))
		}
	}
	return ev
}

// exitStatus is how the plugin process whose death err reports ended (its
// exit code, or -1 and a signal), when err says. The watchdog's HungError
// hides what the call returned from errors.As (it is delegate.ErrHung, not
// the killed call's error), so that is looked at directly.
func exitStatus(err error) (code, signal int, ok bool) {
	if hung, isHung := errors.AsType[*core.HungError](err); isHung {
		err = hung.Err
	}
	var exited interface{ ExitStatus() (code, signal int) }
	if !errors.As(err, &exited) {
		return 0, 0, false
	}
	code, signal = exited.ExitStatus()
	return code, signal, true
}
