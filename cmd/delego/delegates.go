package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/plugins/edgetpu"
	"google.golang.org/protobuf/proto"
)

// This file is where delegate names become delegates: --delegate and
// --settings are read here for run, bench and plan, and openDelegate is the
// one place that maps a name to a delegate. Plugin discovery (a binary
// called delego-NAME) belongs in openDelegate.

// delegateOpener makes the delegate called name. It never fails: a delegate
// that cannot be had is a delegate.Unavailable, whose error the interpreter
// treats as a compilation error subject to the fallback settings.
type delegateOpener func(ctx context.Context, name string) delegate.Delegate

// builtinDelegates lists the delegates that run in process, for messages.
const builtinDelegates = cpu.Name + ", " + edgetpu.Name

// openDelegate is delego's delegateOpener: "cpu" is delego's own kernels in
// process (plugins/cpu), "edgetpu" the Coral USB Accelerator through libusb
// (plugins/edgetpu, in process until its plugin binary); any other name is
// unavailable until plugins come.
func openDelegate(_ context.Context, name string) delegate.Delegate {
	switch name {
	case cpu.Name:
		return cpu.New()
	case edgetpu.Name:
		return newEdgeTPU() // edgetpu part 2: DELEGO_EDGETPU_* (edgetpu_env.go)
	}
	return delegate.Unavailable(name, fmt.Errorf("%w %q: not built into delego (built in: %s), and plugin binaries (delego-%s) are not looked for yet",
		delegate.ErrUnknownDelegate, name, builtinDelegates, name))
}

// delegateNameOf is the delegate name TFLiteSettings.delegate selects, or ""
// for NONE: CPU kernels only.
func delegateNameOf(d config.Delegate) string {
	switch d {
	case config.Delegate_NONE:
		return ""
	case config.Delegate_NNAPI:
		return "nnapi"
	case config.Delegate_GPU:
		return "gpu"
	case config.Delegate_HEXAGON:
		return "hexagon"
	case config.Delegate_XNNPACK:
		return "xnnpack"
	case config.Delegate_EDGETPU, config.Delegate_EDGETPU_CORAL:
		return "edgetpu"
	}
	return strings.ToLower(d.String())
}

// noDelegate is the --delegate value that asks for none, whatever the
// settings say.
const noDelegate = "none"

// delegationFlags are the flags that choose delegates and settings, shared by
// run, bench and plan.
type delegationFlags struct {
	delegates stringList // --delegate, each NAME[,NAME...]
	settings  string     // --settings FILE
	twin      string     // --cpu-twin FILE
}

// define adds --delegate, --settings and --cpu-twin to fs.
func (f *delegationFlags) define(fs *flag.FlagSet) {
	fs.Var(&f.delegates, "delegate", "")
	fs.StringVar(&f.settings, "settings", "", "")
	fs.StringVar(&f.twin, "cpu-twin", "", "")
}

// delegationHelp documents the flags of delegationFlags, for the help texts.
const delegationHelp = `  --delegate NAME[,NAME...]
                   run the nodes a delegate supports on it, the delegates in
                   priority order (the flag may also be repeated). "cpu" is
                   delego's own kernels behind the delegate contract; other
                   "edgetpu" is a Coral USB Accelerator (coral_settings.device
                   picks one; "delego devices" lists them). Other names
                   (xnnpack, gpu, nnapi, ...) are not available yet, which is
                   a compilation error: with
                   allow_automatic_fallback_on_compilation_error the CPU runs
                   their nodes (and delego says so), else delego fails.
                   "none": no delegate, whatever the settings say. Without
                   --delegate, the settings' delegate field picks one
                   (XNNPACK: xnnpack, GPU: gpu, NNAPI: nnapi, HEXAGON: hexagon,
                   EDGETPU and EDGETPU_CORAL: edgetpu; NONE or absent: none).
  --settings FILE  TFLite acceleration settings: a ComputeSettings or a
                   TFLiteSettings (configuration.proto) in JSON (.json) or
                   binary protobuf (.pb, .binpb; other names: by content).
                   delego honours delegate, cpu_settings.num_threads,
                   max_delegated_partitions, fallback_settings, and
                   xnnpack_settings.num_threads and coral_settings (for
                   those delegates). Each other field set is printed on
                   standard error ("delego ignores ..."), and one whose
                   ignoring would change the results (GPU precision,
                   FORCE_CPU, ...) is an error. The file is checked as
                   written, against its own delegate field.
  --cpu-twin FILE  the CPU twin of an Edge TPU model: the same model before
                   Coral's compiler (default: foo.tflite beside
                   foo_edgetpu.tflite). The CPU cannot run edgetpu-custom-op,
                   so when the edgetpu delegate fails to compile and
                   allow_automatic_fallback_on_compilation_error allows a
                   fallback, the twin runs instead (same inputs and outputs,
                   matched by name), and delego says so.
The edgetpu delegate also reads the environment:
  DELEGO_EDGETPU_DEVICE=sim      run it on a simulated Coral USB Accelerator
                   (sim-dfu: one waiting for its firmware); the outputs
                   are the simulator's, and delego says so
  DELEGO_EDGETPU_FIRMWARE=FILE   the firmware for a device that waits for
                   it (1a6e:089a), where coral_settings.firmware_path names
                   none (libedgetpu's apex_latest_single_ep.bin)
  DELEGO_USB_TRACE=FILE          write every USB operation of the Edge TPU
                   driver to FILE, one per line
`

// names returns the delegate names the flags give, lowercased, in order:
// nil when --delegate is absent, empty for "none".
func (f *delegationFlags) names(cmd string) ([]string, bool, error) {
	if len(f.delegates) == 0 {
		return nil, false, nil
	}
	var names []string
	for _, v := range f.delegates {
		for _, n := range strings.Split(v, ",") {
			n = strings.ToLower(strings.TrimSpace(n))
			if err := checkDelegateName(n); err != nil {
				return nil, false, usagef(cmd, "--delegate %q: %v", v, err)
			}
			for _, seen := range names {
				if seen == n {
					return nil, false, usagef(cmd, "--delegate: %q is listed twice", n)
				}
			}
			names = append(names, n)
		}
	}
	if len(names) > 1 {
		for _, n := range names {
			if n == noDelegate {
				return nil, false, usagef(cmd, "--delegate: %q cannot be combined with other delegates", noDelegate)
			}
		}
	}
	if names[0] == noDelegate {
		names = names[:0]
	}
	return names, true, nil
}

// checkDelegateName accepts what can follow "delego-" in a binary name:
// lower-case letters, digits, '-' and '_', starting with a letter or digit.
func checkDelegateName(n string) error {
	if n == "" {
		return errors.New("empty delegate name")
	}
	for i, r := range n {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '_') && i > 0:
		default:
			return fmt.Errorf("delegate name %q: only letters, digits, '-' and '_' (not first)", n)
		}
	}
	return nil
}

// delegation is what the flags chose, ready for core.Options. Close releases
// the delegates.
type delegation struct {
	// Names are the delegates in priority order; empty: CPU kernels only.
	Names     []string
	Delegates []delegate.Delegate
	// Settings are the effective TFLite settings, never nil: the file's (an
	// empty message without --settings) with cpu_settings.num_threads set to
	// Threads, so that the cpu delegate uses the same threads.
	Settings *config.TFLiteSettings
	// Threads: --threads when given, else the settings' positive
	// cpu_settings.num_threads, else 1.
	Threads int
	// Twin is --cpu-twin: core.Options.CPUTwin.
	Twin string
}

// Close closes every delegate.
func (d *delegation) Close() error {
	var errs []error
	for _, dl := range d.Delegates {
		if err := dl.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close delegate %s: %w", dl.Name(), err))
		}
	}
	d.Delegates = nil
	return errors.Join(errs...)
}

// loadSettings reads and checks the --settings file: it prints every
// warning to stderr and fails with the settings delego cannot honour
// without changing the results. No --settings gives an empty TFLiteSettings.
func (f *delegationFlags) loadSettings(stderr io.Writer) (*config.TFLiteSettings, error) {
	if f.settings == "" {
		return &config.TFLiteSettings{}, nil
	}
	s, err := config.Load(f.settings)
	if err != nil {
		return nil, err
	}
	issues := s.Check(config.DefaultCapabilities())
	for _, i := range issues {
		if i.Severity != config.Error {
			fmt.Fprintf(stderr, "delego: %s: %s\n", f.settings, i)
		}
	}
	if err := config.Err(issues); err != nil {
		return nil, fmt.Errorf("%s: %w", f.settings, err)
	}
	return s.TFLite, nil
}

// selection is what the flags and the settings file chose.
type selection struct {
	settings *config.TFLiteSettings // never nil
	names    []string               // in priority order; empty: none
	twin     string                 // --cpu-twin
}

// resolve reads the flags and the settings file, before anything is opened,
// so that mistakes in either surface before the model is read. Settings
// warnings go to stderr.
func (f *delegationFlags) resolve(cmd string, stderr io.Writer) (selection, error) {
	names, given, err := f.names(cmd)
	if err != nil {
		return selection{}, err
	}
	s, err := f.loadSettings(stderr)
	if err != nil {
		return selection{}, err
	}
	if !given {
		if n := delegateNameOf(s.GetDelegate()); n != "" {
			names = []string{n}
		}
	}
	return selection{settings: s, names: names, twin: f.twin}, nil
}

// open opens the selected delegates with open (nil: openDelegate). threads
// is --threads, 0 when not given.
func (s selection) open(ctx context.Context, threads int, open delegateOpener) *delegation {
	if threads < 1 {
		threads = max(1, int(s.settings.GetCpuSettings().GetNumThreads()))
	}
	eff := proto.CloneOf(s.settings)
	if eff.CpuSettings == nil {
		eff.CpuSettings = &config.CPUSettings{}
	}
	eff.CpuSettings.NumThreads = proto.Int32(int32(threads))
	d := &delegation{Names: s.names, Settings: eff, Threads: threads, Twin: s.twin}
	if open == nil {
		open = openDelegate
	}
	for _, n := range s.names {
		d.Delegates = append(d.Delegates, open(ctx, n))
	}
	return d
}

// env is what a command takes from its surroundings; tests replace parts.
type env struct {
	registry *kernels.Registry // the CPU kernels; nil: the built-in ones
	open     delegateOpener    // nil: openDelegate
	usb      edgetpu.Bus       // where "delego devices" looks; nil: libusb
}
