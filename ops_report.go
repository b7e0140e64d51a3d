package delego

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
)

// This file gathers the op table "delego ops" prints: every op TensorFlow
// Lite 2.9 registers or a runtime here declares, with the versions and
// element types each runtime takes.

// KernelsRuntime is the name the op table gives delego's own CPU kernels.
const KernelsRuntime = "kernels"

// OpsReport is the op table. Its JSON form is "delego ops --json"'s.
type OpsReport struct {
	// TFLite is the TensorFlow Lite release whose builtin resolver the
	// table measures the runtimes against.
	TFLite   string       `json:"tflite"`
	Runtimes []OpsRuntime `json:"runtimes"` // the CPU kernels, then each plugin found, by name
	Ops      []OpsRow     `json:"ops"`      // builtins by name, then custom ops by name
}

// OpsRuntime is one runtime of the table: delego's CPU kernels or a
// plugin.
type OpsRuntime struct {
	Name   string `json:"name"`   // KernelsRuntime, or the plugin's NAME (delego-NAME)
	Path   string `json:"path"`   // the plugin binary; "" for the kernels, which run in process
	Usable bool   `json:"usable"` // whether it can run here
	// Reason says why it cannot run here, or why what it declares is not
	// known; its ops are still listed when they are known (the edgetpu
	// plugin's without a device).
	Reason string `json:"reason"`
}

// OpsRow is one op and who runs it.
type OpsRow struct {
	Op     string `json:"op"`     // the builtin's name or the custom op's, as models carry it
	Custom bool   `json:"custom"` // whether it is a custom op
	// TFLite is the versions TensorFlow Lite's resolver registers; nil
	// when it registers none (a custom op of MediaPipe's, for one).
	TFLite  *VersionSpan `json:"tflite"`
	Support []OpSupport  `json:"support"` // one per runtime that declares the op, in Runtimes' order
}

// VersionSpan is a range of op versions.
type VersionSpan struct {
	// Min is the lowest version, at least 1.
	Min int `json:"min"`
	// Max is the highest version.
	Max int `json:"max"`
}

// OpSupport is what one runtime declares of an op.
type OpSupport struct {
	Runtime    string `json:"runtime"`     // an OpsRuntime's Name
	MinVersion int    `json:"min_version"` // the lowest version it runs
	MaxVersion int    `json:"max_version"` // the highest
	// Types are the element types it takes: for the kernels, those of the
	// op's main tensor (kernel.Registration.Types); for a plugin, those of
	// every non-constant tensor of the node; empty: any.
	Types []string `json:"types"`
}

// Ops lists the plugins as List does and tabulates what they and delego's
// CPU kernels declare.
func (p Plugins) Ops(ctx context.Context) (*OpsReport, error) {
	plugins, err := p.List(ctx)
	if err != nil {
		return nil, err
	}
	return OpsTable(plugins), nil
}

// OpsTable tabulates what delego's CPU kernels and the plugins of plugins
// (nil: none) declare, beside the ops TensorFlow Lite 2.9 registers. A
// plugin that could not be described declares nothing, except the edgetpu
// plugin, whose support delego knows without it.
func OpsTable(plugins *PluginsReport) *OpsReport {
	out := &OpsReport{TFLite: "2.9", Runtimes: []OpsRuntime{{Name: KernelsRuntime, Usable: true}}, Ops: []OpsRow{}}
	rows := map[string]*OpsRow{}
	row := func(op string, custom bool) *OpsRow {
		key := fmt.Sprint(custom, op)
		if rows[key] == nil {
			rows[key] = &OpsRow{Op: op, Custom: custom, Support: []OpSupport{}}
		}
		return rows[key]
	}
	for _, op := range kernels.TFLite29() {
		reg := kernel.Registration{Code: op.Code, Custom: op.Custom}
		row(reg.Name(), op.Code == schema.BuiltinOperatorCUSTOM).TFLite = &VersionSpan{op.Versions.Min, op.Versions.Max}
	}
	for _, reg := range kernels.Builtins().All() {
		rw := row(reg.Name(), reg.Code == schema.BuiltinOperatorCUSTOM)
		rw.Support = append(rw.Support, OpSupport{KernelsRuntime, reg.Versions.Min, reg.Versions.Max, typeNames(reg)})
	}
	if plugins != nil {
		for _, p := range plugins.Plugins {
			rt, ops := pluginOps(p)
			out.Runtimes = append(out.Runtimes, rt)
			for _, o := range ops {
				rw := row(o.Op, o.Custom)
				rw.Support = append(rw.Support, OpSupport{rt.Name, o.MinVersion, o.MaxVersion, o.Types})
			}
		}
	}
	for _, rw := range rows {
		out.Ops = append(out.Ops, *rw)
	}
	slices.SortFunc(out.Ops, func(a, b OpsRow) int { return compareOps(a.Custom, a.Op, b.Custom, b.Op) })
	return out
}

// typeNames are the names of reg's types.
func typeNames(reg kernel.Registration) []string {
	out := make([]string, len(reg.Types))
	for i, t := range reg.Types {
		out[i] = t.String()
	}
	return out
}

// pluginOps is a plugin's runtime entry and the ops it declares.
func pluginOps(p PluginReport) (OpsRuntime, []DeclaredOp) {
	rt := OpsRuntime{Name: p.Name, Path: p.Path, Usable: p.Usable, Reason: p.Reason}
	if p.Error != "" {
		rt.Reason = p.Error
		return rt, nil
	}
	return rt, p.Ops
}

// supportOf returns what runtime declares of the op, if it declares it.
func (r OpsRow) supportOf(runtime string) (OpSupport, bool) {
	i := slices.IndexFunc(r.Support, func(s OpSupport) bool { return s.Runtime == runtime })
	if i < 0 {
		return OpSupport{}, false
	}
	return r.Support[i], true
}

// WriteText writes r for people: the runtimes, then one line per op with
// the versions TensorFlow Lite registers and, per runtime, the versions and
// types it declares ("-": none), then how many of TensorFlow Lite's
// builtins each runtime runs.
func (r *OpsReport) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString("runtimes:\n")
	for _, rt := range r.Runtimes {
		fmt.Fprintf(&b, "  %s\n", rt.describe())
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := []string{"OP", "TFLITE " + r.TFLite}
	for _, rt := range r.Runtimes {
		head = append(head, strings.ToUpper(rt.Name))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, op := range r.Ops {
		cells := []string{op.Op, op.tfliteCell()}
		for _, rt := range r.Runtimes {
			cells = append(cells, op.cell(rt.Name))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	for _, rt := range r.Runtimes {
		b.WriteString(r.coverageLine(rt.Name, rt.Name))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe is the runtime in one line.
func (rt OpsRuntime) describe() string {
	where := "delego's CPU kernels, in process"
	if rt.Path != "" {
		where = rt.Path
	}
	if !rt.Usable {
		return fmt.Sprintf("%s (%s): not usable here: %s", rt.Name, where, rt.Reason)
	}
	return fmt.Sprintf("%s (%s)", rt.Name, where)
}

// tfliteCell is the versions TensorFlow Lite registers, "-" for none.
func (r OpsRow) tfliteCell() string {
	if r.TFLite == nil {
		return "-"
	}
	return versions(r.TFLite.Min, r.TFLite.Max)
}

// cell is what runtime declares of the op: its versions and the types it
// takes ("any" when it does not say), "-" when it does not declare it.
func (r OpsRow) cell(runtime string) string {
	s, ok := r.supportOf(runtime)
	if !ok {
		return "-"
	}
	types := "any"
	if len(s.Types) > 0 && len(s.Types) < len(kernel.AllTypes()) {
		types = strings.Join(s.Types, ",")
	}
	return versions(s.MinVersion, s.MaxVersion) + " " + types
}

// versions is "1-4", or "1" for a single version.
func versions(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// Coverage counts the builtins TensorFlow Lite registers that runtime runs
// at every version TensorFlow Lite registers (full), at some of them
// (partial), or not at all (missing).
func (r *OpsReport) Coverage(runtime string) (full, partial, missing int) {
	for _, op := range r.Ops {
		if op.Custom || op.TFLite == nil {
			continue
		}
		s, ok := op.supportOf(runtime)
		switch {
		case !ok || s.MaxVersion < op.TFLite.Min || s.MinVersion > op.TFLite.Max:
			missing++
		case s.MinVersion <= op.TFLite.Min && s.MaxVersion >= op.TFLite.Max:
			full++
		default:
			partial++
		}
	}
	return full, partial, missing
}

// coverageLine says what Coverage counts of runtime, which it calls name.
func (r *OpsReport) coverageLine(runtime, name string) string {
	full, partial, missing := r.Coverage(runtime)
	return fmt.Sprintf("%s runs %d of the %d builtins TensorFlow Lite %s registers at every version it registers, %d at only some, %d at none.\n",
		name, full, full+partial+missing, r.TFLite, partial, missing)
}

// Markdown writes r as a Markdown table, as the README shows it: a line
// of counts per runtime, then one row per op with the versions TensorFlow
// Lite registers and, per runtime, the versions and types it declares.
func (r *OpsReport) Markdown() string {
	var b strings.Builder
	for _, rt := range r.Runtimes {
		b.WriteString(r.coverageLine(rt.Name, "`"+rt.Name+"`"))
	}
	b.WriteString("\n| Op | TensorFlow Lite " + r.TFLite + " |")
	for _, rt := range r.Runtimes {
		b.WriteString(" " + rt.Name + " |")
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" --- |", len(r.Runtimes)) + "\n")
	for _, op := range r.Ops {
		name := op.Op
		if op.Custom {
			name += " (custom)"
		}
		fmt.Fprintf(&b, "| %s | %s |", name, op.tfliteCell())
		for _, rt := range r.Runtimes {
			b.WriteString(" " + strings.ReplaceAll(op.cell(rt.Name), ",", ", ") + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}
