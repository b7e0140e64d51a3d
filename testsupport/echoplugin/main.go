// Command echoplugin is a delego plugin for the tests of settings and
// options across the process boundary: delego's CPU kernels under the name
// "echo", declaring (delegate.Configurable) that it honours
// hexagon_settings.debug_level and takes the option "say". Given "say",
// Compile fails with an error that repeats every option it got, so that a
// test sees what reached the plugin process.
//
// It is test support: only tests build it (as delego-echo), and
// production code never imports anything under testsupport/.
package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/cpu"
)

func main() { plugin.Serve(&echo{Delegate: cpu.New()}) }

// echo is the cpu delegate, named echo, declaring what it reads.
type echo struct{ *cpu.Delegate }

func (*echo) Name() string { return "echo" }

// Honours implements delegate.Configurable.
func (*echo) Honours() []string { return []string{"hexagon_settings.debug_level"} }

// Options implements delegate.Configurable.
func (*echo) Options() []delegate.Option {
	return []delegate.Option{{Name: "say", Description: "makes Compile fail, repeating the options it got"}}
}

// Compile fails with the options it got when "say" is among them.
func (e *echo) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	if _, ok := p.Options["say"]; !ok {
		return e.Delegate.Compile(ctx, p)
	}
	var got []string
	for _, k := range slices.Sorted(maps.Keys(p.Options)) {
		got = append(got, k+"="+p.Options[k])
	}
	return nil, fmt.Errorf("echo: compiled with options %s", strings.Join(got, ", "))
}
