package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestREADMETableIsCurrent fails when the README's op table differs from
// what the kernels register: run go generate ./cmd/internal/opstable.
func TestREADMETableIsCurrent(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := update(readme, table())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readme, want) {
		t.Error("README.md's op table is stale: run go generate ./cmd/internal/opstable")
	}
}

// TestUpdate: the table goes at the end of its section the first time, and
// replaces itself after.
func TestUpdate(t *testing.T) {
	doc := "# d\n" + section + "text\n\n## Next\nmore\n"
	first, err := update([]byte(doc), begin+"ONE\n"+end)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# d\n" + section + "text\n\n" + begin + "ONE\n" + end + "\n## Next\nmore\n"; string(first) != want {
		t.Fatalf("first update:\n%s\nwant:\n%s", first, want)
	}
	second, err := update(first, begin+"TWO\n"+end)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(string(first), "ONE", "TWO", 1); string(second) != want {
		t.Errorf("second update:\n%s\nwant:\n%s", second, want)
	}
	for _, bad := range []string{"# d\ntext\n", section + end + begin} {
		if _, err := update([]byte(bad), begin+end); err == nil {
			t.Errorf("update(%q) succeeded", bad)
		}
	}
}
