package delego_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/testsupport/shared"
)

// TestSettingsReachAPluginProcess runs delego-echo (testsupport/echoplugin),
// a plugin that declares the setting it honours and the option it takes:
// what it declares crosses the process boundary (no warning for its
// setting, an error for an option it does not take), and so do the
// options, to its Compile.
func TestSettingsReachAPluginProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds delego-echo")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "delego-echo"), "./testsupport/echoplugin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const selects = `"stable_delegate_loader_settings": {"delegate_name": "echo"}, "hexagon_settings": {"debug_level": 1}`
	ctx := context.Background()
	var warnings []string
	warn := delego.WithWarnings(func(w error) { warnings = append(warnings, w.Error()) })

	it := runGolden(t, quant, delego.WithPluginDirs(dir), warn, delego.WithSettingsData([]byte(`{`+selects+`}`)))
	if len(warnings) != 0 || len(it.Plan().Partitions) != 1 {
		t.Errorf("warnings %q, %d partitions; want none, and the model on delego-echo", warnings, len(it.Plan().Partitions))
	}

	_, err := delego.Open(ctx, shared.Model(t, quant), delego.WithPluginDirs(dir),
		delego.WithSettingsData([]byte(`{`+selects+`, "delegate_options": {"say": "hello"}}`)))
	if err == nil || !strings.Contains(err.Error(), "echo: compiled with options say=hello") {
		t.Errorf("with option say: %v, want Compile's error repeating it", err)
	}

	_, err = delego.Configure(ctx, delego.WithPluginDirs(dir), delego.WithSettingsData([]byte(`{`+selects+`}`)),
		delego.WithDelegateOption("echo", "shout", "1"))
	if err == nil || !strings.Contains(err.Error(), "echo:shout: the delegate echo takes no such option; it takes say (") {
		t.Errorf("an option it does not take: %v, want an error saying what it takes", err)
	}

	// delego plugins lists what it declares.
	r, err := delego.Plugins{Dirs: []string{dir}}.List(ctx)
	if err != nil || len(r.Plugins) != 1 {
		t.Fatalf("List: %v, %+v", err, r)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "  settings  1:\n            hexagon_settings.debug_level\n  options   say: makes Compile fail"
	if p := r.Plugins[0]; !p.DeclaresSettings || !strings.Contains(b.String(), want) {
		t.Errorf("delego plugins: declares %v, text:\n%s\nwant %q", p.DeclaresSettings, b.String(), want)
	}
}
