package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/executable/schema"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/testsupport/shared"
)

// nondeterministic is the model file b with every executable of its first
// node's first package marked as having DMA hints that are not fully
// deterministic (as the compiler marks the Keras LSTM's), byte for byte
// otherwise: the flag's byte is found through the schema and cleared in
// place.
func nondeterministic(t *testing.T, b []byte) []byte {
	t.Helper()
	m, err := model.New(b)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	root, err := flexbuf.Parse(m.Subgraph(0).Operator(0).CustomOptions())
	if err != nil {
		t.Fatal(err)
	}
	opts, err := root.Map()
	if err != nil {
		t.Fatal(err)
	}
	v, err := opts.Get("4") // the package
	if err != nil {
		t.Fatal(err)
	}
	blob, err := v.Blob()
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(b)
	multi := schema.GetRootAsMultiExecutable(schema.GetRootAsPackage(blob, 0).SerializedMultiExecutableBytes(), 0)
	for i := range multi.SerializedExecutablesLength() {
		raw := multi.SerializedExecutables(i)
		at := bytes.Index(out, raw)
		tab := schema.GetRootAsExecutable(raw, 0).DmaHints(nil).Table()
		o := tab.Offset(6) // fully_deterministic
		if at < 0 || o == 0 || tab.Bytes[int(tab.Pos)+int(o)] != 1 {
			t.Fatalf("executable %d: no fully_deterministic flag set to clear", i)
		}
		out[at+int(tab.Pos)+int(o)] = 0
	}
	return out
}

// TestInspectSaysWhatTheDriverRefuses: an Edge TPU model whose DMA hints
// are not fully deterministic passes the runtime's checks, but the USB
// driver refuses it, as libedgetpu does: "delego inspect" says so (text and
// JSON), and "delego run" on a simulated device fails with the same reason.
func TestInspectSaysWhatTheDriverRefuses(t *testing.T) {
	good := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "nondeterministic_edgetpu.tflite")
	if err := os.WriteFile(bad, nondeterministic(t, b), 0o644); err != nil {
		t.Fatal(err)
	}
	const reason = "its DMA hints are not fully deterministic"
	code, stdout, stderr := cli(t, "inspect", good)
	if code != exitOK || !strings.Contains(stdout, "runtime check: ok") {
		t.Errorf("the shared model: %d %q %q", code, stdout, stderr)
	}
	code, stdout, _ = cli(t, "inspect", bad)
	if code != exitOK || !strings.Contains(stdout, "runtime check: the edgetpu delegate refuses it: the driver cannot run it: executable EXECUTION_ONLY") ||
		!strings.Contains(stdout, reason) {
		t.Errorf("text: %d\n%s", code, stdout)
	}
	code, stdout, _ = cli(t, "inspect", bad, "--json")
	var r struct{ EdgeTPU []program.NodeReport }
	if err := json.Unmarshal([]byte(stdout), &r); code != exitOK || err != nil || len(r.EdgeTPU) != 1 || !strings.Contains(r.EdgeTPU[0].Check, reason) {
		t.Errorf("json: %d %v %+v", code, err, r)
	}
	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	in := shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw")
	code, _, stderr = cli(t, "run", bad, "--delegate", "edgetpu", "--input", in, "--cpu-twin", filepath.Join(t.TempDir(), "none.tflite"))
	if code != exitError || !strings.Contains(stderr, reason) {
		t.Errorf("run: %d %q", code, stderr)
	}
}
