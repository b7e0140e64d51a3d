package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/testsupport/shared"
)

// settingsFIFO makes a FIFO named settings.json and returns its path.
func settingsFIFO(t *testing.T) string {
	t.Helper()
	return shared.FIFO(t, filepath.Join(t.TempDir(), "settings.json"))
}

// TestLoadFIFO: settings come through a FIFO; a FIFO without a writer
// holds LoadContext only until its context ends.
func TestLoadFIFO(t *testing.T) {
	path := settingsFIFO(t)
	written := make(chan error, 1)
	go func() { written <- os.WriteFile(path, []byte(`{"delegate": "GPU"}`), 0) }() // waits for the reader
	s, err := LoadContext(t.Context(), path)
	if err != nil || s.TFLite.GetDelegate() != Delegate_GPU {
		t.Fatalf("LoadContext: %v, %v; want delegate GPU", s, err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = LoadContext(ctx, path)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "config: load settings: open "+path+": stopped while waiting for a writer") {
		t.Errorf("no writer: %v", err)
	}
}

// TestLoadEndless: a device that never ends is read no further than
// MaxFileSize.
func TestLoadEndless(t *testing.T) {
	_, err := Load("/dev/zero")
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "/dev/zero is larger than 1048576 bytes") {
		t.Errorf("Load(/dev/zero): %v", err)
	}
}
