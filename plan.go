package delego

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu"
)

// Plan shows where each node of the model at path would run with opts, as
// Open would build it, whatever the devices here can do: which delegate
// runs which partition, why every node left on the CPU stayed there, what
// the fallback settings would do about a partition that cannot compile
// here, the CPU twin that would run instead, and the devices of the
// delegates that can list them. Nothing runs, and every plugin Plan
// started is stopped before it returns. Without a delegate chosen (by
// WithDelegates or the settings), a model compiled for the Edge TPU is
// planned for the edgetpu delegate.
//
// A model some of whose nodes run nowhere (no delegate takes them and no
// CPU kernel runs them) is planned all the same: the report's CannotRun
// says which. The error is for what stops the planning: bad options or
// settings, a model that cannot be read.
func Plan(ctx context.Context, path string, opts ...Option) (_ *core.PlanReport, err error) {
	o := newOptions(opts)
	s, err := o.resolve(ctx)
	if err != nil {
		return nil, err
	}
	m, err := model.LoadContext(ctx, path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, m.Close()) }()
	if !o.namesGiven && s.names == nil && hasEdgeTPUOp(m) {
		// Nothing chose a delegate, but only the Edge TPU runs this
		// model's compiled op: plan it for the Edge TPU, as pycoral
		// would run it.
		s.names = []string{edgetpu.Name}
	}
	d, copts := o.start(ctx, s, path)
	defer func() { err = errors.Join(err, d.Close()) }()
	return core.PlanModel(ctx, core.PlanRequest{Model: m, Path: path, Options: copts,
		Explain: func(err error) error { return explainUnsupported(m, path, err) }})
}

// Report describes what the interpreter runs (see core.Interpreter.Report),
// naming the model file Open was given.
func (it *Interpreter) Report() *core.PlanReport {
	r := it.Interpreter.Report()
	r.Model = it.path
	return r
}

// hasEdgeTPUOp reports whether m holds an op compiled for the Edge TPU: a
// custom op the edgetpu delegate declares.
func hasEdgeTPUOp(m *model.Model) bool {
	declared := edgetpu.Declared().Custom
	for _, oc := range m.OpCodes() {
		if _, ok := declared[oc.Custom]; ok && oc.Custom != "" {
			return true
		}
	}
	return false
}

// unsupportedError keeps the interpreter's error (for errors.Is and
// errors.As) but says it in one line per op instead of one per node.
type unsupportedError struct {
	err  error
	text string
}

func (e *unsupportedError) Error() string { return e.text }
func (e *unsupportedError) Unwrap() error { return e.err }

// explainUnsupported groups the nodes of an error made only of
// *core.UnsupportedOpError by op and version, and for an Edge TPU-compiled
// model names its CPU twin when one sits beside it. Other errors are
// returned as they are.
func explainUnsupported(m *model.Model, modelPath string, err error) error {
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	type group struct {
		first *core.UnsupportedOpError
		nodes []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, e := range list {
		u, ok := e.(*core.UnsupportedOpError)
		if !ok {
			return err
		}
		key := fmt.Sprintf("%s\x00%d", u.Op, u.Version)
		g := byKey[key]
		if g == nil {
			g = &group{first: u}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.nodes = append(g.nodes, fmt.Sprint(u.Node))
	}
	if len(groups) == 0 {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s cannot run on the CPU kernels:", count(len(list), "node", "nodes"))
	for _, g := range groups {
		u := g.first
		if len(g.nodes) == 1 {
			fmt.Fprintf(&b, "\n  %s version %d (node %s): ", u.Op, u.Version, g.nodes[0])
		} else {
			fmt.Fprintf(&b, "\n  %s version %d (%d nodes: %s): ", u.Op, u.Version, len(g.nodes), firstAndLast(g.nodes, 8))
		}
		switch {
		case u.Custom && u.Supported == nil:
			b.WriteString("unresolved custom op")
		case u.Supported == nil:
			b.WriteString("no kernel for this builtin op")
		default:
			fmt.Fprintf(&b, "supported versions %s", *u.Supported)
		}
	}
	if hasEdgeTPUOp(m) {
		twin := edgetpu.TwinPath(modelPath)
		if _, serr := os.Stat(twin); serr == nil && twin != "" {
			fmt.Fprintf(&b, "\n(this model is compiled for the Edge TPU; its CPU twin is %s)", filepath.Clean(twin))
		} else {
			b.WriteString("\n(this model is compiled for the Edge TPU; run its uncompiled twin on the CPU)")
		}
	}
	return &unsupportedError{err: err, text: b.String()}
}

// count is n and the noun for it: "1 node", "3 nodes".
func count(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// firstAndLast joins node indices, or the first n-1 and the last around
// "...".
func firstAndLast(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, " ")
	}
	return strings.Join(items[:n-1], " ") + " ... " + items[len(items)-1]
}
