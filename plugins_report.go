package delego

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/cpu"
)

// This file describes the plugins a Plugins finds, as "delego plugins"
// lists them.

// PluginStartTimeout bounds starting and describing one plugin in
// Plugins.List.
const PluginStartTimeout = 20 * time.Second

// PluginsReport is what Plugins.List finds. Its JSON form is "delego
// plugins --json"'s.
type PluginsReport struct {
	SearchPath []string       `json:"search_path"` // the directories searched, in order
	InProcess  []string       `json:"in_process"`  // the delegates that run in process when no plugin is found
	Plugins    []PluginReport `json:"plugins"`     // one per name, sorted by name
	// Skipped are the files named delego-... that are not taken for
	// plugins, and the search directories that cannot be read, and why,
	// in the order of the search path.
	Skipped []plugin.Skipped `json:"skipped"`
}

// PluginReport is one plugin found, and what it says of itself.
type PluginReport struct {
	Name     string   `json:"name"`     // the NAME of its binary delego-NAME
	Path     string   `json:"path"`     // the binary
	Shadowed []string `json:"shadowed"` // binaries of the same name that Path hides
	// Error is why the plugin could not be started or described, or why it
	// was refused and not started; "" when it could (the fields below are
	// then empty).
	Error         string            `json:"error"`
	DescribedName string            `json:"described_name"` // the name the plugin gives itself
	Version       string            `json:"version"`        // the plugin's version
	Protocol      int               `json:"protocol"`       // the plugin protocol it speaks
	Usable        bool              `json:"usable"`         // whether it can run here
	Reason        string            `json:"reason"`         // why it cannot, when it cannot
	Devices       []delegate.Device `json:"devices"`        // the devices it can run on
	Ops           []DeclaredOp      `json:"ops"`            // builtins by name, then custom ops
	// DeclaresSettings says whether the plugin declares the settings it
	// honours and the options it takes (protocol 2 and later); when false,
	// Honours and Options say nothing.
	DeclaresSettings bool              `json:"declares_settings"`
	Honours          []string          `json:"honours"` // the TFLiteSettings fields it reads
	Options          []delegate.Option `json:"options"` // the options it takes
}

// DeclaredOp is an op a plugin declares it supports.
type DeclaredOp struct {
	Op         string   `json:"op"`          // the builtin's name or the custom op's
	Custom     bool     `json:"custom"`      // whether it is a custom op
	MinVersion int      `json:"min_version"` // the lowest version it runs
	MaxVersion int      `json:"max_version"` // the highest
	Types      []string `json:"types"`       // the tensor types it takes; empty: any
}

// MarshalJSON writes devices with lower-case field names.
func (r PluginReport) MarshalJSON() ([]byte, error) {
	type device struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	type option struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	type plain PluginReport
	devs := make([]device, len(r.Devices))
	for i, d := range r.Devices {
		devs[i] = device{d.Name, d.Description}
	}
	opts := make([]option, len(r.Options))
	for i, o := range r.Options {
		opts[i] = option{o.Name, o.Description}
	}
	return json.Marshal(struct {
		plain
		Devices []device `json:"devices"`
		Options []option `json:"options"`
	}{plain(r), devs, opts})
}

// List finds every plugin in p's directories, and starts, describes and
// stops each that is not refused as insecure, allowing each
// PluginStartTimeout. Only the search itself failing is an error; a plugin
// that cannot be started or described is listed with its error.
func (p Plugins) List(ctx context.Context) (*PluginsReport, error) {
	l, err := p.Discover()
	if err != nil {
		return nil, err
	}
	r := &PluginsReport{SearchPath: p.Search().Dirs, InProcess: []string{cpu.Name}, Plugins: []PluginReport{},
		Skipped: append([]plugin.Skipped{}, l.Skipped...)}
	if r.SearchPath == nil {
		r.SearchPath = []string{}
	}
	for _, f := range l.Found {
		pr := PluginReport{Name: f.Name, Path: f.Path, Shadowed: f.Shadowed, Devices: []delegate.Device{}, Ops: []DeclaredOp{},
			Honours: []string{}, Options: []delegate.Option{}}
		if pr.Shadowed == nil {
			pr.Shadowed = []string{}
		}
		if f.Refused != nil {
			pr.Error = f.Refused.Error()
		} else if info, err := p.describe(ctx, f.Path); err != nil {
			pr.Error = err.Error()
		} else {
			pr.DescribedName, pr.Version, pr.Protocol = info.Name, info.Version, info.Protocol
			pr.Usable, pr.Reason = info.Usable, info.Reason
			pr.Devices = append(pr.Devices, info.Devices...)
			pr.Ops = opsOf(info.Support)
			pr.DeclaresSettings = info.Configurable
			pr.Honours = append(pr.Honours, info.Honours...)
			pr.Options = append(pr.Options, info.Options...)
		}
		r.Plugins = append(r.Plugins, pr)
	}
	return r, nil
}

// describe starts the plugin at path, takes its description and stops it.
func (p Plugins) describe(ctx context.Context, path string) (plugin.Info, error) {
	opts, err := p.Options(path)
	if err != nil {
		return plugin.Info{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, PluginStartTimeout)
	defer cancel()
	c, err := plugin.Open(ctx, path, opts)
	if err != nil {
		return plugin.Info{}, err
	}
	defer c.Close()
	return c.Info(), nil
}

// opsOf lists declared support: builtins by name, then custom ops.
func opsOf(s *delegate.Support) []DeclaredOp {
	ops := []DeclaredOp{}
	if s == nil {
		return ops
	}
	types := func(o delegate.OpSupport) []string {
		out := []string{}
		for _, t := range o.Types {
			out = append(out, t.String())
		}
		return out
	}
	for code, o := range s.Builtins {
		ops = append(ops, DeclaredOp{Op: code.String(), MinVersion: o.Versions.Min, MaxVersion: o.Versions.Max, Types: types(o)})
	}
	for name, o := range s.Custom {
		ops = append(ops, DeclaredOp{Op: name, Custom: true, MinVersion: o.Versions.Min, MaxVersion: o.Versions.Max, Types: types(o)})
	}
	slices.SortFunc(ops, func(a, b DeclaredOp) int { return compareOps(a.Custom, a.Op, b.Custom, b.Op) })
	return ops
}

// WriteText writes r for people, as "delego plugins" prints it: the
// search path, then per plugin its binary, what it shadows, its version,
// protocol, whether it is usable, its devices and its ops, then the files
// skipped and why, then the delegates that run in process.
func (r *PluginsReport) WriteText(w io.Writer) error {
	var b strings.Builder
	r.write(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// write is WriteText's body.
func (r *PluginsReport) write(w io.Writer) {
	fmt.Fprintf(w, "search path: %s\n", strings.Join(r.SearchPath, string(os.PathListSeparator)))
	if len(r.Plugins) == 0 {
		fmt.Fprintf(w, "no plugins found (binaries named %sNAME); set $%s to add directories\n", plugin.Prefix, plugin.EnvPath)
	}
	for _, p := range r.Plugins {
		fmt.Fprintf(w, "\n%s  %s\n", p.Name, p.Path)
		for _, s := range p.Shadowed {
			fmt.Fprintf(w, "  shadows   %s\n", s)
		}
		if p.Error != "" {
			fmt.Fprintf(w, "  usable    no: %s\n", p.Error)
			continue
		}
		if p.DescribedName != p.Name {
			fmt.Fprintf(w, "  calls itself %q\n", p.DescribedName)
		}
		fmt.Fprintf(w, "  version   %s\n  protocol  %d\n", p.Version, p.Protocol)
		if p.Usable {
			fmt.Fprintf(w, "  usable    yes\n")
		} else {
			fmt.Fprintf(w, "  usable    no: %s\n", p.Reason)
		}
		for i, d := range p.Devices {
			label := "devices"
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(w, "  %-9s %s (%s)\n", label, d.Name, d.Description)
		}
		items := make([]string, len(p.Ops))
		for i, o := range p.Ops {
			items[i] = fmt.Sprintf("%s %d", o.Op, o.MinVersion)
			if o.MaxVersion != o.MinVersion {
				items[i] += fmt.Sprintf("-%d", o.MaxVersion)
			}
			if len(o.Types) > 0 {
				items[i] += " (" + strings.Join(o.Types, "/") + ")"
			}
		}
		fmt.Fprintf(w, "  ops       %d:\n", len(p.Ops))
		wrapList(w, "            ", items, 78)
		writeDeclaredSettings(w, p)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprint(w, "\nskipped:\n")
		for _, sk := range r.Skipped {
			fmt.Fprintf(w, "  %s: %s\n", sk.Path, sk.Reason)
		}
	}
	fmt.Fprintf(w, "\nin process: %s (used when no %s%s plugin is found)\n", strings.Join(r.InProcess, ", "), plugin.Prefix, cpu.Name)
}

// writeDeclaredSettings prints the settings a plugin honours and the
// options it takes, or that it declares neither.
func writeDeclaredSettings(w io.Writer, p PluginReport) {
	if !p.DeclaresSettings {
		fmt.Fprintf(w, "  settings  not declared (protocol %d): delego warns about its settings and gives it no options\n", p.Protocol)
		return
	}
	if len(p.Honours) == 0 {
		fmt.Fprintf(w, "  settings  none\n")
	} else {
		fmt.Fprintf(w, "  settings  %d:\n", len(p.Honours))
		wrapList(w, "            ", p.Honours, 78)
	}
	if len(p.Options) == 0 {
		fmt.Fprintf(w, "  options   none\n")
	}
	for i, o := range p.Options {
		label := "options"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "  %-9s %s: %s\n", label, o.Name, o.Description)
	}
}

// wrapList prints items separated by ", " in lines of at most width columns,
// each starting with indent.
func wrapList(w io.Writer, indent string, items []string, width int) {
	line := indent
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		if line != indent && len(line)+1+len(it) > width {
			fmt.Fprintln(w, line)
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += it
	}
	if line != indent {
		fmt.Fprintln(w, line)
	}
}

// compareOps orders ops as the reports list them: builtins by name, then
// custom ops by name.
func compareOps(aCustom bool, a string, bCustom bool, b string) int {
	if aCustom != bCustom {
		if aCustom {
			return 1
		}
		return -1
	}
	return cmp.Compare(a, b)
}
