// Command delego runs TensorFlow Lite models from the command line: it runs a
// model on raw input files or on a picture (run), describes a model's graph,
// tensors and metadata (inspect), measures latency with a per-op profile
// (bench), shows which delegate would run which part of a model, and why
// the rest stays on the CPU (plan), tries delegates on a model and picks
// the fastest correct one (tune), lists the Edge TPUs it can use
// (devices), the delegate plugins it finds (plugins) and the ops, versions
// and types the CPU kernels and those plugins run (ops).
//
// Usage:
//
//	delego run MODEL (--input FILE... | --image PICTURE) [--output FILE] [--labels FILE] [--top K] [--threads N] [DELEGATION] [-v]
//	delego inspect MODEL [--json]
//	delego bench MODEL [--runs N] [--warmup N] [--threads N] [--input FILE...] [DELEGATION] [--json]
//	delego plan MODEL [DELEGATION] [--json | --format text|dot|json]
//	delego tune MODEL --delegate A,B,... --out DIR [--input FILE... | --image PICTURE | --inputs-from DIR] [--runs N]
//	delego serve (--model NAME=PATH... | --repository DIR) [--http ADDR] [--instances N] [--max-queue N] [DELEGATION]
//	delego devices [--json]
//	delego plugins [--json] [--plugin-checksums FILE] [--plugin-mtls] [--allow-insecure-plugins]
//	delego ops [--json] [--plugin-checksums FILE] [--plugin-mtls] [--allow-insecure-plugins]
//	delego conform PLUGIN [--json] [--seed N] [--cases N] [--float-tolerance X] [--int-tolerance N] [--ops OP,...] [--model FILE[:TWIN]]... [-v]
//	delego example [--dir DIR]
//	delego help [COMMAND]
//	delego version
//
// DELEGATION is [--delegate NAME[,NAME...]] [--delegate-option NAME:KEY=VALUE]
// [--settings FILE] [--cpu-twin FILE] [--plugin-checksums FILE]
// [--strict-checksums] [--plugin-mtls] [--allow-insecure-plugins]: the
// delegates in priority order, each a plugin process (the binary
// delego-NAME, found in the directories of $DELEGO_PLUGIN_PATH, beside
// delego, in ~/.local/share/delego/plugins or in /usr/lib/delego/plugins,
// and refused when another user could replace it unless
// --allow-insecure-plugins; "cpu" is delego's own kernels: the delego-cpu
// plugin when found, else in process; "edgetpu" is a Coral USB
// Accelerator, run only by the delego-edgetpu plugin). A delegate that
// cannot be had or fails is a compilation or execution error that the
// settings' fallback_settings may turn into a run on the CPU. The settings
// are TFLite acceleration settings (a ComputeSettings or TFLiteSettings,
// JSON or binary) whose delegate field picks the delegate when --delegate
// is absent; --cpu-twin names the CPU twin an Edge TPU model falls back
// to, and --cpu-twin-only (run, bench, plan) takes that twin for MODEL. A fallback to the CPU is always reported on standard error.
//
// On SIGINT, SIGTERM or SIGHUP delego stops the command, closing its
// delegates and their plugin processes; a second signal kills the plugin
// processes left and exits at once.
//
// Flags may come before or after MODEL. Errors go to standard error; the exit
// status is 0 on success, 1 on an error and 2 on a usage error. Run
// "delego help COMMAND" for the details of a command.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// command is one subcommand. Run gets the arguments after the command's name.
type command struct {
	Name    string
	Summary string
	Usage   string // the full help text, printed by -h and "delego help NAME"
	Run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order the help shows them.
func commands() []command {
	return []command{
		{"run", "run a model on input files or a picture", runUsage, runCmd},
		{"inspect", "describe a model's graph, tensors and metadata", inspectUsage, inspectCmd},
		{"bench", "measure a model's latency, with a per-op profile", benchUsage, benchCmd},
		{"plan", "show which delegate runs which nodes, and why", planUsage, planCmd},
		{"tune", "try delegates on a model and pick the fastest correct one", tuneUsage, tuneCmd},
		{"pipeline", "run a segmented model as a pipeline over several Edge TPUs", pipelineUsage, pipelineCmd},
		{"serve", "serve models over the Open Inference Protocol (KServe v2, REST)", serveUsage, serveCmd},
		{"devices", "list the Edge TPUs (Coral USB Accelerators) here", devicesUsage, devicesCmd},
		{"plugins", "list the delegate plugins found, and what they support", pluginsUsage, pluginsCmd},
		{"ops", "list the ops, versions and types the CPU kernels and plugins run", opsUsage, opsCmd},
		{"conform", "check a delegate plugin against delego's contract", conformUsage, conformCmd},
		{"example", "write and run the built-in example model", exampleUsage, exampleCmd},
		{"help", "show help for delego or a command", helpUsage, helpCmd},
		{"version", "print delego's version", versionUsage, versionCmd},
	}
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.Name == name {
			return c, true
		}
	}
	return command{}, false
}

// usageError is a mistake in the command line itself; it exits with status 2.
type usageError struct {
	cmd string // the subcommand, "" for delego itself
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usageError for cmd.
func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, err: fmt.Errorf(format, args...)}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		// The first signal cancels the command, which closes its delegates
		// (and so stops their plugin processes) on the way out; a second one
		// exits at once, and the plugin processes left die with delego (the
		// kernel kills them when it exits: see package plugin, "Processes").
		<-sigs
		cancel()
		<-sigs
		os.Exit(exitError)
	}()
	os.Exit(realMain(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// realMain runs the command line args and returns the exit status. It prints
// errors to stderr and never lets a panic escape as a stack trace.
func realMain(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "delego: internal error: %v\n", r)
			code = exitError
		}
	}()
	err := dispatch(ctx, args, stdout, stderr)
	if err == nil {
		return exitOK
	}
	if ue, ok := errors.AsType[*usageError](err); ok {
		name, hint := "delego", "delego help"
		if ue.cmd != "" {
			name, hint = "delego "+ue.cmd, "delego "+ue.cmd+" -h"
		}
		fmt.Fprintf(stderr, "%s: %v\nRun '%s' for usage.\n", name, ue.err, hint)
		return exitUsage
	}
	fmt.Fprintf(stderr, "delego: %v\n", err)
	return exitError
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage())
		return &usageError{err: errors.New("no command given")}
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, mainUsage())
		return nil
	case "-version", "--version":
		return versionCmd(ctx, nil, stdout, stderr)
	}
	c, ok := lookupCommand(args[0])
	if !ok {
		return usagef("", "unknown command %q", args[0])
	}
	return c.Run(ctx, args[1:], stdout, stderr)
}

func mainUsage() string {
	s := `delego runs TensorFlow Lite models.

Usage:

  delego COMMAND [ARGUMENTS]

Commands:

`
	for _, c := range commands() {
		s += fmt.Sprintf("  %-9s %s\n", c.Name, c.Summary)
	}
	return s + `
Run 'delego help COMMAND' or 'delego COMMAND -h' for a command's flags.
Exit status: 0 on success, 1 on an error, 2 on a usage error.
`
}

const helpUsage = `Usage: delego help [COMMAND]

Prints the list of commands, or the help of one command.
`

func helpCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	switch len(args) {
	case 0:
		fmt.Fprint(stdout, mainUsage())
		return nil
	case 1:
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			fmt.Fprint(stdout, helpUsage)
			return nil
		}
		c, ok := lookupCommand(args[0])
		if !ok {
			return usagef("help", "unknown command %q", args[0])
		}
		fmt.Fprint(stdout, c.Usage)
		return nil
	}
	return usagef("help", "help takes at most one command name, got %d arguments", len(args))
}

const versionUsage = `Usage: delego version

Prints delego's version (a release build's, from git describe; else the
module version it was installed at, or "(devel)" for a local build), its VCS
revision when the build recorded it (", modified" when the checkout had
uncommitted changes), and the Go toolchain and platform it was built with.
`

// releaseVersion is the version scripts/release.sh stamps into a release
// build (-ldflags -X main.releaseVersion=...): git describe's; empty otherwise.
var releaseVersion string

// versionLine says which delego bi describes: the module version that go
// install recorded ("(devel)" when built in a checkout), the VCS revision
// that go build recorded from a checkout, and the toolchain and platform.
// bi is nil when the binary carries no build information.
func versionLine(bi *debug.BuildInfo) string {
	version, revision, modified := "(unknown)", "", false
	if bi != nil {
		version = cmp.Or(releaseVersion, bi.Main.Version)
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "delego %s", version)
	switch {
	case revision != "" && modified:
		fmt.Fprintf(&b, " (%s, modified)", revision)
	case revision != "":
		fmt.Fprintf(&b, " (%s)", revision)
	}
	fmt.Fprintf(&b, " %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

func versionCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("version")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagError(fs, "version", versionUsage, stdout, err)
	}
	if len(pos) > 0 {
		return usagef("version", "version takes no arguments, got %q", pos)
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionLine(bi))
	return nil
}
