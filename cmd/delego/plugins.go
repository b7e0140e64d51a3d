package main

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

const pluginsUsage = `Usage: delego plugins [--json] [--plugin-checksums FILE] [--plugin-mtls] [--allow-insecure-plugins]

Lists the delegate plugins delego finds: executables named delego-NAME in the
directories of $DELEGO_PLUGIN_PATH (separated by ':', searched in order),
then in the directory of the delego binary. Of several with one name the
first wins; the others are listed as shadowed. Each plugin is started, asked
to describe itself and stopped, and delego prints its name, version, plugin
protocol, path, whether it is usable here (and why not), its devices, and
the ops it declares with their version ranges. A plugin that another user
could replace (see --allow-insecure-plugins) is not started: it is listed
with the reason it is refused. A relative directory in $DELEGO_PLUGIN_PATH
fails the search.

The cpu delegate also runs in process: --delegate cpu uses the delego-cpu
plugin when one is found, else delego's own kernels in process (a refused
delego-cpu makes cpu unavailable instead).

Flags:
  --json           print JSON
` + pluginFlagsHelp + `  -h               show this help

JSON fields (stable):
  search_path      the directories searched, in order
  in_process       delegates that run in process when no plugin is found
  plugins[]        one per name, sorted by name:
    name, path     the delegate's name (delego-NAME) and the binary
    shadowed[]     binaries of the same name hidden by path
    error          why the plugin could not be started or described, or why
                   it was refused and not started ("" when it could; the
                   fields below are then empty)
    described_name the name the plugin gives itself
    version        the plugin's version
    protocol       the plugin protocol it speaks
    usable         whether it can run here; reason says why not
    devices[]      {name, description}
    ops[]          {op (builtin name or custom op name), custom (bool),
                   min_version, max_version, types[] (empty: any)}

A plugin that cannot be started or described is listed with its error; the
exit status is 0 unless the search itself fails.
`

// pluginStartTimeout bounds starting and describing one plugin.
const pluginStartTimeout = 20 * time.Second

// pluginsReport is the JSON of delego plugins.
type pluginsReport struct {
	SearchPath []string       `json:"search_path"`
	InProcess  []string       `json:"in_process"`
	Plugins    []pluginReport `json:"plugins"`
}

type pluginReport struct {
	Name          string            `json:"name"`
	Path          string            `json:"path"`
	Shadowed      []string          `json:"shadowed"`
	Error         string            `json:"error"`
	DescribedName string            `json:"described_name"`
	Version       string            `json:"version"`
	Protocol      int               `json:"protocol"`
	Usable        bool              `json:"usable"`
	Reason        string            `json:"reason"`
	Devices       []delegate.Device `json:"devices"`
	Ops           []declaredOp      `json:"ops"`
}

type declaredOp struct {
	Op         string   `json:"op"`
	Custom     bool     `json:"custom"`
	MinVersion int      `json:"min_version"`
	MaxVersion int      `json:"max_version"`
	Types      []string `json:"types"`
}

// MarshalJSON writes devices with lower-case field names.
func (r pluginReport) MarshalJSON() ([]byte, error) {
	type device struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	type plain pluginReport
	devs := make([]device, len(r.Devices))
	for i, d := range r.Devices {
		devs[i] = device{d.Name, d.Description}
	}
	return json.Marshal(struct {
		plain
		Devices []device `json:"devices"`
	}{plain(r), devs})
}

func pluginsCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("plugins")
	var (
		jsonOut bool
		pf      pluginFlags
	)
	fs.BoolVar(&jsonOut, "json", false, "")
	pf.define(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagError(fs, "plugins", pluginsUsage, stdout, err)
	}
	if len(pos) > 0 {
		return usagef("plugins", "plugins takes no arguments, got %q", pos)
	}
	host, err := pf.host()
	if err != nil {
		return err
	}
	r, err := listPlugins(ctx, host)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(stdout, r)
	}
	printPlugins(stdout, r)
	return nil
}

// listPlugins finds every plugin in host's directories, and starts and
// describes each that is not refused as insecure.
func listPlugins(ctx context.Context, host pluginHost) (*pluginsReport, error) {
	found, err := host.Discover()
	if err != nil {
		return nil, err
	}
	r := &pluginsReport{SearchPath: host.Dirs, InProcess: []string{cpu.Name}, Plugins: []pluginReport{}}
	if r.SearchPath == nil {
		r.SearchPath = []string{}
	}
	for _, f := range found {
		pr := pluginReport{Name: f.Name, Path: f.Path, Shadowed: f.Shadowed, Devices: []delegate.Device{}, Ops: []declaredOp{}}
		if pr.Shadowed == nil {
			pr.Shadowed = []string{}
		}
		if f.Refused != nil {
			pr.Error = f.Refused.Error()
		} else if info, err := describePlugin(ctx, host, f.Path); err != nil {
			pr.Error = err.Error()
		} else {
			pr.DescribedName, pr.Version, pr.Protocol = info.Name, info.Version, info.Protocol
			pr.Usable, pr.Reason = info.Usable, info.Reason
			pr.Devices = append(pr.Devices, info.Devices...)
			pr.Ops = opsOf(info.Support)
		}
		r.Plugins = append(r.Plugins, pr)
	}
	return r, nil
}

// describePlugin starts the plugin at path, takes its description and stops it.
func describePlugin(ctx context.Context, host pluginHost, path string) (plugin.Info, error) {
	opts, err := host.Options(path)
	if err != nil {
		return plugin.Info{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, pluginStartTimeout)
	defer cancel()
	c, err := plugin.Open(ctx, path, opts)
	if err != nil {
		return plugin.Info{}, err
	}
	defer c.Close()
	return c.Info(), nil
}

// opsOf lists declared support: builtins by name, then custom ops.
func opsOf(s *delegate.Support) []declaredOp {
	ops := []declaredOp{}
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
		ops = append(ops, declaredOp{Op: code.String(), MinVersion: o.Versions.Min, MaxVersion: o.Versions.Max, Types: types(o)})
	}
	for name, o := range s.Custom {
		ops = append(ops, declaredOp{Op: name, Custom: true, MinVersion: o.Versions.Min, MaxVersion: o.Versions.Max, Types: types(o)})
	}
	slices.SortFunc(ops, func(a, b declaredOp) int {
		if a.Custom != b.Custom {
			if a.Custom {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Op, b.Op)
	})
	return ops
}

// printPlugins writes the report as text.
func printPlugins(w io.Writer, r *pluginsReport) {
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
	}
	fmt.Fprintf(w, "\nin process: %s (used when no %s%s plugin is found)\n", strings.Join(r.InProcess, ", "), plugin.Prefix, cpu.Name)
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
