package plugin

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// script writes an executable shell script and returns its path and its
// SHA-256.
func script(t *testing.T, body string) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "delego-test")
	data := []byte("#!/bin/sh\n" + body + "\n")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return path, sum[:]
}

func TestCommand(t *testing.T) {
	ctx := context.Background()
	path, sum := script(t, `echo "$@"`)
	out, err := Command(ctx, path, &Options{Checksum: sum}, "devices", "x")
	if err != nil || string(out) != "devices x\n" {
		t.Errorf("pinned run: %q, %v", out, err)
	}
	if _, err := Command(ctx, path, &Options{Checksum: make([]byte, 32)}, "devices"); !errors.Is(err, ErrChecksum) {
		t.Errorf("a sum that differs: %v, want ErrChecksum", err)
	}

	path, _ = script(t, `echo "no bus here" >&2; exit 1`)
	if _, err := Command(ctx, path, nil); err == nil || !strings.HasSuffix(err.Error(), ": no bus here") || !strings.Contains(err.Error(), path) {
		t.Errorf("a failing command: %v, want its path and its own words", err)
	}

	path, _ = script(t, `head -c 2000000 /dev/zero`)
	if _, err := Command(ctx, path, nil); err == nil || !strings.Contains(err.Error(), "more than 1048576 bytes") {
		t.Errorf("too much output: %v", err)
	}

	path, _ = script(t, `sleep 30`)
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Command(ctx, path, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled command: %v, want context.Canceled", err)
	}
}
