package testdelegates

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/delego/delego/delegate"
)

// Configured wraps a delegate with a declaration of the settings it
// honours and the options it takes (delegate.Configurable), and records
// the options each Compile is given.
type Configured struct {
	delegate.Delegate
	honours []string
	takes   []delegate.Option

	mu       sync.Mutex
	compiled []map[string]string
}

// NewConfigured wraps d, declaring honours and takes.
func NewConfigured(d delegate.Delegate, honours []string, takes ...delegate.Option) *Configured {
	return &Configured{Delegate: d, honours: honours, takes: takes}
}

// Honours implements delegate.Configurable.
func (c *Configured) Honours() []string { return slices.Clone(c.honours) }

// Options implements delegate.Configurable.
func (c *Configured) Options() []delegate.Option { return slices.Clone(c.takes) }

// Compile implements delegate.Delegate, recording p.Options.
func (c *Configured) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	c.mu.Lock()
	c.compiled = append(c.compiled, maps.Clone(p.Options))
	c.mu.Unlock()
	return c.Delegate.Compile(ctx, p)
}

// Compiled lists the options of every Compile, in order.
func (c *Configured) Compiled() []map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.compiled)
}
