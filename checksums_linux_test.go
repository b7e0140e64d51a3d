package delego_test

import (
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

// TestStrictChecksums: a delego-cpu whose SHA-256 is not the pinned one is
// unavailable, which compile fallback covers (the CPU runs the model in
// process); with WithStrictChecksums the same is an error of Open and
// Plan whatever the fallback settings, naming the plugin and both sums,
// and so is a plugin the checksums do not list. It is Linux's: elsewhere
// go-plugin checks the sum and does not say what it found.
func TestStrictChecksums(t *testing.T) {
	dir := t.TempDir()
	script := []byte("#!/bin/sh\nexit 1\n")
	if err := os.WriteFile(filepath.Join(dir, "delego-cpu"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	actual := sha256.Sum256(script)
	pinned := strings.Repeat("ab", 32)
	sums := func(line string) string {
		f := filepath.Join(t.TempDir(), "SHA256SUMS")
		if err := os.WriteFile(f, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	fallback := delego.WithSettingsData([]byte(`{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`))
	opts := []delego.Option{delego.WithDelegates("cpu"), delego.WithPluginDirs(dir), delego.WithChecksumsFile(sums(pinned + "  delego-cpu")), fallback}

	it := runGolden(t, quant, opts...)
	if fb := it.Fallbacks(); len(fb) != 1 || !errors.Is(fb[0].Err, plugin.ErrChecksum) {
		t.Errorf("fallbacks %v, want the checksum mismatch, moved to the CPU", fb)
	}

	model := shared.Model(t, quant)
	strict := append(opts, delego.WithStrictChecksums())
	_, err := delego.Open(context.Background(), model, strict...)
	wantStrict(t, "Open", err, "delegate cpu: ", filepath.Join(dir, "delego-cpu"), hex.EncodeToString(actual[:]), "not the pinned "+pinned, "strict checksums: no fallback")
	_, err = delego.Plan(context.Background(), model, strict...)
	wantStrict(t, "Plan", err, "delegate cpu: ", hex.EncodeToString(actual[:]), pinned)

	unlisted := append(opts, delego.WithChecksumsFile(sums(pinned+"  delego-other")), delego.WithStrictChecksums())
	_, err = delego.Open(context.Background(), model, unlisted...)
	wantStrict(t, "Open, not listed", err, filepath.Join(dir, "delego-cpu")+" is not listed in ")

	_, err = delego.Open(context.Background(), model, delego.WithDelegates("cpu"), delego.WithStrictChecksums())
	if err == nil || !strings.Contains(err.Error(), "strict checksums need checksums") {
		t.Errorf("WithStrictChecksums without checksums: %v, want an error saying so", err)
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("child processes %v remain", kids)
	}
}

// wantStrict checks that err is a checksum refusal, not a delegate error
// that fallback could have covered, and says every one of want.
func wantStrict(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, plugin.ErrChecksum) || errors.As(err, new(*delegate.Error)) {
		t.Fatalf("%s: %v, want the checksum refusal", what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q\ndoes not say %q", what, err, w)
		}
	}
}
