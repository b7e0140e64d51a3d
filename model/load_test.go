package model

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/model/modelbuild"

	"github.com/delego/delego/testsupport/shared"
)

// fifo makes a FIFO in a fresh directory and returns its path.
func fifo(t *testing.T) string {
	t.Helper()
	return shared.FIFO(t, filepath.Join(t.TempDir(), "model.tflite"))
}

// TestLoadFIFO: a model that comes through a FIFO is read into memory.
func TestLoadFIFO(t *testing.T) {
	path := fifo(t)
	example, _, _ := modelbuild.Example()
	written := make(chan error, 1)
	go func() { written <- os.WriteFile(path, example, 0) }() // waits for the reader
	m, err := LoadContext(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if m.mapped || m.Path() != path || m.Subgraph(0).NumOperators() != 5 {
		t.Errorf("mapped %v, path %q, %d operators; want a model in memory from %s with 5 operators", m.mapped, m.Path(), m.Subgraph(0).NumOperators(), path)
	}
}

// TestLoadFIFOWithoutWriter: the wait for a writer ends with the context.
func TestLoadFIFOWithoutWriter(t *testing.T) {
	path := fifo(t)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := LoadContext(ctx, path)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "load model: open "+path+": stopped while waiting for a writer") {
		t.Errorf("LoadContext: %v, want the context's error naming %s", err, path)
	}
}

// TestLoadDevZero: a device that never ends is refused after its first 8
// bytes, which are not a TFLite file's.
func TestLoadDevZero(t *testing.T) {
	_, err := Load("/dev/zero")
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), `load model /dev/zero: malformed model: file identifier is "\x00\x00\x00\x00", want "TFL3"`) {
		t.Errorf("Load(/dev/zero): %v", err)
	}
}
