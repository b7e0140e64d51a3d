package main

import (
	"context"
	"io"
)

const pluginsUsage = `Usage: delego plugins [--json] [--plugin-checksums FILE] [--plugin-mtls] [--allow-insecure-plugins]

Lists the delegate plugins delego finds: executables named delego-NAME in the
directories of $DELEGO_PLUGIN_PATH (separated by ':', searched in order),
then in the directory of the delego binary, then in the user's folder
$XDG_DATA_HOME/delego/plugins (~/.local/share/delego/plugins when
$XDG_DATA_HOME is unset), then in the system's, /usr/lib/delego/plugins. A
folder that does not exist is passed over. Of several with one name the
first wins; the others are listed as shadowed. Each plugin is started, asked
to describe itself and stopped, and delego prints its name, version, plugin
protocol, path, whether it is usable here (and why not), its devices,
the ops it declares with their version ranges, and the settings it honours
and options it takes. A plugin that another user
could replace (see --allow-insecure-plugins) is not started: it is listed
with the reason it is refused. A file whose name begins with delego- but
that is not taken for a plugin (a name a delegate may not have, such as
delego-My.TPU or delego-x.sh; not executable; a directory; a dangling link)
is listed with the reason it was skipped, as is a directory of the search
path that cannot be read. A relative directory in
$DELEGO_PLUGIN_PATH fails the search.

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
    declares_settings whether it declares the settings it honours and the
                   options it takes (protocol 2); false: the two below say
                   nothing
    honours[]      the TFLiteSettings fields it reads ("xnnpack_settings.num_threads")
    options[]      {name, description}: the options it takes (--delegate-option)
  skipped[]        {path, reason}: the files named delego-... that are not
                   taken for plugins, and the directories of the search path
                   that cannot be read, and why, in search path order

A plugin that cannot be started or described is listed with its error; the
exit status is 0 unless the search itself fails.
`

func pluginsCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	return pluginReportCmd(ctx, "plugins", pluginsUsage, args, stdout, pluginHost.List)
}

// textReport is a report a command prints as text, or as JSON with --json.
type textReport interface{ WriteText(io.Writer) error }

// pluginReportCmd runs a command that takes no arguments, the plugin flags
// and --json, and prints the report that build makes from the plugins
// found: delego plugins and delego ops.
func pluginReportCmd[R textReport](ctx context.Context, name, usage string, args []string, stdout io.Writer,
	build func(pluginHost, context.Context) (R, error)) error {
	fs := newFlagSet(name)
	var (
		jsonOut bool
		pf      pluginFlags
	)
	fs.BoolVar(&jsonOut, "json", false, "")
	pf.define(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagError(fs, name, usage, stdout, err)
	}
	if len(pos) > 0 {
		return usagef(name, "%s takes no arguments, got %q", name, pos)
	}
	host, err := pf.host()
	if err != nil {
		return err
	}
	r, err := build(host, ctx)
	if err != nil {
		return err
	}
	if jsonOut {
		return writeJSON(stdout, r)
	}
	return r.WriteText(stdout)
}
