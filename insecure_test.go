//go:build unix

package delego_test

import (
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

// loosePlugin writes delego-cpu, a shell script that is no plugin, into a
// fresh directory that every user may write, and returns the directory.
func loosePlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "delego-cpu"), []byte("#!/bin/sh\necho not a plugin\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantRefused checks that err is a compilation error of the cpu delegate
// saying that the plugin was refused as insecure, and how to run it anyway.
func wantRefused(t *testing.T, err error, what string) {
	t.Helper()
	de, ok := errors.AsType[*delegate.Error](err)
	if !ok || de.Stage != delegate.StageCompile || !errors.Is(err, plugin.ErrInsecure) {
		t.Fatalf("err = %v, want the cpu delegate's compilation error refusing the plugin as insecure", err)
	}
	for _, w := range []string{what, "refused as insecure", "--allow-insecure-plugins", "delego.WithInsecurePlugins()"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\ndoes not say %q", err, w)
		}
	}
}

// TestOpenRefusesInsecurePlugin: a delego-cpu that every user could
// replace is not started, and cpu does not quietly run in process instead:
// it is unavailable, which the fallback settings decide, and the error says
// why. WithInsecurePlugins starts it as before (it then fails as the shell
// script it is).
func TestOpenRefusesInsecurePlugin(t *testing.T) {
	dir := loosePlugin(t)
	model := shared.Model(t, quant)

	_, err := delego.Open(context.Background(), model, delego.WithDelegates("cpu"), delego.WithPluginDirs(dir))
	wantRefused(t, err, "its directory "+dir+" is writable by every user (mode 0777)")

	fallback := []byte(`{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	it := runGolden(t, quant, delego.WithDelegates("cpu"), delego.WithPluginDirs(dir), delego.WithSettingsData(fallback))
	if err := delegate.WhyUnavailable(it.Delegates().Delegates[0]); !errors.Is(err, plugin.ErrInsecure) {
		t.Errorf("the cpu delegate is %T (%v), want unavailable for the refused plugin", it.Delegates().Delegates[0], err)
	}
	if fb := it.Fallbacks(); len(fb) == 0 || !errors.Is(fb[0].Err, plugin.ErrInsecure) {
		t.Errorf("fallbacks %v, want the refusal recorded", fb)
	}

	_, err = delego.Open(context.Background(), model, delego.WithDelegates("cpu"), delego.WithPluginDirs(dir), delego.WithInsecurePlugins())
	if !errors.Is(err, plugin.ErrIncompatible) || errors.Is(err, plugin.ErrInsecure) {
		t.Errorf("WithInsecurePlugins: %v, want the script started and failing as no plugin", err)
	}
}

// TestOpenRefusesRelativePluginDir: "." in $DELEGO_PLUGIN_PATH, or a
// relative WithPluginDirs, would run whatever the working directory holds:
// refused, naming the entry, unless WithInsecurePlugins, which takes it
// from the working directory as before.
func TestOpenRefusesRelativePluginDir(t *testing.T) {
	model := shared.Model(t, quant)
	data, err := shared.Dir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DELEGO_SHARED", data) // found from any working directory
	t.Chdir(t.TempDir())            // no delego-cpu here: the cpu delegate runs in process once allowed
	t.Setenv(plugin.EnvPath, ".")
	_, err = delego.Open(context.Background(), model, delego.WithDelegates("cpu"))
	wantRefused(t, err, `plugin search directory "." refused as insecure: it is relative`)
	_, err = delego.Open(context.Background(), model, delego.WithDelegates("cpu"), delego.WithPluginDirs("bin"))
	wantRefused(t, err, `plugin search directory "bin"`)

	it := runGolden(t, quant, delego.WithDelegates("cpu"), delego.WithInsecurePlugins())
	if err := delegate.WhyUnavailable(it.Delegates().Delegates[0]); err != nil || len(it.Fallbacks()) != 0 {
		t.Errorf("WithInsecurePlugins: cpu unavailable (%v), fallbacks %v; want it in process", err, it.Fallbacks())
	}
}
