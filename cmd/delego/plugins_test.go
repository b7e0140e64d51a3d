package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// The real plugins are built and run by the integration tests; here a
// shell script stands in for a binary that is not a delego plugin.

// bogusPlugin writes an executable delego-bogus into a fresh directory,
// puts that directory first in $DELEGO_PLUGIN_PATH and returns its path.
func bogusPlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "delego-bogus")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho hello from a shell script\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(plugin.EnvPath, dir)
	return p
}

func TestPluginsCommand(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		t.Setenv(plugin.EnvPath, t.TempDir())
		code, stdout, stderr := cli(t, "plugins")
		if code != exitOK || !strings.Contains(stdout, "no plugins found") || !strings.Contains(stdout, "in process: cpu") || stderr != "" {
			t.Errorf("status %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
	t.Run("not a plugin", func(t *testing.T) {
		p := bogusPlugin(t)
		code, stdout, _ := cli(t, "plugins", "--json")
		if code != exitOK {
			t.Fatalf("status %d", code)
		}
		var r delego.PluginsReport
		decodeJSON(t, []byte(stdout), &r)
		if len(r.SearchPath) == 0 || r.SearchPath[0] != filepath.Dir(p) || len(r.Plugins) != 1 {
			t.Fatalf("report %+v", r)
		}
		if got := r.Plugins[0]; got.Name != "bogus" || got.Path != p || got.Usable || !strings.Contains(got.Error, "not a delego plugin") {
			t.Errorf("plugin %+v", got)
		}
		_, stdout, _ = cli(t, "plugins")
		if !strings.Contains(stdout, "bogus  "+p) || !strings.Contains(stdout, "usable    no: ") {
			t.Errorf("text:\n%s", stdout)
		}
	})
	t.Run("usage", func(t *testing.T) {
		if code, _, stderr := cli(t, "plugins", "extra"); code != exitUsage || !strings.Contains(stderr, "no arguments") {
			t.Errorf("status %d, stderr %q", code, stderr)
		}
		if code, stdout, _ := cli(t, "plugins", "-h"); code != exitOK || !strings.Contains(stdout, "JSON fields (stable)") {
			t.Errorf("status %d, help %q", code, stdout)
		}
		if code, _, stderr := cli(t, "plugins", "--plugin-checksums", filepath.Join(t.TempDir(), "nope")); code != exitError || !strings.Contains(stderr, "plugin checksums") {
			t.Errorf("missing checksums file: status %d, stderr %q", code, stderr)
		}
	})
}

// TestRunBogusPlugin: a delegate whose binary is not a delego plugin is a
// compilation error, which the fallback settings can absorb.
func TestRunBogusPlugin(t *testing.T) {
	bogusPlugin(t)
	model := shared.Model(t, "split_concat.tflite")
	inputs := inputArgs(t, model)
	want, _ := runOutput(t, model, inputs)

	var stdout, stderr bytes.Buffer
	err := runCmd(context.Background(), append([]string{model, "--delegate", "bogus"}, inputs...), &stdout, &stderr)
	if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Stage != delegate.StageCompile || !errors.Is(err, plugin.ErrIncompatible) {
		t.Errorf("err = %v, want a compile-stage plugin.ErrIncompatible", err)
	}
	allow := settingsFile(t, `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	got, errOut := runOutput(t, model, inputs, "--delegate", "bogus", "--settings", allow)
	if !bytes.Equal(got, want) || !strings.Contains(errOut, "bogus failed to compile") {
		t.Errorf("fallback: %s; stderr %q", firstDiff(got, want), errOut)
	}
}

// TestPluginChecksumFlag: with --plugin-checksums, a plugin whose SHA-256
// differs from the pinned one, or that the file does not list, never starts.
func TestPluginChecksumFlag(t *testing.T) {
	p := bogusPlugin(t)
	model := shared.Model(t, "split_concat.tflite")
	inputs := inputArgs(t, model)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	bad := sum
	bad[0] ^= 1
	dir := t.TempDir()
	for _, c := range []struct {
		name, file string
		is         error
	}{
		{"mismatch", hex.EncodeToString(bad[:]) + "  delego-bogus\n", plugin.ErrChecksum},
		{"unlisted", hex.EncodeToString(sum[:]) + "  delego-other\n", plugin.ErrChecksum},
		// The right sum lets it start, and it fails as what it is.
		{"pinned", hex.EncodeToString(sum[:]) + "  " + p + "\n", plugin.ErrIncompatible},
	} {
		t.Run(c.name, func(t *testing.T) {
			sums := writeFile(t, dir, c.name+".sha256", []byte(c.file))
			var stdout, stderr bytes.Buffer
			err := runCmd(context.Background(), append([]string{model, "--delegate", "bogus", "--plugin-checksums", sums}, inputs...), &stdout, &stderr)
			if !errors.Is(err, c.is) {
				t.Errorf("err = %v, want %v", err, c.is)
			}
			if c.is == plugin.ErrChecksum && errors.Is(err, plugin.ErrIncompatible) {
				t.Errorf("the plugin ran: %v", err)
			}
		})
	}
}
