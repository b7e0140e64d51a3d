package delego

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
)

// This file is how settings choose and configure delegates: the delegate
// a TFLiteSettings selects (its delegate enum, or TFLite's
// stable_delegate_loader_settings, which names any plugin), the key/value
// options each delegate is given (the settings' delegate_options and
// WithDelegateOption), and the check of both against what the delegates
// themselves declare (delegate.Configurable).

// loaderField is where TFLite names a delegate by string.
const loaderField = "stable_delegate_loader_settings"

// selection is the delegate a TFLiteSettings selects.
type selection struct {
	name string // "": none (the CPU kernels)
	path string // the plugin binary delegate_path names; "": searched by name
}

// selected is the delegate s selects: the one its delegate enum names, or
// the plugin its stable_delegate_loader_settings names (delegate_name, the
// plugin delego-NAME; delegate_path, a binary, named delegate_name or by
// its file name delego-NAME). Both may be set only when they agree: then
// delegate_name, if given, is the enum's delegate, and delegate_path says
// where its binary is. Anything else is an error that names both.
func selected(s *config.TFLiteSettings) (selection, error) {
	byEnum := delegateName(s.GetDelegate())
	l := s.GetStableDelegateLoaderSettings()
	if l == nil {
		return selection{name: byEnum}, nil
	}
	name, path := l.GetDelegateName(), l.GetDelegatePath()
	switch {
	case name == "" && path == "":
		return selection{}, fmt.Errorf("%s names no delegate: give delegate_name (the plugin delego-NAME) or delegate_path (its binary)", loaderField)
	case name != "":
		if err := CheckName(name); err != nil {
			return selection{}, fmt.Errorf("%s.delegate_name: %w", loaderField, err)
		}
	}
	if byEnum != "" {
		if name != "" && name != byEnum {
			return selection{}, fmt.Errorf("the settings select two delegates: delegate %s (the delegate %s) and %s.delegate_name %q; keep one, or name the same delegate in both",
				s.GetDelegate(), byEnum, loaderField, name)
		}
		return selection{name: byEnum, path: path}, nil
	}
	if name == "" {
		base := filepath.Base(path)
		name, _ = strings.CutPrefix(base, plugin.Prefix)
		if name == base || CheckName(name) != nil {
			return selection{}, fmt.Errorf("%s.delegate_path %q: its file is not named %sNAME, so give the delegate's name in delegate_name", loaderField, path, plugin.Prefix)
		}
	}
	return selection{name: name, path: path}, nil
}

// delegateOption is one WithDelegateOption.
type delegateOption struct{ name, key, value string }

// optionsFor are the options of each delegate to run, by name: the
// settings' delegate_options for the delegate they select (sel), then the
// caller's (given). Options in the settings for a delegate that does not run (the
// caller named others) come back as a warning; the caller's options for
// one are an error.
func optionsFor(s *config.TFLiteSettings, sel selection, names []string, given []delegateOption) (map[string]map[string]string, []error, error) {
	out := map[string]map[string]string{}
	var warnings []error
	if file := s.GetDelegateOptions(); len(file) > 0 {
		switch {
		case sel.name == "":
			return nil, nil, errors.New("delegate_options are given, but the settings select no delegate to take them (set delegate or stable_delegate_loader_settings)")
		case slices.Contains(names, sel.name):
			out[sel.name] = maps.Clone(file)
		default:
			warnings = append(warnings, fmt.Errorf("warning: delegate_options are for the delegate %s, which does not run (the delegates chosen: %s)", sel.name, namesText(names)))
		}
	}
	for _, d := range given {
		if err := CheckName(d.name); err != nil {
			return nil, nil, fmt.Errorf("delegate option %s:%s: %w", d.name, d.key, err)
		}
		if d.key == "" {
			return nil, nil, fmt.Errorf("delegate option for %s: empty key", d.name)
		}
		if !slices.Contains(names, d.name) {
			return nil, nil, fmt.Errorf("delegate option %s:%s: the delegate %s does not run (the delegates chosen: %s)", d.name, d.key, d.name, namesText(names))
		}
		if out[d.name] == nil {
			out[d.name] = map[string]string{}
		}
		out[d.name][d.key] = d.value
	}
	return out, warnings, nil
}

// namesText lists delegate names for a message; "none" for none.
func namesText(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// checkDelegates opens each delegate of names with open, as an interpreter
// would, reads what it declares (delegate.Configurable) and closes it
// again; then it checks s (nil: no settings) against what the host and
// those delegates honour (config.Check), and opts against the options each
// takes. It returns the settings' warnings, and an error for a setting
// whose ignoring would change results or an option its delegate does not
// take. A delegate that cannot be had runs nothing, so what it would read
// does not matter (see config.Capabilities.Unavailable), and its options
// are not checked (its own error says why it is missing).
// One that runs but declares nothing (a plugin built before
// delegate.Configurable) may read any setting (see
// config.Capabilities.Undeclared) and takes no options. When the host
// honours every setting given and there are no options, no delegate is
// opened: nothing it declares could change the outcome.
func checkDelegates(ctx context.Context, s *config.Settings, names []string, opts map[string]map[string]string, open Opener) ([]config.Issue, error) {
	caps := config.HostCapabilities()
	if len(opts) == 0 && (s == nil || len(s.Check(caps)) == 0) {
		return nil, nil // the host honours all: no declaration could change that
	}
	var errs []error
	for _, n := range names {
		d := open(ctx, n)
		c, declares := declaration(d)
		switch {
		case delegate.WhyUnavailable(d) != nil:
			caps = caps.WithUnavailable(n)
		case declares:
			caps = caps.With(c.Honours()...)
			errs = append(errs, checkOptions(n, opts[n], c.Options(), true))
		default:
			caps = caps.WithUndeclared(n)
			errs = append(errs, checkOptions(n, opts[n], nil, false))
		}
		if err := d.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close delegate %s after reading what it declares: %w", n, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, nil
	}
	issues := s.Check(caps)
	var warnings []config.Issue
	for _, i := range issues {
		if i.Severity != config.Error {
			warnings = append(warnings, i)
		}
	}
	return warnings, config.Err(issues)
}

// declaration is what d declares of the settings it reads and the options
// it takes; ok is false when it declares nothing: it is not a
// delegate.Configurable, or it is one whose DeclaresSettings method says
// that it had nothing to declare (a plugin client, always Configurable,
// whose plugin speaks protocol 1 or declares nothing).
func declaration(d delegate.Delegate) (c delegate.Configurable, ok bool) {
	c, ok = d.(delegate.Configurable)
	if u, may := d.(interface{ DeclaresSettings() bool }); ok && may && !u.DeclaresSettings() {
		return nil, false
	}
	return c, ok
}

// checkOptions says which of given the delegate called name does not take
// (takes, which it declared or, when declared is false, could not).
func checkOptions(name string, given map[string]string, takes []delegate.Option, declared bool) error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(given)) {
		if slices.ContainsFunc(takes, func(o delegate.Option) bool { return o.Name == k }) {
			continue
		}
		errs = append(errs, fmt.Errorf("delegate option %s:%s: the delegate %s %s", name, k, name, takesText(takes, declared)))
	}
	return errors.Join(errs...)
}

// takesText says which options a delegate takes, for an error.
func takesText(takes []delegate.Option, declared bool) string {
	switch {
	case !declared:
		return "does not declare the options it takes (a plugin built before delegate.Configurable), so it can be given none"
	case len(takes) == 0:
		return "takes no options"
	}
	var b strings.Builder
	b.WriteString("takes no such option; it takes ")
	for i, o := range takes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(o.Name)
		if o.Description != "" {
			b.WriteString(" (" + o.Description + ")")
		}
	}
	return b.String()
}
