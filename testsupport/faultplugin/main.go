// Command faultplugin is a delego plugin that misbehaves on purpose, for the
// fault tests: the cpu delegate with one failure put in, chosen by the
// binary's name, delego-fault-MODE (the tests build it once and link it
// under each name):
//
//	crash-compile  panics in Compile (the process dies)
//	crash-invoke   panics in Invoke
//	exit-invoke    exits with status 7 in Invoke
//	hang           never returns from Invoke
//	hang-later     declares one thread (delegate.Threaded), so the host
//	               polls for its answers, and hangs from the 21st Invoke
//	error-invoke   fails every Invoke with an error of 10 KB (and lives on)
//	wrong          answers outputs of the right shape with wrong numbers
//	               (every byte one higher), which only a comparison notices
//	garbage        returns outputs of the wrong shape and size
//	protocol       speaks plugin protocol 99 only (no host speaks it)
//	describe-v1    agrees on protocol 2 in the handshake, then describes
//	               itself as protocol 1
//	nodevice       cannot run here (Support fails with delegate.ErrNoDevice)
//	nodevice-declaring  cannot run here, but declares the cpu delegate's
//	               support beside the delegate.ErrNoDevice error
//	checker        behaves, and has a finer support check that refuses every
//	               odd-numbered node
//	configurable   behaves, and declares (delegate.Configurable) that it
//	               honours xnnpack_settings.num_threads and takes the option
//	               "refuse": Compile fails with the option's value as its
//	               error, which shows that options reach the plugin
//	chatty         behaves, and writes to its stderr: a line on its file
//	               descriptor 2 as it starts, and at each Invoke N (through
//	               os.Stderr, which go-plugin forwards) "invoke N" in two
//	               pieces, then "unfinished" without a newline
//	killed-start   is killed (SIGKILL, by itself) before it serves
//	stopped-start  stops itself (SIGSTOP) before it serves, as a plugin
//	               stopped while it starts
//
// The delegate's name is fault-MODE. hang, hang-later and garbage are the
// faults every plugin can be asked for (plugin.EnvFault: hang-after=0,
// hang-after=20, garbage-after=0), which the binary starts itself with
// (plugin.WithFaults, in place of $DELEGO_PLUGIN_FAULT); the others are
// faults of their own.
//
// It is test support: only tests build it, and production code never
// imports anything under testsupport/ (the import rules in
// integration/layers_test.go hold that).
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/tensor"
)

// startFaults are the modes that are plugin.EnvFault's faults.
func startFaults() map[string]string {
	return map[string]string{"hang": "hang-after=0", "hang-later": "hang-after=20", "garbage": "garbage-after=0"}
}

func main() {
	name := strings.TrimPrefix(filepath.Base(os.Args[0]), plugin.Prefix)
	d := &faulty{Delegate: cpu.New(), name: name, mode: strings.TrimPrefix(name, "fault-")}
	var opts []plugin.ServeOption
	if f, ok := startFaults()[d.mode]; ok {
		opts = append(opts, plugin.WithFaults(f))
	}
	switch d.mode {
	case "killed-start":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case "stopped-start":
		syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	case "checker":
		plugin.Serve(checker{d})
		return
	case "configurable":
		plugin.Serve(configurable{d})
		return
	case "chatty":
		fmt.Fprintln(os.Stderr, "chatty plugin starting")
	case "protocol":
		cfg := plugin.ServeConfig(d)
		cfg.VersionedPlugins = map[int]goplugin.PluginSet{99: cfg.VersionedPlugins[plugin.ProtocolVersion]}
		goplugin.Serve(cfg)
		return
	case "describe-v1":
		cfg := plugin.ServeConfig(d)
		cfg.VersionedPlugins = map[int]goplugin.PluginSet{2: cfg.VersionedPlugins[1]}
		goplugin.Serve(cfg)
		return
	}
	plugin.Serve(d, opts...)
}

type faulty struct {
	*cpu.Delegate
	name, mode string
}

func (d *faulty) Name() string { return d.name }

func (d *faulty) Support(ctx context.Context) (*delegate.Support, error) {
	sup, err := d.Delegate.Support(ctx)
	switch d.mode {
	case "nodevice":
		return nil, fmt.Errorf("%w: no fault accelerator attached", delegate.ErrNoDevice)
	case "nodevice-declaring":
		return sup, fmt.Errorf("%w: no fault accelerator attached", delegate.ErrNoDevice)
	}
	return sup, err
}

func (d *faulty) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	if d.mode == "crash-compile" {
		panic("fault plugin: crash in compile")
	}
	exe, err := d.Delegate.Compile(ctx, p)
	if err != nil {
		return nil, err
	}
	return &faultyExe{Executable: exe, mode: d.mode}, nil
}

// checker adds a finer support check to a faulty delegate.
type checker struct{ *faulty }

func (checker) CheckNodes(_ context.Context, model []byte, nodes []int) ([]delegate.Verdict, error) {
	if len(model) == 0 {
		return nil, fmt.Errorf("no model")
	}
	vs := make([]delegate.Verdict, len(nodes))
	for i, n := range nodes {
		vs[i] = delegate.Verdict{Accept: n%2 == 0, Reason: fmt.Sprintf("fault plugin refuses odd node %d", n)}
	}
	return vs, nil
}

// configurable adds settings and an option to a faulty delegate.
type configurable struct{ *faulty }

func (configurable) Honours() []string { return []string{"xnnpack_settings.num_threads"} }

func (configurable) Options() []delegate.Option {
	return []delegate.Option{{Name: "refuse", Description: "fail Compile with this message"}}
}

func (c configurable) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	if msg, ok := p.Options["refuse"]; ok {
		return nil, fmt.Errorf("fault plugin: refused as asked: %s", msg)
	}
	return c.faulty.Compile(ctx, p)
}

type faultyExe struct {
	delegate.Executable
	mode    string
	invokes int // chatty: Invokes so far (Invoke is never called concurrently on one executable)
}

// Threads implements delegate.Threaded: one, the caller's.
func (e *faultyExe) Threads() int { return 1 }

func (e *faultyExe) Invoke(ctx context.Context, in, out []*tensor.Tensor) error {
	switch e.mode {
	case "crash-invoke":
		panic("fault plugin: crash in invoke")
	case "exit-invoke":
		os.Exit(7)
	case "error-invoke":
		return fmt.Errorf("fault plugin: invoke failed: %s", strings.Repeat("x", 10<<10))
	case "chatty":
		e.invokes++
		if e.invokes > 1 {
			fmt.Fprintln(os.Stderr) // ends the last one's "unfinished"
		}
		fmt.Fprint(os.Stderr, "inv")
		fmt.Fprintf(os.Stderr, "oke %d\nunfinished", e.invokes)
	}
	if err := e.Executable.Invoke(ctx, in, out); err != nil || e.mode != "wrong" {
		return err
	}
	skew(out)
	return nil
}

// skew makes plausible wrong numbers of the right shape: every output byte
// one higher: 8-bit integers one step off, floats far off.
func skew(out []*tensor.Tensor) {
	for _, t := range out {
		for i := range t.Data {
			t.Data[i]++
		}
	}
}
