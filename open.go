package delego

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
)

// An Option changes how Open builds the interpreter.
type Option func(*options)

// options are what the Options asked for.
type options struct {
	settings      func(context.Context) (*config.Settings, string, error) // the settings and where they came from; nil: none
	names         []string
	namesGiven    bool
	threads       int
	twin          string
	plugins       Plugins
	checksumFile  string
	watchdog      core.Watchdog
	restarts      core.Restarts
	fallbackNames []string         // WithDefaultDelegates
	opener        Opener           // nil: the plugins
	registry      *kernel.Registry // nil: kernels.Builtins()
	profiler      core.Profiler
	warn          func(error) // nil: warnings are only kept
	// delegateOptions are WithDelegateOption's, in order.
	delegateOptions []delegateOption
}

// WithSettingsFile reads the TFLite acceleration settings from a file: a
// ComputeSettings or a TFLiteSettings (configuration.proto) in JSON or
// binary protobuf, as config.Load reads it. Its
// stable_delegate_loader_settings may name any plugin (delegate_name:
// delego-NAME from the search directories; delegate_path: that binary,
// checked as a found one is), and its delegate_options give that delegate
// key/value options (see WithDelegateOption).
func WithSettingsFile(path string) Option {
	return func(o *options) {
		o.settings = func(ctx context.Context) (*config.Settings, string, error) {
			s, err := config.LoadContext(ctx, path)
			return s, path, err
		}
	}
}

// WithSettingsData reads the settings from memory, JSON or binary protobuf
// told apart by their content.
func WithSettingsData(data []byte) Option {
	return func(o *options) {
		o.settings = func(context.Context) (*config.Settings, string, error) {
			s, err := config.Parse(data, config.FormatAuto)
			return s, "settings", err
		}
	}
}

// WithSettings uses settings the caller already holds.
func WithSettings(s *config.Settings) Option {
	return func(o *options) {
		o.settings = func(context.Context) (*config.Settings, string, error) {
			if s == nil || s.TFLite == nil {
				return nil, "settings", errors.New("no settings given (nil)")
			}
			return s, "settings", nil
		}
	}
}

// WithDelegates runs the nodes each delegate supports on it, the delegates
// in priority order. With no names the model runs on the CPU kernels
// only, whatever the settings say. Without this option the settings pick
// one: by their delegate field, or by stable_delegate_loader_settings,
// which names any plugin (see selected).
func WithDelegates(names ...string) Option {
	return func(o *options) { o.names, o.namesGiven = names, true }
}

// WithDefaultDelegates names the delegates to run when neither
// WithDelegates nor the settings name any (the command line's pipeline
// runs its segments on the Edge TPU so).
func WithDefaultDelegates(names ...string) Option {
	return func(o *options) { o.fallbackNames = slices.Clone(names) }
}

// WithThreads sets how many goroutines a kernel may use; without it, the
// settings' cpu_settings.num_threads, else 1.
func WithThreads(n int) Option { return func(o *options) { o.threads = n } }

// WithCPUTwin names the CPU twin of an Edge TPU model: the same model
// before Coral's compiler, which runs when the edgetpu delegate cannot
// and the fallback settings allow it. Default: foo.tflite beside
// foo_edgetpu.tflite.
func WithCPUTwin(path string) Option { return func(o *options) { o.twin = path } }

// WithPluginDirs sets the directories searched for plugin binaries, in
// order, instead of plugin.SearchDirs() ($DELEGO_PLUGIN_PATH, the
// executable's directory, the user's and the system's plugin folders). No
// directories: no plugin is found.
func WithPluginDirs(dirs ...string) Option {
	return func(o *options) { o.plugins.Dirs = append([]string{}, dirs...) }
}

// WithChecksums runs only plugins whose SHA-256 is pinned in sums.
func WithChecksums(sums *plugin.Checksums) Option {
	return func(o *options) { o.plugins.Checksums, o.checksumFile = sums, "" }
}

// WithChecksumsFile runs only plugins whose SHA-256 is pinned in file
// (lines "HEX  NAME" as sha256sum writes them), read by Open.
func WithChecksumsFile(file string) Option {
	return func(o *options) { o.plugins.Checksums, o.checksumFile = nil, file }
}

// WithStrictChecksums makes a plugin that the checksums refuse (its SHA-256
// is not the pinned one, or it is not listed) an error of Open and Plan,
// whatever the fallback settings say (see Plugins.StrictChecksums). It is
// the command line's --strict-checksums.
func WithStrictChecksums() Option { return func(o *options) { o.plugins.StrictChecksums = true } }

// WithPluginStderr streams each plugin's standard error to w as it comes,
// a whole line per Write after the plugin's name, as in "[xnnpack] ..."
// (see Plugins.Stderr); w must be safe for concurrent use (os.Stderr is).
// Without it a plugin's stderr is hidden, but for the tail that the error
// of a plugin that crashes quotes. It is the command line's -v.
func WithPluginStderr(w io.Writer) Option { return func(o *options) { o.plugins.Stderr = w } }

// WithInsecurePlugins runs the plugins that discovery refuses as insecure
// (see Plugins.AllowInsecure): binaries another user could replace, and
// relative search directories. It is the command line's
// --allow-insecure-plugins.
func WithInsecurePlugins() Option { return func(o *options) { o.plugins.AllowInsecure = true } }

// WithPluginMTLS secures the connection to each plugin with go-plugin's
// automatic mutual TLS.
func WithPluginMTLS() Option { return func(o *options) { o.plugins.MTLS = true } }

// WithWatchdog bounds every call to a delegate (see core.Watchdog), and
// the start of each plugin by its compile limit when w sets one: a plugin
// that hangs past it is killed and its failure goes through the fallback
// settings. Without it, the defaults.
func WithWatchdog(w core.Watchdog) Option { return func(o *options) { o.watchdog = w } }

// WithRestarts says how a partition whose plugin process was lost comes
// back, and how long its restarts pause after failing in a row (see
// core.Restarts). Without it, the defaults.
func WithRestarts(r core.Restarts) Option { return func(o *options) { o.restarts = r } }

// WithOpener makes each delegate with open instead of starting the plugin
// delego-NAME: for delegates that run in process, such as a vendor's
// delegate under test. The interpreter still closes them.
func WithOpener(open Opener) Option { return func(o *options) { o.opener = open } }

// WithKernels runs the CPU's share of the model on the kernels of r (for
// example the built-in ones plus a custom op's) instead of
// kernels.Builtins().
func WithKernels(r *kernel.Registry) Option { return func(o *options) { o.registry = r } }

// WithProfiler tells p how long every node took on each Invoke.
func WithProfiler(p core.Profiler) Option { return func(o *options) { o.profiler = p } }

// WithWarnings calls warn with each warning (a settings field delego
// ignores) as soon as it is found, before the model is read; Warnings
// lists them too.
func WithWarnings(warn func(error)) Option { return func(o *options) { o.warn = warn } }

// newOptions applies opts in order.
func newOptions(opts []Option) *options {
	o := &options{}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// setup is what the options come to before the model is read: the
// settings, the delegates to start, their warnings and how plugins start.
type setup struct {
	settings *config.TFLiteSettings       // never nil
	names    []string                     // in priority order; empty: none
	options  map[string]map[string]string // each delegate's options, by name
	warnings []error
	plugins  Plugins
}

// resolve reads the settings, the delegate names, their options and the
// checksums file, and checks the settings and options against what the
// delegates declare, so that mistakes in any of them surface before the
// model is read. Each warning goes to the warnings callback as it is found.
func (o *options) resolve(ctx context.Context) (*setup, error) {
	read, where, err := o.readSettings(ctx)
	if err != nil {
		return nil, err
	}
	s := read.TFLite
	sel, err := selected(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	names, err := o.delegates(sel.name)
	if err != nil {
		return nil, err
	}
	opts, unused, err := optionsFor(s, sel, names, o.delegateOptions)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var warnings []error
	for _, w := range unused {
		warnings = append(warnings, fmt.Errorf("%s: %w", where, w))
	}
	plugins := o.plugins
	if plugins.StrictChecksums && plugins.Checksums == nil && o.checksumFile == "" {
		return nil, errors.New("strict checksums need checksums to hold the plugins to: give them with --plugin-checksums FILE, or delego.WithChecksums or WithChecksumsFile in Go")
	}
	if o.checksumFile != "" {
		if plugins.Checksums, err = plugin.ReadChecksums(o.checksumFile); err != nil {
			return nil, err
		}
	}
	plugins.StartTimeout = o.watchdog.StartLimit()
	if sel.path != "" {
		plugins.Paths = map[string]string{sel.name: sel.path}
	}
	st := &setup{settings: s, names: names, options: opts, plugins: plugins}
	if o.settings != nil || len(opts) > 0 {
		var given *config.Settings // nil: only options to check
		if o.settings != nil {
			given = read
		}
		issues, err := checkDelegates(ctx, given, names, opts, st.opener(o))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		for _, i := range issues {
			warnings = append(warnings, fmt.Errorf("%s: %s", where, i))
		}
	}
	if o.warn != nil {
		for _, w := range warnings {
			o.warn(w)
		}
	}
	st.warnings = warnings
	return st, nil
}

// opener makes s's delegates: WithOpener's, else its plugins.
func (s *setup) opener(o *options) Opener {
	if o.opener != nil {
		return o.opener
	}
	return s.plugins.Open
}

// readSettings reads the settings and says where they came from: an empty
// TFLiteSettings from "settings" when none were given.
func (o *options) readSettings(ctx context.Context) (*config.Settings, string, error) {
	if o.settings == nil {
		return &config.Settings{TFLite: &config.TFLiteSettings{}}, "settings", nil
	}
	return o.settings(ctx)
}

// delegates are the delegate names to start, checked: those given, else
// the one the settings select (selected: "" for none), else
// WithDefaultDelegates'.
func (o *options) delegates(selected string) ([]string, error) {
	if !o.namesGiven {
		switch {
		case selected != "":
			return []string{selected}, nil
		case o.fallbackNames != nil:
			return slices.Clone(o.fallbackNames), nil
		}
		return nil, nil
	}
	for i, n := range o.names {
		if err := CheckName(n); err != nil {
			return nil, err
		}
		if slices.Contains(o.names[:i], n) {
			return nil, fmt.Errorf("delegate %q is listed twice", n)
		}
	}
	return slices.Clone(o.names), nil
}

// Interpreter is a core.Interpreter that owns the delegates it was opened
// with, and the model when Open loaded it.
type Interpreter struct {
	*core.Interpreter
	model      *model.Model
	ownModel   bool   // Open loaded the model: Close unmaps it
	path       string // the model file, for Report
	delegation *Delegation
	twin       *core.Twin // loaded for the interpreter: Close unmaps it
	warnings   []error
}

// Delegates are the delegates the interpreter runs with, in priority order
// (a delegate that could not be had is a delegate.Unavailable).
func (it *Interpreter) Delegates() *Delegation { return it.delegation }

// Warnings lists what did not stop Open: the settings fields delego
// ignores, and a CPU twin that does not match the model.
func (it *Interpreter) Warnings() []error {
	return append(slices.Clone(it.warnings), it.Interpreter.Warnings()...)
}

// Close closes the interpreter, stops and reaps every plugin Open started
// and unmaps the model.
func (it *Interpreter) Close() error {
	if it.Interpreter == nil {
		return nil
	}
	err := errors.Join(it.Interpreter.Close(), it.delegation.Close(), closeTwin(it.twin))
	if it.ownModel {
		err = errors.Join(err, it.model.Close())
	}
	it.Interpreter = nil
	return err
}

// closeTwin unmaps the CPU twin's model, if one was loaded.
func closeTwin(tw *core.Twin) error {
	if tw == nil || tw.Model == nil {
		return nil
	}
	return tw.Model.Close()
}

// WithDelegateOption gives the delegate called name the option key=value,
// as TFLite's external delegate takes options (the command line's
// --delegate-option NAME:KEY=VALUE). Its partitions compile with it
// (delegate.Partition.Options); it replaces the same key of the settings'
// delegate_options. The delegate must run and must declare the key
// (delegate.Configurable.Options), else Configure fails naming the option,
// the delegate and what it takes.
func WithDelegateOption(name, key, value string) Option {
	return func(o *options) { o.delegateOptions = append(o.delegateOptions, delegateOption{name, key, value}) }
}
