package main

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/testsupport/shared"
	"github.com/delego/delego/testsupport/testdelegates"
)

// configuredEnv opens every delegate as delego's CPU kernels taking the
// options cache and cores, and keeps what it opened.
type configuredEnv struct {
	mu     sync.Mutex
	opened []*testdelegates.Configured
}

func (c *configuredEnv) env() env {
	return env{open: func(_ context.Context, name string) delegate.Delegate {
		c.mu.Lock()
		defer c.mu.Unlock()
		d := testdelegates.NewConfigured(cpu.New(), nil, delegate.Option{Name: "cache", Description: "a directory"}, delegate.Option{Name: "cores"})
		c.opened = append(c.opened, d)
		return d
	}}
}

// TestDelegateOptionFlag: --delegate-option reaches the delegate the
// settings name with stable_delegate_loader_settings, beside the
// settings' delegate_options, in run and plan; bad values are usage
// errors that quote them.
func TestDelegateOptionFlag(t *testing.T) {
	modelPath := shared.Model(t, "split_concat.tflite")
	inputs := inputArgs(t, modelPath)
	s := settingsFile(t, `{"stable_delegate_loader_settings": {"delegate_name": "mytpu"}, "delegate_options": {"cache": "/var/cache/tpu"}}`)
	want := map[string]string{"cache": "/var/cache/tpu", "cores": "2=two"}

	c := &configuredEnv{}
	args := append([]string{modelPath, "--output", filepath.Join(t.TempDir(), "out.raw"), "--settings", s, "--delegate-option", "MyTPU:cores=2=two"}, inputs...)
	var stdout, stderr bytes.Buffer
	if err := runWith(context.Background(), args, &stdout, &stderr, c.env()); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if got := c.opened[len(c.opened)-1].Compiled(); len(got) != 1 || !maps.Equal(got[0], want) {
		t.Errorf("run: Compile got %v, want %v once", got, want)
	}

	c = &configuredEnv{}
	if _, errOut, err := plan(t, c.env(), modelPath, "--settings", s, "--delegate-option", "mytpu:cores=2=two"); err != nil {
		t.Fatalf("plan: %v\n%s", err, errOut)
	}
	if got := c.opened[len(c.opened)-1].Compiled(); len(got) != 1 || !maps.Equal(got[0], want) {
		t.Errorf("plan: Compile got %v, want %v once", got, want)
	}

	for _, c := range []struct {
		value string
		want  []string
	}{
		{"mytpu", []string{`--delegate-option "mytpu"`, "NAME:KEY=VALUE"}},
		{"mytpu:=1", []string{`--delegate-option "mytpu:=1"`, "the option's key"}},
		{"My TPU:cores=1", []string{`--delegate-option "My TPU:cores=1"`, "only letters"}},
		{"mytpu:speed=9", []string{"mytpu:speed", "the delegate mytpu takes no such option; it takes cache (a directory), cores"}},
		{"gpu:cores=1", []string{"gpu:cores", "the delegate gpu does not run (the delegates chosen: mytpu)"}},
	} {
		_, _, err := plan(t, (&configuredEnv{}).env(), modelPath, "--settings", s, "--delegate-option", c.value)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("--delegate-option %q: %v, want an error with %q", c.value, err, w)
			}
		}
	}
}
