package main

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
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

// TestTuneSettingsSelectThePlugin: tune's settings.json selects a winner the
// delegate enum cannot name by stable_delegate_loader_settings, with its
// --delegate-option values, and "delego run --settings" runs it so.
func TestTuneSettingsSelectThePlugin(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.raw")
	if err := os.WriteFile(in, shared.ReadGolden(t, gc.InputFile), 0o644); err != nil {
		t.Fatal(err)
	}
	modelPath, out := shared.Model(t, gc.Model), filepath.Join(dir, "out")
	c := &configuredEnv{}
	args := []string{modelPath, "--delegate", "mytpu", "--delegate-option", "mytpu:cores=2", "--input", in, "--out", out, "--runs", "1"}
	var stdout, stderr bytes.Buffer
	if err := tuneWith(t.Context(), args, &stdout, &stderr, c.env()); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
	}
	settings := filepath.Join(out, "settings.json")
	s, err := config.Load(settings)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cores": "2"}
	if l := s.TFLite.GetStableDelegateLoaderSettings(); s.TFLite.Delegate != nil || l.GetDelegateName() != "mytpu" || !maps.Equal(s.TFLite.GetDelegateOptions(), want) {
		t.Fatalf("settings.json holds %v, want stable_delegate_loader_settings naming mytpu and its options", s.TFLite)
	}

	c = &configuredEnv{}
	stdout.Reset()
	stderr.Reset()
	runArgs := []string{modelPath, "--input", in, "--output", filepath.Join(dir, "run.raw"), "--settings", settings}
	if err := runWith(t.Context(), runArgs, &stdout, &stderr, c.env()); err != nil || stderr.Len() != 0 {
		t.Fatalf("delego run --settings %s: %v\n%s", settings, err, stderr.String())
	}
	if got := c.opened[len(c.opened)-1].Compiled(); len(got) != 1 || !maps.Equal(got[0], want) {
		t.Errorf("run: Compile got %v, want %v", got, want)
	}
}
