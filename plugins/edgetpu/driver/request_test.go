package driver

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/testsupport/shared"
)

// TestLookup: a DMA descriptor from the device becomes the DMA of the
// bytes it names in one buffer of the request, in the direction its tag
// says; one that names bytes no buffer holds, a direction the buffer does
// not take, an instruction DMA or no bytes is the device's fault, and the
// error says what the device sent.
func TestLookup(t *testing.T) {
	b, err := os.ReadFile(shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(b)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	co, err := executable.Parse(m.Subgraph(0).Operator(0).CustomOptions())
	if err != nil {
		t.Fatal(err)
	}
	p, err := program.NewProgram(co.Packages[0].Main())
	if err != nil {
		t.Fatal(err)
	}
	in := make([]byte, p.Exe.Inputs[0].ActualBytes())
	in[100] = 7
	r, err := newRequest(p, 0, [][][]byte{{in}}, &arena{next: RequestBase})
	if err != nil {
		t.Fatal(err)
	}
	input, output := RequestBase, RequestBase+49152 // 49152 input bytes, then the 1008 output bytes
	for _, c := range []struct {
		ev   event
		kind ioKind
		data []byte // the bytes a bulk-out sends
		says string
	}{
		{ev: event{tag: TagInputActivations, addr: input + 100, length: 2}, kind: ioBulkOut, data: []byte{7, 0}},
		{ev: event{tag: TagOutputActivations, addr: output + 1000, length: 8}, kind: ioBulkIn},
		{ev: event{tag: TagOutputActivations, addr: output + 1000, length: 9}, says: "(tag 3, 9 bytes at 0x7f200000c3e8): no buffer of the request holds those bytes"},
		{ev: event{tag: TagOutputActivations, addr: input, length: 8}, says: "no buffer of the request holds those bytes"},
		{ev: event{tag: TagInputActivations, addr: output, length: 8}, says: "no buffer of the request holds those bytes"},
		{ev: event{tag: TagParameters, addr: input, length: 8}, says: "no buffer of the request holds those bytes"},
		{ev: event{tag: TagInputActivations, addr: input - 1, length: 8}, says: "no buffer of the request holds those bytes"},
		{ev: event{tag: TagInstructions, addr: input, length: 8}, says: "(tag 0, 8 bytes at 0x7f2000000000): not a DMA the device may ask for"},
		{ev: event{tag: TagInputActivations, addr: input}, says: "an empty DMA"},
	} {
		x, err := r.lookup(c.ev)
		switch {
		case c.says != "":
			if !errors.Is(err, ErrDeviceFault) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%+v: %v, want ErrDeviceFault: ...%s", c.ev, err, c.says)
			}
		case err != nil:
			t.Errorf("%+v: %v", c.ev, err)
		case x.kind != c.kind || x.addr != c.ev.addr || len(x.data) != int(c.ev.length) || c.data != nil && string(x.data) != string(c.data):
			t.Errorf("%+v: %s DMA of %d bytes at %#x", c.ev, x.what, len(x.data), x.addr)
		case c.kind == ioBulkIn && (x.in == nil || &x.data[0] != &r.outputs[0][0][1000]):
			t.Errorf("%+v: the bulk-in does not fill the output buffer", c.ev)
		}
	}
}
