// Package delegates is the delegate side of delego's go-tflite
// compatibility layer (package compat/tflite): where go-tflite hands a C
// TfLiteDelegate to the interpreter, a Delegater here is a delego plugin
// process (delegate/plugin) and the TFLite settings it reads.
//
// Packages edgetpu and xnnpack below make Delegaters as go-tflite's
// packages of the same names do.
package delegates

import (
	"context"
	"errors"
	"fmt"

	"github.com/delego/delego"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
)

// Delegater is a delegate that tflite.InterpreterOptions.AddDelegate
// accepts. go-tflite's has Delete and Ptr (the C delegate); delego's has
// Delete and what the interpreter needs instead of the pointer: the
// delegate and its settings.
type Delegater interface {
	// Delete stops the delegate (for a plugin, its process). Delete it
	// after every interpreter that uses it.
	Delete()
	// Delegate is the delegate the interpreter runs partitions on.
	Delegate() delegate.Delegate
	// Configure writes the delegate's options into s, the settings of the
	// interpreter that uses it.
	Configure(s *config.TFLiteSettings)
}

// Plugin is a Delegater served by a delego plugin binary, delego-NAME.
type Plugin struct {
	client    *plugin.Client
	configure func(*config.TFLiteSettings)
}

// Open starts the plugin delego-name, found as delego's command line finds
// it (plugin.SearchDirs: $DELEGO_PLUGIN_PATH, beside the running program,
// then the user's and the system's plugin folders), and refused (an error
// wrapping plugin.ErrInsecure) when another user could replace it.
// configure, which may be nil, sets the delegate's options in the
// interpreter's settings. A plugin that says it cannot run here is an
// error, as libtensorflowlite's delegates fail to be created without their
// device.
func Open(name string, configure func(*config.TFLiteSettings)) (*Plugin, error) {
	// delego's own search; go-tflite's API has no checksums, mTLS or
	// insecure plugins to ask for, and its callers want an error, not the
	// unavailable delegate Plugins.Open gives.
	path, err := delego.Plugins{}.Find(name)
	switch {
	case errors.Is(err, delegate.ErrUnknownDelegate):
		return nil, fmt.Errorf("delegate %s: %w (build it with go build ./plugins/%s/cmd/delego-%s, then put it on $%s)",
			name, err, name, name, plugin.EnvPath)
	case err != nil:
		return nil, fmt.Errorf("delegate %s: %w", name, err)
	}
	c, err := plugin.Open(context.Background(), path, nil)
	if err != nil {
		return nil, fmt.Errorf("delegate %s: %w", name, err)
	}
	if info := c.Info(); !info.Usable {
		c.Close()
		return nil, fmt.Errorf("delegate %s cannot run here: %s", name, info.Reason)
	}
	return &Plugin{client: c, configure: configure}, nil
}

// Delete stops the plugin process and waits for it.
func (p *Plugin) Delete() {
	if p != nil && p.client != nil {
		p.client.Close()
	}
}

// Delegate returns the plugin as a delegate.
func (p *Plugin) Delegate() delegate.Delegate { return p.client }

// Configure sets the plugin's options in s.
func (p *Plugin) Configure(s *config.TFLiteSettings) {
	if p.configure != nil {
		p.configure(s)
	}
}

// Client is the plugin's client: its process, what it declared.
func (p *Plugin) Client() *plugin.Client { return p.client }
