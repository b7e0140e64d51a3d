package delego

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
)

// TestPluginsList: a binary that is not a delego plugin is listed with
// why it could not be described, a file named delego-... that is not a
// plugin with why it was skipped, and the search path and the in-process
// delegates come with them; an empty directory gives empty lists, never
// null.
func TestPluginsList(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "delego-bogus")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho hello from a shell script\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "delego-x.sh"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Plugins{Dirs: []string{dir}}.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	wantSkip := filepath.Join(dir, "delego-x.sh") + `: delegate name "x.sh" holds '.': a delegate's name takes only letters`
	if len(r.Skipped) != 1 || !strings.HasPrefix(r.Skipped[0].Path+": "+r.Skipped[0].Reason, wantSkip) {
		t.Errorf("skipped %+v, want %s...", r.Skipped, wantSkip)
	}
	if len(r.SearchPath) != 1 || r.SearchPath[0] != dir || len(r.InProcess) != 1 || r.InProcess[0] != "cpu" || len(r.Plugins) != 1 {
		t.Fatalf("report %+v", r)
	}
	if got := r.Plugins[0]; got.Name != "bogus" || got.Path != p || got.Usable || !strings.Contains(got.Error, "not a delego plugin") {
		t.Errorf("plugin %+v", got)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil || !strings.Contains(b.String(), "\nbogus  "+p+"\n  usable    no: ") ||
		!strings.Contains(b.String(), "\nskipped:\n  "+wantSkip) {
		t.Errorf("text (%v):\n%s", err, b.String())
	}

	r, err = Plugins{Dirs: []string{t.TempDir()}}.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(j), `"plugins":[],"skipped":[]`) {
		t.Errorf("no plugins: %s, %v", j, err)
	}
	b.Reset()
	if err := r.WriteText(&b); err != nil || !strings.Contains(b.String(), "no plugins found (binaries named delego-NAME)") {
		t.Errorf("no plugins: text (%v):\n%s", err, b.String())
	}
}

// TestPluginsReportText: a described plugin's version, protocol, devices
// and ops, the ops wrapped in lines of at most 78 columns; its JSON names
// the devices' fields in lower case.
func TestPluginsReportText(t *testing.T) {
	ops := make([]DeclaredOp, 12)
	for i := range ops {
		ops[i] = DeclaredOp{Op: "CONV_2D", MinVersion: 1, MaxVersion: 1 + i%3, Types: []string{"FLOAT32", "UINT8"}[:i%2+1]}
	}
	r := &PluginsReport{SearchPath: []string{"/a", "/b"}, InProcess: []string{"cpu"}, Plugins: []PluginReport{{
		Name: "x", Path: "/a/delego-x", Shadowed: []string{"/b/delego-x"}, DescribedName: "y", Version: "1.2", Protocol: 1,
		Reason: "no device", Devices: []delegate.Device{{Name: "d0", Description: "first"}}, Ops: ops,
	}}}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"search path: /a:/b\n", "\nx  /a/delego-x\n  shadows   /b/delego-x\n  calls itself \"y\"\n  version   1.2\n  protocol  1\n",
		"  usable    no: no device\n  devices   d0 (first)\n  ops       12:\n            CONV_2D 1 (FLOAT32), CONV_2D 1-2 (FLOAT32/UINT8),",
		"\nin process: cpu (used when no delego-cpu plugin is found)\n",
		"  settings  not declared (protocol 1): delego warns about its settings and gives it no options\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "            ") && len(l) > 78 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
	j, err := json.Marshal(r.Plugins[0])
	if err != nil || !strings.Contains(string(j), `"devices":[{"name":"d0","description":"first"}]`) {
		t.Errorf("JSON %s, %v", j, err)
	}
}
