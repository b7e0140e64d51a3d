package delego

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
)

// This file words the error of a model some of whose nodes no CPU kernel
// runs, for Open and Plan alike.

// hasEdgeTPUOp reports whether m holds an op compiled for the Edge TPU:
// Coral's custom op, edgetpuinfo.CustomOp.
func hasEdgeTPUOp(m *model.Model) bool {
	for _, oc := range m.OpCodes() {
		if oc.Custom == edgetpuinfo.CustomOp {
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
		twin := edgetpuinfo.TwinPath(modelPath)
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
