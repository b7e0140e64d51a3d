//go:build unix

package delegates_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/compat/tflite/delegates"
	"github.com/delego/delego/delegate/plugin"
)

// TestOpenRefusesInsecure: a plugin binary every user could replace is
// refused, not started, and the error says why rather than how to build it.
func TestOpenRefusesInsecure(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	bin := filepath.Join(dir, plugin.Prefix+"x")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv(plugin.EnvPath, dir)
	p, err := delegates.Open("x", nil)
	if err == nil {
		p.Delete()
	}
	if !errors.Is(err, plugin.ErrInsecure) || !strings.Contains(err.Error(), "delegate x: plugin "+bin+" refused as insecure") || strings.Contains(err.Error(), "go build") {
		t.Errorf("err = %v, want %s refused as insecure", err, bin)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the refused plugin ran")
	}
}
