package delego

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"google.golang.org/protobuf/proto"
)

// Opener makes the delegate called name. It never fails: a delegate that
// cannot be had is a delegate.Unavailable, whose error the interpreter
// treats as a compilation error subject to the fallback settings.
type Opener func(ctx context.Context, name string) delegate.Delegate

// Plugins says where delegate plugins are found and how they start.
type Plugins struct {
	// Dirs are searched in order; nil: plugin.SearchDirs().
	Dirs []string
	// Paths name plugin binaries directly, by delegate name (the settings'
	// stable_delegate_loader_settings.delegate_path): such a delegate is
	// not searched for, and its binary is held to the same checks.
	Paths map[string]string
	// Checksums, when set, pin each plugin's SHA-256: a plugin not listed,
	// or whose sum differs, is not started.
	Checksums *plugin.Checksums
	// StrictChecksums makes a plugin that pinning refuses (its SHA-256 is
	// not the pinned one, or Checksums does not list it) an error of Open
	// and Plan, whatever the fallback settings say: a binary that is not
	// the one pinned is a matter of security, not a fault for the CPU to
	// cover. Without it, such a plugin is unavailable, a compilation error
	// that the fallback settings decide.
	StrictChecksums bool
	// MTLS secures the connection with go-plugin's automatic mutual TLS.
	MTLS bool
	// Stderr, when set, receives each plugin's standard error as it
	// comes, a whole line per Write after the plugin's name, as in
	// "[xnnpack] ..." (see plugin.Options.Stderr); it must be safe for
	// concurrent use (os.Stderr is). Nil hides it: only its tail is kept,
	// for the error of a plugin that crashes.
	Stderr io.Writer
	// AllowInsecure runs the plugins that plugin.Search refuses: binaries
	// another user could replace (written by every user, owned by someone
	// other than the user running delego and root, or in such a
	// directory) and relative search directories.
	AllowInsecure bool
	// StartTimeout bounds each plugin's start (process, handshake,
	// description); 0 means plugin.Options' default. The package's Open
	// sets it to its watchdog's limit (core.Watchdog.StartLimit), so that a
	// plugin stopped as it starts holds the caller up no longer than any
	// other delegate call.
	StartTimeout time.Duration
}

// withOptOut adds to err, when it refuses a plugin as insecure, how to
// skip the check; other errors (nil too) it returns as they are.
func withOptOut(err error) error {
	if !errors.Is(err, plugin.ErrInsecure) {
		return err
	}
	return fmt.Errorf("%w; to skip this check, allow insecure plugins: --allow-insecure-plugins on the command line, delego.WithInsecurePlugins() in Go", err)
}

// Open is an Opener: the plugin delego-NAME when the search directories
// hold one. An accelerator runs only as a plugin process: without its
// binary, a delegate is unavailable and declares nothing (what it would
// declare is its plugin's to say: a plan shows no partition for it), except
// "cpu", delego's own kernels, which then run in process (the same bytes);
// for "edgetpu" the error says how to install delego-edgetpu. A
// plugin that is refused as insecure (see AllowInsecure), or that does not
// start (wrong protocol, checksum mismatch, not listed in the checksums),
// is unavailable too: neither falls back in process, so the user learns
// why the binary they installed did not run. A delegate whose binary Paths
// names is that binary or unavailable, "cpu" too.
func (p Plugins) Open(ctx context.Context, name string) delegate.Delegate {
	path, err := p.find(name)
	switch _, named := p.Paths[name]; {
	case err != nil && named: // the binary named is the one to run, or none
		return delegate.Unavailable(name, withOptOut(err))
	case err != nil:
		return withoutPlugin(name, err)
	}
	opts, err := p.Options(path)
	if err != nil {
		return delegate.Unavailable(name, err)
	}
	c, err := plugin.Open(ctx, path, opts)
	if err != nil {
		return delegate.Unavailable(name, err)
	}
	return c
}

// edgetpuCommand is the package of the delego-edgetpu plugin binary.
const edgetpuCommand = "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu"

// withoutPlugin is the delegate called name when Find gave err instead of
// a plugin binary: delego's kernels for a missing delego-cpu, else
// unavailable, saying why (and, for a missing delego-edgetpu, how to
// install it).
func withoutPlugin(name string, err error) delegate.Delegate {
	switch {
	case errors.Is(err, plugin.ErrInsecure):
		err = withOptOut(err)
	case name == cpu.Name:
		return cpu.New()
	case name == edgetpuinfo.Name:
		err = fmt.Errorf("%w; install it in one of them: go install %s@latest, or from delego's source: go build -o bin/ ./...", err, edgetpuCommand)
	default:
		err = fmt.Errorf("%w (built in: %s)", err, cpu.Name)
	}
	return delegate.Unavailable(name, err)
}

// checkPinned returns, with StrictChecksums, the error of the first of ds
// that pinning refused; nil otherwise.
func (p Plugins) checkPinned(ds []delegate.Delegate) error {
	if !p.StrictChecksums {
		return nil
	}
	for _, d := range ds {
		if err := delegate.WhyUnavailable(d); errors.Is(err, plugin.ErrChecksum) {
			return fmt.Errorf("delegate %s: %w (strict checksums: no fallback)", d.Name(), err)
		}
	}
	return nil
}

// Discover lists the plugin binaries in the search directories and the
// files named like one that it skipped (see plugin.Search.List); a refused
// binary says how to run it anyway.
func (p Plugins) Discover() (plugin.Listing, error) {
	l, err := p.Search().List()
	if err != nil {
		return plugin.Listing{}, withOptOut(err)
	}
	for i := range l.Found {
		l.Found[i].Refused = withOptOut(l.Found[i].Refused)
	}
	return l, nil
}

// Find is the path of the plugin binary delego-NAME in p's search
// directories (or the one Paths names for it), refused (an error wrapping
// plugin.ErrInsecure, which says how to run it anyway) when another user
// could replace it.
func (p Plugins) Find(name string) (string, error) {
	path, err := p.find(name)
	return path, withOptOut(err)
}

// find is Find without the opt-out: the binary Paths names for name,
// vetted, else the one the search directories hold.
func (p Plugins) find(name string) (string, error) {
	if path, ok := p.Paths[name]; ok {
		return p.Search().Vet(path)
	}
	return p.Search().Find(name)
}

// Search is where p looks for plugins: Dirs, or plugin.SearchDirs(), with
// its trust rules.
func (p Plugins) Search() plugin.Search {
	dirs := p.Dirs
	if dirs == nil {
		dirs = plugin.SearchDirs()
	}
	return plugin.Search{Dirs: dirs, AllowInsecure: p.AllowInsecure}
}

// Options are the plugin options for the binary at path: its pinned
// checksum, if any, mTLS, the start timeout and where its stderr goes.
func (p Plugins) Options(path string) (*plugin.Options, error) {
	opts := &plugin.Options{AutoMTLS: p.MTLS, StartTimeout: p.StartTimeout, Stderr: p.Stderr}
	if p.Checksums != nil {
		sum, err := p.Checksums.For(path)
		if err != nil {
			return nil, err
		}
		opts.Checksum = sum
	}
	return opts, nil
}

// CheckName accepts what can follow "delego-" in a plugin binary's name
// (see plugin.CheckName).
func CheckName(n string) error { return plugin.CheckName(n) }

// delegateName is the delegate name TFLiteSettings.delegate selects, or ""
// for NONE: CPU kernels only.
func delegateName(d config.Delegate) string {
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

// Delegation is a set of started delegates and the settings they run
// with. Close releases them.
type Delegation struct {
	// Names are the delegates in priority order; empty: CPU kernels only.
	Names []string
	// Delegates are what startDelegates opened for Names, in the same order.
	Delegates []delegate.Delegate
	// Settings are the effective TFLite settings, never nil: the given
	// ones with cpu_settings.num_threads set to Threads, so that the cpu
	// delegate uses the same threads.
	Settings *config.TFLiteSettings
	// Threads is the kernels' thread count.
	Threads int
	// DelegateOptions are the key/value options of each delegate, by its
	// name in Names (delegate.Partition.Options).
	DelegateOptions map[string]map[string]string
}

// startDelegates opens the delegates called names with open, in priority
// order, to run with their options and settings s (nil: none). threads < 1
// takes s's positive cpu_settings.num_threads, else 1.
func startDelegates(ctx context.Context, names []string, options map[string]map[string]string, s *config.TFLiteSettings, threads int, open Opener) *Delegation {
	if threads < 1 {
		threads = max(1, int(s.GetCpuSettings().GetNumThreads()))
	}
	eff := &config.TFLiteSettings{}
	if s != nil {
		eff = proto.CloneOf(s)
	}
	if eff.CpuSettings == nil {
		eff.CpuSettings = &config.CPUSettings{}
	}
	eff.CpuSettings.NumThreads = proto.Int32(int32(threads))
	d := &Delegation{Names: names, Settings: eff, Threads: threads, DelegateOptions: options}
	for _, n := range names {
		d.Delegates = append(d.Delegates, open(ctx, n))
	}
	return d
}

// Options are the core.Options that run the model on d's delegates, each
// with its options; the caller adds the rest (Twin, Watchdog, Restarts,
// Registry).
func (d *Delegation) Options() core.Options {
	byName := map[string]map[string]string{}
	for i, n := range d.Names {
		if opts := d.DelegateOptions[n]; opts != nil && i < len(d.Delegates) {
			byName[d.Delegates[i].Name()] = opts
		}
	}
	return core.Options{Threads: d.Threads, Delegates: d.Delegates, Settings: d.Settings, DelegateOptions: byName}
}

// Close closes every delegate: a plugin's process is stopped and reaped.
func (d *Delegation) Close() error {
	var errs []error
	for _, dl := range d.Delegates {
		if err := dl.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close delegate %s: %w", dl.Name(), err))
		}
	}
	d.Delegates = nil
	return errors.Join(errs...)
}

// twinFor is the CPU twin of the model at modelPath: twin when given, else
// Coral's foo.tflite beside foo_edgetpu.tflite; nil for other models. It
// is loaded now, so running the model opens no file; one that cannot be
// loaded is an error only if it is needed.
func twinFor(modelPath, twin string) *core.Twin {
	if twin == "" {
		twin = edgetpuinfo.TwinPath(modelPath)
	}
	if twin == "" {
		return nil
	}
	return core.LoadTwin(twin)
}
