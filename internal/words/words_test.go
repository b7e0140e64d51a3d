package words

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 files", 1: "1 file", 2: "2 files"} {
		if got := Plural(n, "file", "files"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got, want := OneLine("compile failed:\nno device\n  at  all "), "compile failed:; no device; at all"; got != want {
		t.Errorf("OneLine = %q, want %q", got, want)
	}
}
