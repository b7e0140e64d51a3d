package plugin

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/tensor"
)

// EnvFault asks every plugin process to fail on purpose after a number of
// successful Invokes, so that an application can rehearse what it does when
// a delegate plugin crashes, hangs or answers garbage. The plugin inherits it
// from the host. Its value is a comma-separated list of faults, each
// optionally scoped to one plugin by the delegate's name:
//
//	[PLUGIN:]crash-after=N    the process exits at once (status 2, as a Go
//	                          program does on a segmentation fault) in
//	                          Invoke N+1, without answering
//	[PLUGIN:]hang-after=N     Invoke N+1 never returns; the process stops
//	                          answering for that partition until killed
//	[PLUGIN:]garbage-after=N  Invoke N+1, and every one after it, answers
//	                          outputs of the wrong shape and size, which the
//	                          host rejects with ErrMalformed
//
// N counts the process's successful Invokes, over all its partitions and
// whichever way they came (gRPC or the doorbell), from 0: crash-after=0
// crashes in the first Invoke. A restarted process counts from 0 again. A
// fault naming a plugin applies to that plugin only, and wins over one
// naming none; two faults for the same plugin, or two naming none, are an
// error. A malformed value makes every plugin fail to start, with an
// error naming EnvFault.
//
// Serve reads it once, as the plugin starts (WithFaults plans faults in its
// place); a plugin started without faults runs no fault code in its
// Invokes.
const EnvFault = "DELEGO_PLUGIN_FAULT"

// faultKind is what a planned plugin fault does.
type faultKind int

const (
	faultCrash faultKind = iota + 1
	faultHang
	faultGarbage
)

// faultKinds are the faults, in the grammar's order.
func faultKinds() []faultKind { return []faultKind{faultCrash, faultHang, faultGarbage} }

func (k faultKind) String() string {
	switch k {
	case faultCrash:
		return "crash"
	case faultHang:
		return "hang"
	case faultGarbage:
		return "garbage"
	}
	return "fault(" + strconv.Itoa(int(k)) + ")"
}

// faultGrammar sums EnvFault's grammar up, for messages.
const faultGrammar = "[PLUGIN:]crash-after=N, [PLUGIN:]hang-after=N or [PLUGIN:]garbage-after=N, comma-separated (N successful invokes first)"

// pluginFault is one fault of a list in EnvFault's grammar.
type pluginFault struct {
	plugin string // "" for every plugin
	kind   faultKind
	after  int
	spec   string // as written
	asked  string // who asked for it, for messages: $DELEGO_PLUGIN_FAULT="spec"
}

// parseFaults reads a list of faults in EnvFault's grammar.
func parseFaults(s string) ([]pluginFault, error) {
	var out []pluginFault
	for _, spec := range strings.Split(s, ",") {
		f, err := parseFault(spec)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(out, func(g pluginFault) bool { return g.plugin == f.plugin }); i >= 0 {
			who := "every plugin"
			if f.plugin != "" {
				who = "plugin " + f.plugin
			}
			return nil, fmt.Errorf("faults %q and %q are both for %s; give each plugin one", out[i].spec, spec, who)
		}
		out = append(out, f)
	}
	return out, nil
}

// parseFault reads one fault of the list.
func parseFault(spec string) (pluginFault, error) {
	f := pluginFault{spec: spec}
	if spec == "" {
		return f, fmt.Errorf("an empty fault in the list; want %s", faultGrammar)
	}
	rest := spec
	if plugin, after, ok := strings.Cut(spec, ":"); ok {
		if plugin == "" || strings.TrimSpace(plugin) != plugin {
			return f, fmt.Errorf("fault %q: %q is not a plugin name (cpu, xnnpack, edgetpu, ...)", spec, plugin)
		}
		f.plugin, rest = plugin, after
	}
	name, count, ok := strings.Cut(rest, "-after=")
	if !ok {
		return f, fmt.Errorf("fault %q: want %s", spec, faultGrammar)
	}
	for _, k := range faultKinds() {
		if k.String() == name {
			f.kind = k
		}
	}
	if f.kind == 0 {
		return f, fmt.Errorf("fault %q: unknown fault %q; want %s", spec, name, faultGrammar)
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 || strings.HasPrefix(count, "+") {
		return f, fmt.Errorf("fault %q: %q is not a number of invokes (0, 1, ...)", spec, count)
	}
	f.after = n
	return f, nil
}

// faultFor returns the fault the list s (EnvFault's grammar; "" plans
// none) plans for the plugin serving the delegate named name: nil for none.
func faultFor(name, s string) (*pluginFault, error) {
	if s == "" {
		return nil, nil
	}
	faults, err := parseFaults(s)
	if err != nil {
		return nil, err
	}
	var pick *pluginFault
	for i, f := range faults {
		if f.plugin == name || f.plugin == "" && pick == nil {
			pick = &faults[i]
		}
	}
	return pick, nil
}

// A ServeOption changes how Serve and ServeConfig serve a delegate.
type ServeOption func(*serveOptions)

// serveOptions are the ServeOptions given, applied.
type serveOptions struct {
	faults    string
	hasFaults bool // faults replace $DELEGO_PLUGIN_FAULT
}

// WithFaults has the plugin fail on purpose as the list of faults s (in
// EnvFault's grammar; "" plans none) asks, in place of what
// $DELEGO_PLUGIN_FAULT asks: for a plugin binary built to misbehave. A
// malformed list fails the plugin's start as a malformed EnvFault does.
func WithFaults(s string) ServeOption {
	return func(o *serveOptions) { o.faults, o.hasFaults = s, true }
}

// plannedFault returns the fault opts, else $DELEGO_PLUGIN_FAULT, plan for
// the plugin serving the delegate named name: nil for none. It is read once,
// as the plugin starts.
func plannedFault(name string, opts []ServeOption) (*pluginFault, error) {
	var o serveOptions
	for _, opt := range opts {
		opt(&o)
	}
	s, cite := o.faults, func(s string) string { return fmt.Sprintf("plugin.WithFaults(%q)", s) }
	if !o.hasFaults {
		s, cite = os.Getenv(EnvFault), func(s string) string { return fmt.Sprintf("$%s=%q", EnvFault, s) }
	}
	f, err := faultFor(name, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cite(s), err)
	}
	if f != nil {
		f.asked = cite(f.spec)
	}
	return f, nil
}

// compiler compiles the partitions a plugin is handed.
type compiler interface {
	Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error)
}

// withFault returns what compiles the partitions of a plugin serving d with
// the fault f: d itself when f is nil, so that the Invokes of a plugin
// started without faults run the delegate's executables as they are, else
// the fault layer around d.
func withFault(d delegate.Delegate, f *pluginFault) compiler {
	if f == nil {
		return d
	}
	return &faultLayer{d: d, fault: *f}
}

// faultLayer compiles partitions with its delegate and puts the plugin's
// planned fault into every executable it makes: it counts the process's
// successful Invokes, over all of them, and strikes the one after.
type faultLayer struct {
	d     delegate.Delegate
	fault pluginFault
	ok    atomic.Int64
}

// Compile compiles p with the delegate, and puts the fault into what it
// makes.
func (l *faultLayer) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	exe, err := l.d.Compile(ctx, p)
	if exe == nil || err != nil {
		return exe, err
	}
	return &faultyExecutable{Executable: exe, layer: l}, nil
}

// faultyExecutable is a delegate's executable with the plugin's planned
// fault put in.
type faultyExecutable struct {
	delegate.Executable
	layer *faultLayer
}

// Invoke strikes when the fault is due: a crash or a hang never returns,
// and garbage leaves outputs no host accepts. Otherwise it runs the
// executable, and counts its success.
func (e *faultyExecutable) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	if e.layer.strike() {
		garbageOutputs(outputs)
		return nil
	}
	if err := e.Executable.Invoke(ctx, inputs, outputs); err != nil {
		return err
	}
	e.layer.ok.Add(1)
	return nil
}

// Threads is what the executable declares (delegate.Threaded), 0 (not
// known) when it declares nothing: the doorbell reads it.
func (e *faultyExecutable) Threads() int {
	if t, ok := e.Executable.(delegate.Threaded); ok {
		return t.Threads()
	}
	return 0
}

// strike is called before each Invoke runs: a crash or a hang that is due
// happens here and never returns; garbage reports true, and the Invoke
// answers garbage instead of running.
func (l *faultLayer) strike() (garbage bool) {
	n := l.ok.Load()
	if n < int64(l.fault.after) {
		return false
	}
	switch l.fault.kind {
	case faultCrash:
		crash(fmt.Sprintf("fatal error: delego plugin %s crashed on purpose in invoke %d, as %s asks\n",
			l.d.Name(), n+1, l.fault.asked))
	case faultHang:
		fmt.Fprintf(os.Stderr, "delego plugin %s hangs on purpose in invoke %d, as %s asks\n",
			l.d.Name(), n+1, l.fault.asked)
		for {
			time.Sleep(time.Hour)
		}
	}
	return true
}

// crash ends the process at once with status 2, as the Go runtime does on
// a segmentation fault, after writing msg to the process's standard error
// (file descriptor 2, as the runtime does: os.Stderr is go-plugin's pipe to
// the host over gRPC, whose copying the exit would cut short).
func crash(msg string) {
	_, _ = syscall.Write(syscall.Stderr, []byte(msg))
	os.Exit(2)
}

// garbageOutputs makes outputs an answer that breaks the protocol: each output one
// dimension too many, with 7 bytes of data in memory of its own (so it
// travels inline).
func garbageOutputs(outputs []*tensor.Tensor) {
	for _, t := range outputs {
		t.Shape = append(slices.Clone(t.Shape), 3)
		t.Data = []byte("garbage")
	}
}
