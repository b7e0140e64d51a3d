package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// TestXNNPACKPluginWithoutCgo builds delego-xnnpack without cgo (so without
// XNNPACK) and puts it first on $DELEGO_PLUGIN_PATH. The plugin starts and
// describes itself as unusable, saying why; `delego run --delegate xnnpack`
// fails at compile with that reason, or, with
// allow_automatic_fallback_on_compilation_error, gives the CPU's golden
// result and says it fell back.
func TestXNNPACKPluginWithoutCgo(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := goBuild(dir, []string{"CGO_ENABLED=0"}, "github.com/delego/delego/plugins/xnnpack/cmd/delego-xnnpack"); err != nil {
		t.Fatal(err)
	}
	delego := func(args ...string) (stdout, stderr string, err error) {
		t.Helper()
		return runDelegoEnv(t, []string{"DELEGO_PLUGIN_PATH=" + dir}, args...)
	}
	const why = "xnnpack: this binary was built without cgo, so without XNNPACK"

	stdout, stderr, err := delego("plugins", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	type listed struct {
		Name, Path, Error, Reason string
		Shadowed                  []string
		Usable                    bool
	}
	var r struct{ Plugins []listed }
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(r.Plugins, func(p listed) bool { return p.Name == "xnnpack" })
	if i < 0 {
		t.Fatalf("delego plugins does not list xnnpack:\n%s", stdout)
	}
	if p := r.Plugins[i]; p.Usable || p.Error != "" || !strings.Contains(p.Reason, why) ||
		p.Path != filepath.Join(dir, "delego-xnnpack") || !slices.Equal(p.Shadowed, []string{filepath.Join(binDir, "delego-xnnpack")}) {
		t.Errorf("the plugin built without cgo: %+v", p)
	}

	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_float__cat_128_f32")
	out := filepath.Join(t.TempDir(), "out.raw")
	_, stderr, err = delego(append(goldenArgs(t, gc, out), "--delegate", "xnnpack")...)
	if err == nil || !strings.Contains(stderr, "delegate xnnpack") || !strings.Contains(stderr, "compile") || !strings.Contains(stderr, why) {
		t.Errorf("without fallback: %v, stderr %q; want a compile error saying %q", err, stderr, why)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed run left an output file")
	}
	settings := filepath.Join(t.TempDir(), "fallback.json")
	writeFile(t, settings, `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	_, stderr, err = delego(append(goldenArgs(t, gc, out), "--delegate", "xnnpack", "--settings", settings)...)
	if err != nil {
		t.Fatalf("with fallback: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "the result came from the CPU fallback") || !strings.Contains(stderr, why) {
		t.Errorf("stderr %q should report the fallback and its reason", stderr)
	}
	got := readFile(t, out)
	if err := compareOutputs(gc, got, shared.ReadGolden(t, gc.OutputFile)); err != nil {
		t.Error(err)
	}
	checkNoOrphans(t)
}
