//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/testsupport/shared"
)

// tellTalePlugin writes delego-NAME into a fresh directory that it puts
// first in $DELEGO_PLUGIN_PATH: a shell script, no plugin, that leaves the
// file it returns behind when it runs. It returns the script's path too.
func tellTalePlugin(t *testing.T, name string) (bin, ran string) {
	t.Helper()
	dir := t.TempDir()
	ran = filepath.Join(t.TempDir(), "ran")
	bin = filepath.Join(dir, plugin.Prefix+name)
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ntouch "+ran+"\necho not a plugin\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(plugin.EnvPath, dir)
	return bin, ran
}

// wantRan checks whether the script that leaves ran behind ran.
func wantRan(t *testing.T, ran string, want bool) {
	t.Helper()
	if _, err := os.Stat(ran); (err == nil) != want {
		t.Errorf("the plugin ran: %v, want %v", err == nil, want)
	}
}

// TestPluginsShowsRefused: delego plugins lists a plugin that another user
// could replace with the reason it is refused, and does not start it;
// --allow-insecure-plugins starts it as before.
func TestPluginsShowsRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(t *testing.T, bin string) error
		want  string
	}{
		{"binary 0777", func(t *testing.T, bin string) error { return os.Chmod(bin, 0o777) },
			"it is writable by every user (mode 0777), so any user could replace the plugin"},
		{"directory 0777", func(t *testing.T, bin string) error { return os.Chmod(filepath.Dir(bin), 0o777) },
			"its directory {dir} is writable by every user (mode 0777)"},
		{"binary owned by another user", func(t *testing.T, bin string) error {
			if os.Geteuid() != 0 {
				t.Skipf("giving a file to another user takes root; this test runs as uid %d", os.Geteuid())
			}
			return os.Chown(bin, 65534, -1)
		}, "(uid 65534), who is neither you nor root"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin, ran := tellTalePlugin(t, "bogus")
			if err := c.spoil(t, bin); err != nil {
				t.Fatal(err)
			}
			want := []string{"plugin " + bin + " refused as insecure: ", strings.ReplaceAll(c.want, "{dir}", filepath.Dir(bin)), "--allow-insecure-plugins"}

			code, stdout, stderr := cli(t, "plugins", "--json")
			if code != exitOK {
				t.Fatalf("status %d, stderr %q", code, stderr)
			}
			var r delego.PluginsReport
			decodeJSON(t, []byte(stdout), &r)
			if len(r.Plugins) != 1 || r.Plugins[0].Path != bin || r.Plugins[0].Usable {
				t.Fatalf("report %+v, want %s listed, not usable", r, bin)
			}
			for _, w := range want {
				if !strings.Contains(r.Plugins[0].Error, w) {
					t.Errorf("error %q\ndoes not say %q", r.Plugins[0].Error, w)
				}
			}
			_, stdout, _ = cli(t, "plugins")
			if !strings.Contains(stdout, "bogus  "+bin+"\n  usable    no: "+want[0]) {
				t.Errorf("text:\n%s", stdout)
			}
			wantRan(t, ran, false)

			code, stdout, _ = cli(t, "plugins", "--json", "--allow-insecure-plugins")
			decodeJSON(t, []byte(stdout), &r)
			if code != exitOK || len(r.Plugins) != 1 || !strings.Contains(r.Plugins[0].Error, "not a delego plugin") {
				t.Errorf("--allow-insecure-plugins: status %d, report %+v, want the script started", code, r)
			}
			wantRan(t, ran, true)
		})
	}
}

// TestPluginsRefusesRelativeDir: "." in $DELEGO_PLUGIN_PATH fails the
// search, naming the entry, unless --allow-insecure-plugins.
func TestPluginsRefusesRelativeDir(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv(plugin.EnvPath, ".")
	code, _, stderr := cli(t, "plugins")
	if code != exitError || !strings.Contains(stderr, `plugin search directory "." refused as insecure: it is relative`) ||
		!strings.Contains(stderr, "use an absolute path") || !strings.Contains(stderr, "--allow-insecure-plugins") {
		t.Errorf("status %d, stderr %q", code, stderr)
	}
	if code, _, stderr := cli(t, "plugins", "--allow-insecure-plugins"); code != exitOK {
		t.Errorf("--allow-insecure-plugins: status %d, stderr %q", code, stderr)
	}
}

// TestRunRefusesInsecureCPU: a delego-cpu that every user could replace
// does not run, and neither do delego's kernels in its place unless the
// fallback settings allow it, saying why; --allow-insecure-plugins starts
// it as before.
func TestRunRefusesInsecureCPU(t *testing.T) {
	bin, ran := tellTalePlugin(t, "cpu")
	if err := os.Chmod(bin, 0o777); err != nil {
		t.Fatal(err)
	}
	model := shared.Model(t, "split_concat.tflite")
	inputs := inputArgs(t, model)
	run := func(extra ...string) error {
		var stdout, stderr bytes.Buffer
		return runCmd(context.Background(), append(append([]string{model, "--delegate", "cpu"}, inputs...), extra...), &stdout, &stderr)
	}

	err := run()
	if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Stage != delegate.StageCompile || !errors.Is(err, plugin.ErrInsecure) ||
		!strings.Contains(err.Error(), bin+" refused as insecure") || !strings.Contains(err.Error(), "--allow-insecure-plugins") {
		t.Errorf("err = %v, want a compile-stage refusal of %s", err, bin)
	}
	allow := settingsFile(t, `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	_, errOut := runOutput(t, model, inputs, "--delegate", "cpu", "--settings", allow)
	if !strings.Contains(errOut, "cpu failed to compile") || !strings.Contains(errOut, "refused as insecure") {
		t.Errorf("fallback: stderr %q, want the refusal", errOut)
	}
	wantRan(t, ran, false)

	if err := run("--allow-insecure-plugins"); !errors.Is(err, plugin.ErrIncompatible) {
		t.Errorf("--allow-insecure-plugins: %v, want the script started and failing as no plugin", err)
	}
	wantRan(t, ran, true)
}
