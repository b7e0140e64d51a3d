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

// TestNondeterministicHintsRunSimulated: an Edge TPU model whose DMA
// hints are not fully deterministic (as the Keras LSTM's are) runs as
// libedgetpu runs it with DMA descriptors from the device: "delego
// inspect" passes it (text and JSON) and says how it runs, and "delego
// run" on a simulated device gives the outputs of the model it was made
// from, its trace showing the driver asking for every descriptor
// (descr_ep 0xff) and the device describing the input DMA.
func TestNondeterministicHintsRunSimulated(t *testing.T) {
	good := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "nondeterministic_edgetpu.tflite")
	if err := os.WriteFile(bad, nondeterministic(t, b), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "inspect", bad)
	if code != exitOK || !strings.Contains(stdout, "runtime check: ok") ||
		!strings.Contains(stdout, "DMA hints: 4, not fully deterministic (the device sends DMA descriptors): 1 instruction") {
		t.Errorf("text: %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, _ = cli(t, "inspect", bad, "--json")
	var r struct{ EdgeTPU []program.NodeReport }
	if err := json.Unmarshal([]byte(stdout), &r); code != exitOK || err != nil || len(r.EdgeTPU) != 1 || r.EdgeTPU[0].Check != "ok" ||
		len(r.EdgeTPU[0].Packages) == 0 || r.EdgeTPU[0].Packages[0].Executables[0].DMAHints.FullyDeterministic {
		t.Errorf("json: %d %v %+v", code, err, r)
	}

	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	in := []string{"--input", shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw")}
	want, _ := runOutput(t, good, in, "--delegate", "edgetpu")
	trace := filepath.Join(t.TempDir(), "usb.trace")
	t.Setenv(edgetpuinfo.EnvTrace, trace)
	got, stderr := runOutput(t, bad, in, "--delegate", "edgetpu")
	if !bytes.Equal(got, want) || !strings.Contains(stderr, "simulated") {
		t.Errorf("run: the outputs differ from the fully deterministic model's (stderr %q)", stderr)
	}
	tr, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		// descr_ep (0x4c148) := 0xff.
		"CTRL OUT bmRequestType=0x40 bRequest=0x00 wValue=0xc148 wIndex=0x0004 wLength=8 result=8 data=ff00000000000000",
		// The input's descriptor: 49152 bytes (tag 1) at 0x7f2000000000.
		"status=COMPLETED actual=16 data=00000000207f000000c0000001000000",
	} {
		if !strings.Contains(string(tr), w) {
			t.Errorf("the trace has no %q", w)
		}
	}
}
