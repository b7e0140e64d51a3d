package delego

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"google.golang.org/protobuf/proto"
)

// A Config is a set of Options resolved: the settings read and checked,
// the delegates named, the plugins' checksums read. Resolving them first
// reports every mistake in them before a model is read. One Config opens
// any number of interpreters, each with delegates of its own.
type Config struct {
	o *options
	s *setup
}

// Configure resolves opts. Settings and delegate options are checked
// against what each delegate declares (delegate.Configurable): to learn
// it, Configure starts each delegate once and stops it again, when a
// setting the host does not honour itself, or an option, is given. Each
// warning (a settings field nothing honours) goes to the WithWarnings
// callback as it is found.
func Configure(ctx context.Context, opts ...Option) (*Config, error) {
	o := newOptions(opts)
	s, err := o.resolve(ctx)
	if err != nil {
		return nil, err
	}
	return &Config{o: o, s: s}, nil
}

// Delegates are the delegates the Config starts, in priority order
// (empty: the CPU kernels only).
func (c *Config) Delegates() []string { return slices.Clone(c.s.names) }

// Open loads the model at path, starts its delegates and builds an
// interpreter with its tensors allocated, ready for its inputs. The
// caller must Close the interpreter, which stops every plugin it started
// and unmaps the model.
func Open(ctx context.Context, path string, opts ...Option) (*Interpreter, error) {
	c, err := Configure(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return c.Open(ctx, path)
}

// Open is the package's Open with c's options.
func (c *Config) Open(ctx context.Context, path string) (*Interpreter, error) {
	m, err := model.LoadContext(ctx, path)
	if err != nil {
		return nil, err
	}
	it, err := c.OpenModel(ctx, m)
	if err != nil {
		return nil, errors.Join(err, m.Close())
	}
	it.ownModel = true
	return it, nil
}

// OpenModel is Open for a model the caller has loaded already: the caller
// keeps m, and closes it after the interpreter. The file m was loaded from
// (m.Path) names it in messages and locates its CPU twin.
func (c *Config) OpenModel(ctx context.Context, m *model.Model) (*Interpreter, error) {
	path := m.Path()
	d, copts, err := c.start(ctx, c.s, path)
	if err != nil {
		return nil, err
	}
	it, err := core.NewInterpreterContext(ctx, m, &copts)
	if err != nil {
		err = explainUnsupported(m, path, err)
	} else if err = it.AllocateTensors(); err != nil {
		err = errors.Join(fmt.Errorf("allocate tensors: %w", err), it.Close())
	}
	if err != nil {
		return nil, errors.Join(err, d.Close(), closeTwin(copts.Twin))
	}
	return &Interpreter{Interpreter: it, model: m, path: path, delegation: d, twin: copts.Twin, warnings: c.s.warnings}, nil
}

// Settings are the TFLite settings the Config's interpreters run with (a
// copy; never nil; empty when none were given).
func (c *Config) Settings() *config.TFLiteSettings { return proto.CloneOf(c.s.settings) }

// DelegateOptions are the key/value options of each delegate the Config
// starts, by name (a copy): the settings' delegate_options and
// WithDelegateOption's.
func (c *Config) DelegateOptions() map[string]map[string]string {
	out := make(map[string]map[string]string, len(c.s.options))
	for n, o := range c.s.options {
		out[n] = maps.Clone(o)
	}
	return out
}

// Opener makes a delegate by name as the Config's interpreters get theirs:
// WithOpener's, else the plugin delego-NAME, started within the watchdog's
// limit (see Plugins.Open). The caller closes what it makes.
func (c *Config) Opener() Opener {
	return c.s.opener(c.o)
}

// start opens the delegates of s, in priority order, for the model at path
// and returns them with the core.Options that run the model on them: the
// kernels, the profiler, the watchdog, the restarts and the CPU twin.
// The caller closes the Delegation. With strict checksums, a plugin that
// pinning refused is an error here, and nothing is left open.
func (c *Config) start(ctx context.Context, s *setup, path string) (*Delegation, core.Options, error) {
	d := startDelegates(ctx, s.names, s.options, s.settings, c.o.threads, c.Opener())
	if err := s.plugins.checkPinned(d.Delegates); err != nil {
		return nil, core.Options{}, errors.Join(err, d.Close())
	}
	copts := d.Options()
	copts.Registry, copts.Profiler = c.o.registry, c.o.profiler
	copts.Twin, copts.Watchdog, copts.Restarts = twinFor(path, c.o.twin), c.o.watchdog, c.o.restarts
	return d, copts, nil
}

// OnSettings is c with its interpreters run on settings s instead (a
// pipeline's segment on a device of its own, say); the delegates and
// every other option stay c's.
func (c *Config) OnSettings(s *config.TFLiteSettings) *Config {
	setup := *c.s
	setup.settings = proto.CloneOf(s)
	return &Config{o: c.o, s: &setup}
}
