package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/delego/delego/delegate/delegatetest"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
)

const conformUsage = `Usage: delego conform PLUGIN [--json] [--seed N] [--cases N] [--float-tolerance X] [--int-tolerance N] [--ops OP,...] [--model FILE[:TWIN]]... [--allow-insecure-plugins] [-v]

Checks a delegate plugin against delego's contract with the conformance kit
(package delegate/delegatetest, which a plugin's author also runs from go
test) and prints a report, case by case. PLUGIN is a plugin's name, found as
"delego plugins" finds it (delego-NAME in $DELEGO_PLUGIN_PATH, then beside
delego), or a path to its binary.

The checks: for every builtin op the plugin declares, every declared version
delego's CPU kernels run and every declared type the random graph generator
makes (float32, uint8, int8), random graphs of that op run with the plugin
and are compared with delego's CPU kernels; a declared node the plugin
fails to compile or run, or outputs off by more than the tolerance, fail the
case, which names the op, the version, the type and the graph's seed. What
the kit cannot generate (other ops and types, custom ops without a --model)
is listed as not covered, never as passed. Then: compile and invoke failures
reach the fallback settings as specified, two interpreters share the plugin
process at once, a resized input, and release and close leave no process,
file descriptor or shared-memory file. A plugin that writes to its standard
output, where go-plugin's handshake line must come first, fails, and the
report says what it printed.

Flags:
  --json           print the report as JSON
  --seed N         the seed the graphs derive from (default 1): the same
                   seed gives the same graphs
  --cases N        random graphs per op, version and type (default 3)
  --float-tolerance X
                   float outputs may differ from the CPU kernels' by
                   X*(1+|want|) (default 1e-4): what the plugin declares
  --int-tolerance N
                   integer and quantized outputs may differ by N steps
                   (default 0: exact)
  --ops OP,...     check only these builtin ops (as models name them: ADD,
                   CONV_2D), to look into a failure; the other checks still
                   run. Repeatable
  --model FILE[:TWIN]
                   also run the model FILE with the plugin and compare it
                   with TWIN on the CPU kernels, for custom ops random
                   graphs cannot hold (the Edge TPU's edgetpu-custom-op);
                   TWIN defaults to Coral's naming (foo.tflite beside
                   foo_edgetpu.tflite). Repeatable
  --allow-insecure-plugins
                   run a plugin delego otherwise refuses because another
                   user could replace it
  -v               copy the plugin's standard error to delego's, and show
                   each case there as it is decided
  -h               show this help

The exit status is 0 when every case passed or was not covered, 1 when one
failed (or the plugin could not be checked), 2 on a usage error.

JSON fields (stable):
  plugin, version, path   the plugin's name and version, and its binary
  seed, graphs_per_case   as given
  tolerance               {float, steps}
  cases[]                 {check (start, ops, models, faults, concurrency,
                          resize, release), name, op, version, type, seed
                          (the random graph's), status ("pass", "fail",
                          "not covered"), message}
`

func conformCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("conform")
	var (
		jsonOut, verbose, insecure bool
		seed                       uint64
		cases, steps               int
		floatTol                   float64
		models, only               stringList
	)
	fs.BoolVar(&jsonOut, "json", false, "")
	fs.BoolVar(&verbose, "v", false, "")
	fs.BoolVar(&insecure, "allow-insecure-plugins", false, "")
	fs.Uint64Var(&seed, "seed", 1, "")
	fs.IntVar(&cases, "cases", 3, "")
	fs.Float64Var(&floatTol, "float-tolerance", delegatetest.DefaultFloatTolerance, "")
	fs.IntVar(&steps, "int-tolerance", 0, "")
	fs.Var(&models, "model", "")
	fs.Var(&only, "ops", "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagError(fs, "conform", conformUsage, stdout, err)
	}
	switch {
	case len(pos) != 1:
		return usagef("conform", "conform takes one plugin (a name or a path), got %d arguments", len(pos))
	case cases < 1:
		return usagef("conform", "--cases %d: want at least 1", cases)
	case !(floatTol > 0):
		return usagef("conform", "--float-tolerance %v: want a number above 0", floatTol)
	case steps < 0:
		return usagef("conform", "--int-tolerance %d: want 0 or more", steps)
	}
	opts := []delegatetest.Option{
		delegatetest.Seed(seed), delegatetest.Cases(cases),
		delegatetest.WithTolerance(delegatetest.Tolerance{Float: floatTol, Steps: steps}),
	}
	for _, ops := range only {
		opts = append(opts, delegatetest.Only(strings.Split(ops, ",")...))
	}
	for _, m := range models {
		file, twin, ok := strings.Cut(m, ":")
		if !ok {
			twin = edgetpuinfo.TwinPath(file)
		}
		if file == "" || twin == "" {
			return usagef("conform", "--model %q: give the model and its CPU twin as FILE:TWIN", m)
		}
		opts = append(opts, delegatetest.Model(file, twin))
	}
	if verbose {
		opts = append(opts, delegatetest.Stderr(stderr), delegatetest.Progress(stderr))
	}
	path, err := pluginPath(pos[0], insecure)
	if err != nil {
		return err
	}
	r, err := delegatetest.Check(ctx, path, opts...)
	if err != nil {
		return err
	}
	if jsonOut {
		err = writeJSON(stdout, r)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if r.Failed() {
		return fmt.Errorf("%s fails conformance: %d of %d cases failed", pos[0], r.Count(delegatetest.Fail), len(r.Cases))
	}
	return nil
}

// pluginPath is the binary of the plugin arg names: a path when it holds a
// slash, else the plugin found by that name.
func pluginPath(arg string, insecure bool) (string, error) {
	if strings.ContainsRune(arg, '/') {
		return arg, nil
	}
	host := defaultHost()
	host.AllowInsecure = insecure
	path, err := host.Find(arg)
	if err != nil {
		return "", err
	}
	return path, nil
}
