package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/testsupport/shared"
)

// TestCLIRehearsePluginCrash rehearses a plugin crash from the command line
// with the real delego-cpu plugin: DELEGO_PLUGIN_FAULT=cpu:crash-after=0
// crashes it in its first invoke. With fallback on execution errors,
// `delego run --delegate cpu` still gives TFLite's golden bytes and says the
// CPU fallback ran; without, it fails quoting the crash; a malformed value
// stops the plugin from starting, naming the variable. No plugin process
// outlives delego.
func TestCLIRehearsePluginCrash(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	golden := shared.ReadGolden(t, gc.OutputFile)
	dir := t.TempDir()
	settings := filepath.Join(dir, "fallback.json")
	writeFile(t, settings, `{"fallback_settings": {"allow_automatic_fallback_on_execution_error": true}}`)
	crash := []string{plugin.EnvFault + "=cpu:crash-after=0"}

	out := filepath.Join(dir, "out.raw")
	_, stderr, err := runDelegoEnv(t, crash, append(goldenArgs(t, gc, out), "--delegate", "cpu", "--settings", settings)...)
	if err != nil {
		t.Fatalf("with fallback: %v\n%s", err, stderr)
	}
	if got := readFile(t, out); !bytes.Equal(got, golden) {
		t.Error("the output after the crash is not TFLite's")
	}
	for _, w := range []string{"partition 0 on cpu failed to run", "plugin process died", "crashed on purpose in invoke 1", "the result came from the CPU fallback"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
	checkNoOrphans(t)

	out = filepath.Join(dir, "none.raw")
	_, stderr, err = runDelegoEnv(t, crash, append(goldenArgs(t, gc, out), "--delegate", "cpu")...)
	if err == nil {
		t.Fatal("without fallback: exit status 0")
	}
	for _, w := range []string{"delegate cpu: partition 0: execute:", "exit status 2", `as $DELEGO_PLUGIN_FAULT="cpu:crash-after=0" asks`} {
		if !strings.Contains(stderr, w) {
			t.Errorf("without fallback: stderr %q does not say %q", stderr, w)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed run left an output file")
	}
	checkNoOrphans(t)

	_, stderr, err = runDelegoEnv(t, []string{plugin.EnvFault + "=cpu:crash-after=soon"}, append(goldenArgs(t, gc, out), "--delegate", "cpu")...)
	if err == nil || !strings.Contains(stderr, `$DELEGO_PLUGIN_FAULT="cpu:crash-after=soon"`) {
		t.Errorf("a malformed fault: %v, stderr %q", err, stderr)
	}
	checkNoOrphans(t)
}
