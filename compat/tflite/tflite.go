package tflite

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/delego/delego"
	"github.com/delego/delego/compat/tflite/delegates"
	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
)

// Status is the result of an interpreter's call, as TfLiteStatus.
type Status int

// The statuses. go-tflite declares Error with the same value as OK (a slip
// in its const block); here it is 1, TfLiteStatus's kTfLiteError, so that
// a check against either constant means what it says.
const (
	OK    Status = 0
	Error Status = 1
)

// String names the status.
func (s Status) String() string {
	switch s {
	case OK:
		return "OK"
	case Error:
		return "Error"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// status is OK for a nil error; otherwise it reports err and is Error.
func status(err error, report func(string)) Status {
	if err == nil {
		return OK
	}
	report(err.Error())
	return Error
}

// stderrReporter writes a message as TensorFlow Lite's default error
// reporter does.
func stderrReporter(msg string) { fmt.Fprintln(os.Stderr, "ERROR:", msg) }

// Model is a loaded .tflite model.
type Model struct {
	m *model.Model
}

// NewModel loads a model from a copy of data; nil when data is not a model
// delego can read (the reason goes to standard error).
func NewModel(data []byte) *Model {
	m, err := model.New(bytes.Clone(data))
	return newModel(m, err)
}

// NewModelFromFile loads (memory-maps) the model at path; nil when it
// cannot be read (the reason goes to standard error).
func NewModelFromFile(path string) *Model {
	m, err := model.Load(path)
	return newModel(m, err)
}

func newModel(m *model.Model, err error) *Model {
	if err != nil {
		stderrReporter(err.Error())
		return nil
	}
	return &Model{m: m}
}

// Delete releases the model (unmaps its file). Delete it after the
// interpreters made from it.
func (m *Model) Delete() {
	if m != nil && m.m != nil {
		m.m.Close()
		m.m = nil
	}
}

// InterpreterOptions configure NewInterpreter.
type InterpreterOptions struct {
	threads   int
	delegates []delegates.Delegater
	report    func(string)
}

// NewInterpreterOptions returns the default options: delego's number of
// threads, no delegate, errors to standard error.
func NewInterpreterOptions() *InterpreterOptions {
	return &InterpreterOptions{report: stderrReporter}
}

// SetNumThread sets how many threads the CPU kernels may use; 0 or less
// (TensorFlow Lite's -1) leaves it to delego (one, or the delegates'
// settings).
func (o *InterpreterOptions) SetNumThread(n int) {
	o.threads = max(n, 0)
}

// SetErrorReporter sends each error message of the interpreters made with
// these options to f, with userData.
func (o *InterpreterOptions) SetErrorReporter(f func(string, interface{}), userData interface{}) {
	o.report = func(msg string) { f(msg, userData) }
}

// AddDelegate adds a delegate; the first added is asked first for each
// node. A nil delegate (a failed New) is skipped.
func (o *InterpreterOptions) AddDelegate(d delegates.Delegater) {
	if d != nil {
		o.delegates = append(o.delegates, d)
	}
}

// Delete releases the options; the interpreters made with them are not
// affected, and the delegates are not deleted.
func (o *InterpreterOptions) Delete() {}

// config is the library's configuration of the interpreters o makes: o's
// threads and delegates, in the order added, with the settings each
// delegate writes. The interpreters borrow the delegates: the caller
// deletes them, after the interpreters.
func (o *InterpreterOptions) config(ctx context.Context) (*delego.Config, error) {
	s := &config.TFLiteSettings{}
	names := make([]string, len(o.delegates))
	byName := map[string]delegate.Delegate{}
	for i, d := range o.delegates {
		d.Configure(s)
		names[i] = d.Delegate().Name()
		byName[names[i]] = d.Delegate()
	}
	return delego.Configure(ctx, delego.WithThreads(o.threads), delego.WithSettings(&config.Settings{TFLite: s}),
		delego.WithDelegates(names...),
		delego.WithOpener(func(_ context.Context, name string) delegate.Delegate { return borrowed{byName[name]} }))
}

// borrowed is a delegate the interpreter uses but does not close.
type borrowed struct{ delegate.Delegate }

func (borrowed) Close() error { return nil }

// Interpreter runs a model.
type Interpreter struct {
	it     *core.Interpreter
	owner  *delego.Interpreter // it, with what Delete releases
	report func(string)
}

// NewInterpreter makes an interpreter of model with options (nil: the
// defaults), handing the graph's nodes to the options' delegates. It is nil
// when that fails; the reason goes to the error reporter.
func NewInterpreter(model *Model, options *InterpreterOptions) *Interpreter {
	if options == nil {
		options = NewInterpreterOptions()
	}
	report := options.report
	if report == nil { // options made without NewInterpreterOptions
		report = stderrReporter
	}
	if model == nil || model.m == nil {
		report("NewInterpreter: no model (NewModel or NewModelFromFile failed, or the model was deleted)")
		return nil
	}
	ctx := context.Background()
	cfg, err := options.config(ctx)
	var it *delego.Interpreter
	if err == nil {
		it, err = cfg.OpenModel(ctx, model.m)
	}
	if err != nil {
		report(err.Error())
		return nil
	}
	return &Interpreter{it: it.Interpreter, owner: it, report: report}
}

// Delete releases the interpreter. Its delegates stay (Delete them after).
func (i *Interpreter) Delete() {
	if i != nil && i.owner != nil {
		i.owner.Close()
		i.it, i.owner = nil, nil
	}
}

// GetInputTensorCount is the number of the model's inputs.
func (i *Interpreter) GetInputTensorCount() int { return i.it.NumInputs() }

// GetInputTensor returns input index, or nil when there is none.
func (i *Interpreter) GetInputTensor(index int) *Tensor { return wrap(i.it.Input(index), i.report) }

// GetOutputTensorCount is the number of the model's outputs.
func (i *Interpreter) GetOutputTensorCount() int { return i.it.NumOutputs() }

// GetOutputTensor returns output index, or nil when there is none.
func (i *Interpreter) GetOutputTensor(index int) *Tensor { return wrap(i.it.Output(index), i.report) }

// ResizeInputTensor gives input index the shape dims; AllocateTensors
// then makes it so.
func (i *Interpreter) ResizeInputTensor(index int, dims []int32) Status {
	shape := make([]int, len(dims))
	for k, d := range dims {
		shape[k] = int(d)
	}
	return status(i.it.ResizeInput(index, shape), i.report)
}

// AllocateTensors plans and allocates the tensors' memory. Slices from
// the typed accessors taken before it are stale after it.
func (i *Interpreter) AllocateTensors() Status {
	if i == nil {
		return Error
	}
	return status(i.it.AllocateTensors(), i.report)
}

// Invoke runs the model on the current inputs.
func (i *Interpreter) Invoke() Status {
	return status(i.it.Invoke(context.Background()), i.report)
}

// ResetVariableTensors sets the model's variables (an LSTM's state) back
// to their initial values.
func (i *Interpreter) ResetVariableTensors() Status {
	i.it.ResetVariables()
	return OK
}
