//go:build unix

package plugin_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/delegate/plugin"
)

// TestSearchVet: a binary named by path is held to the checks of one found
// in the search directories, its own directory standing for theirs.
func TestSearchVet(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "delego-mytpu")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := (plugin.Search{}).Vet(bin); err != nil || got != bin {
		t.Errorf("Vet(%s) = %q, %v; want it as it is", bin, got, err)
	}

	t.Chdir(dir)
	if _, err := (plugin.Search{}).Vet("delego-mytpu"); !errors.Is(err, plugin.ErrInsecure) || !strings.Contains(err.Error(), "relative") {
		t.Errorf("a relative path: %v, want it refused as insecure", err)
	}
	if got, err := (plugin.Search{AllowInsecure: true}).Vet("delego-mytpu"); err != nil || got != bin {
		t.Errorf("a relative path, insecure allowed: %q, %v; want %s", got, err, bin)
	}

	plain := filepath.Join(dir, "delego-plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(open, "delego-mytpu")
	if err := os.WriteFile(shared, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want string
	}{
		{filepath.Join(dir, "absent"), "no plugin binary " + filepath.Join(dir, "absent")},
		{plain, "is not an executable file"},
		{dir, "is not an executable file"},
		{shared, "writable by every user"},
	} {
		if _, err := (plugin.Search{}).Vet(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Vet(%s) = %v, want an error with %q", c.path, err, c.want)
		}
	}
}
