package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadInput writes arbitrary bytes to a file and reads them as an input
// tensor of want bytes, as --input does: the read succeeds exactly when the
// file holds want bytes, and gives them; otherwise the error says how many
// bytes the tensor needs.
func FuzzReadInput(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{1, 2, 3}, uint16(3))
	f.Add([]byte{1, 2, 3}, uint16(2))
	f.Add(bytes.Repeat([]byte{7}, 600), uint16(599))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, want uint16) {
		path := filepath.Join(dir, "input.raw")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readInput(t.Context(), path, int(want))
		switch {
		case len(data) == int(want) && (err != nil || !bytes.Equal(got, data)):
			t.Errorf("%d bytes for a %d-byte tensor: %v", len(data), want, err)
		case len(data) != int(want) && (err == nil || !strings.Contains(err.Error(), "needs")):
			t.Errorf("%d bytes for a %d-byte tensor: %v, want an error saying what the tensor needs", len(data), want, err)
		}
	})
}
