package plugin

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/delego/delego/delegate/plugin/pluginpb"
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

// pluginFault is one fault of EnvFault.
type pluginFault struct {
	plugin string // "" for every plugin
	kind   faultKind
	after  int
	spec   string // as written
}

// parseFaults reads EnvFault's value.
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

// faultFor returns the fault EnvFault (read through lookup) plans for the
// plugin serving the delegate named name: nil for none.
func faultFor(name string, lookup func(string) (string, bool)) (*faultInjector, error) {
	v, ok := lookup(EnvFault)
	if !ok || v == "" {
		return nil, nil
	}
	faults, err := parseFaults(v)
	if err != nil {
		return nil, fmt.Errorf("$%s=%q: %w", EnvFault, v, err)
	}
	var pick *pluginFault
	for i, f := range faults {
		if f.plugin == name || f.plugin == "" && pick == nil {
			pick = &faults[i]
		}
	}
	if pick == nil {
		return nil, nil
	}
	return &faultInjector{fault: *pick, name: name}, nil
}

// faultInjector puts a plugin's planned fault into its Invokes: it counts
// the process's successful ones and strikes the one after.
type faultInjector struct {
	fault pluginFault
	name  string // the plugin's delegate
	ok    atomic.Int64
}

// strike is called before each Invoke runs: a crash or a hang that is due
// happens here and never returns; garbage reports true, and the Invoke
// answers garbage instead of running. A nil injector plans nothing.
func (f *faultInjector) strike() (garbage bool) {
	if f == nil {
		return false
	}
	n := f.ok.Load()
	if n < int64(f.fault.after) {
		return false
	}
	switch f.fault.kind {
	case faultCrash:
		crash(fmt.Sprintf("fatal error: delego plugin %s crashed on purpose in invoke %d, as $%s=%q asks\n",
			f.name, n+1, EnvFault, f.fault.spec))
	case faultHang:
		fmt.Fprintf(os.Stderr, "delego plugin %s hangs on purpose in invoke %d, as $%s=%q asks\n",
			f.name, n+1, EnvFault, f.fault.spec)
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

// succeeded counts a successful Invoke.
func (f *faultInjector) succeeded() {
	if f != nil {
		f.ok.Add(1)
	}
}

// garbageAnswer is an answer to req that breaks the protocol: each output
// one dimension too many, with 7 bytes of data.
func garbageAnswer(req *pluginpb.InvokeRequest) *pluginpb.InvokeResponse {
	resp := &pluginpb.InvokeResponse{Outputs: make([]*pluginpb.Tensor, len(req.Outputs))}
	for i, t := range req.Outputs {
		resp.Outputs[i] = &pluginpb.Tensor{Type: t.Type, Shape: append(slices.Clone(t.Shape), 3), Bytes: 7,
			Data: &pluginpb.Tensor_Inline{Inline: []byte("garbage")}}
	}
	return resp
}
