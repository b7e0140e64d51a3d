package driver_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
)

// csrDescrEP is descr_ep (kBeagleUsbCsrOffsets): which descriptor tags
// the device sends event descriptors for.
const csrDescrEP = 0x4c148

// nondeterministic is a copy of e whose DMA hints are not fully
// deterministic (as the compiler marks the Keras LSTM's) and are those of
// e that keep accepts.
func nondeterministic(e *executable.Executable, keep func(executable.DMAHint) bool) *executable.Executable {
	v := *e
	v.DMA.FullyDeterministic = false
	v.DMA.Hints = slices.DeleteFunc(slices.Clone(e.DMA.Hints), func(h executable.DMAHint) bool { return !keep(h) })
	v.Outputs = slices.Clone(e.Outputs)
	return &v
}

// Which hints a non-deterministic variant keeps.
var (
	everyHint = func(executable.DMAHint) bool { return true }
	inHints   = func(h executable.DMAHint) bool {
		return h.Kind == executable.HintInstruction || h.Kind == executable.HintDMA && !h.Out
	}
	instructions = func(h executable.DMAHint) bool { return h.Kind == executable.HintInstruction }
)

// descriptor is the event descriptor the device sends for a DMA: the
// buffer's device address (8 bytes), the length (4), the tag, three zero
// bytes (UsbMlCommands::EventDescriptor).
func descriptor(tag byte, addr uint64, n int) string {
	return le(addr, 8) + le(uint64(n), 4) + hex.EncodeToString([]byte{tag, 0, 0, 0})
}

// mobilenetDescriptors are the event descriptors of one run of
// mobilenet_v1_0.25_128 in bulk descriptor mode: with caching, the
// parameters' (566912 bytes at ParameterBase) and the caching
// executable's interrupt 0; then the input's (49152 bytes at
// RequestBase), the output's (1008 bytes on the next page) and the
// main executable's interrupt 0.
func mobilenetDescriptors(caching bool) []string {
	var ev []string
	if caching {
		ev = append(ev, descriptor(driver.TagParameters, driver.ParameterBase, 566912), event0)
	}
	return append(ev,
		descriptor(driver.TagInputActivations, driver.RequestBase, 49152),
		descriptor(driver.TagOutputActivations, driver.RequestBase+pageUp(49152), 1008),
		event0)
}

// TestSequenceDescriptors: mobilenet_v1_0.25_128's main executable with
// DMA hints that are not fully deterministic runs as libedgetpu runs one
// with usb_enable_bulk_descriptors_from_device: the driver asks the device
// for every DMA descriptor (descr_ep 0xff) before the first run, follows
// the hints it has, and the device's descriptors for the rest. Whatever
// the hints leave out (the outputs, as the Keras LSTM's do; the inputs
// too), the USB exchange is the one of the complete hints: the same
// bulk-outs and bulk-ins, and a descriptor for each DMA and interrupt;
// the outputs are the simulator's.
func TestSequenceDescriptors(t *testing.T) {
	p := pkg(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	caching := p.Caching()
	for _, c := range []struct {
		name string
		keep func(executable.DMAHint) bool
		n    int // hints kept
	}{
		{"every hint", everyHint, 4},
		{"instructions and inputs", inHints, 2},
		{"instructions only", instructions, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			main := nondeterministic(p.Main(), c.keep)
			if len(main.DMA.Hints) != c.n {
				t.Fatalf("%d hints kept, want %d", len(main.DMA.Hints), c.n)
			}
			r := newRig(t, tpusim.Config{})
			r.bus.Learn(caching)
			r.bus.Learn(main)
			d := r.open(t)
			m, err := program.NewModel(main, caching)
			if err != nil {
				t.Fatal(err)
			}
			in := [][]byte{inputFor(&main.Inputs[0], 1), inputFor(&main.Inputs[0], 9)}
			for i, x := range in {
				got, err := d.Run(context.Background(), m, [][]byte{x}, 1)
				if err != nil {
					t.Fatalf("run %d: %v", i, err)
				}
				if want := simOutput(&main.Outputs[0], [][]byte{x}); !bytes.Equal(got[0], want) {
					t.Errorf("run %d: output differs from the simulator's", i)
				}
			}
			s := r.closeAndCompareCtrl(t, d, func(c *ctrl) { c.w64(csrDescrEP, 0xff) })

			output := driver.RequestBase + pageUp(main.Inputs[0].PaddedBytes())
			mainAddr := func(m executable.Meta) (uint64, bool) {
				switch m.Target {
				case executable.InputActivation:
					return driver.RequestBase, true
				case executable.OutputActivation:
					return output, true
				}
				return 0, false
			}
			want := []dma{
				{tag: 0, bs: &caching.Bitstreams[0], addr: func(m executable.Meta) (uint64, bool) {
					return driver.ParameterBase, m.Target == executable.ParameterBase
				}, what: "caching instructions"},
				{tag: 2, data: caching.Parameters, what: "parameters"},
			}
			for i := range in {
				want = append(want,
					dma{tag: 0, bs: &main.Bitstreams[0], addr: mainAddr, what: fmt.Sprintf("run %d instructions", i)},
					dma{tag: 1, data: in[i], what: fmt.Sprintf("run %d input", i)})
			}
			checkBulkOut(t, bulkOuts(t, s["0x01"]), want)
			var done []string
			for _, x := range in {
				b := bytes.Repeat([]byte{0xee}, main.Outputs[0].PaddedBytes())
				copy(b, simOutput(&main.Outputs[0], [][]byte{x}))
				done = append(done, hex.EncodeToString(b))
			}
			checkQueue(t, "bulk in 1", s["0x81"], "0x81", 1024, 32, done, false)
			checkQueue(t, "events", s["0x82"], "0x82", 16, 1, append(mobilenetDescriptors(true), mobilenetDescriptors(false)...), false)
		})
	}
}

// TestDescriptorsSwitch: the driver asks for DMA descriptors from the
// device (descr_ep 0xff) only while it runs executables whose hints are
// not fully deterministic, and for interrupt descriptors only (0xf0, as
// at open) when it runs fully deterministic ones again, whose exchange is
// then today's.
func TestDescriptorsSwitch(t *testing.T) {
	a, b := pkg(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite"), pkg(t, "split_concat_edgetpu.tflite")
	main := nondeterministic(a.Main(), instructions)
	r := newRig(t, tpusim.Config{}, b)
	r.bus.Learn(a.Caching())
	r.bus.Learn(main)
	d := r.open(t)
	ma, err := program.NewModel(main, a.Caching())
	if err != nil {
		t.Fatal(err)
	}
	mb, err := program.NewModel(b.Main(), b.Caching())
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range []*program.Model{ma, mb, ma} {
		var in [][]byte
		for k := range m.Main.Exe.Inputs {
			in = append(in, inputFor(&m.Main.Exe.Inputs[k], byte(i+k)))
		}
		got, err := d.Run(context.Background(), m, in, 1)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		for k := range m.Main.Exe.Outputs {
			if want := simOutput(&m.Main.Exe.Outputs[k], in); !bytes.Equal(got[k], want) {
				t.Errorf("run %d: output %d differs from the simulator's", i, k)
			}
		}
	}
	s := r.closeAndCompareCtrl(t, d, func(c *ctrl) {
		c.w64(csrDescrEP, 0xff)
		c.w64(csrDescrEP, 0xf0)
		c.w64(csrDescrEP, 0xff)
	})
	// split_concat's run caches its parameters (another token): two
	// interrupt descriptors; mobilenet's runs cache theirs each time.
	events := mobilenetDescriptors(true)
	events = append(events, event0, event0)
	events = append(events, mobilenetDescriptors(true)...)
	checkQueue(t, "events", s["0x82"], "0x82", 16, 1, events, false)
}

// TestDescriptorFaults: a device whose DMA descriptors do not fit the
// request fails the run with ErrDeviceFault, saying what it sent, and
// leaves the driver faulted; so does one that never raises the completion
// interrupt (ErrNoCompletion). The simulated device runs its own idea of
// the executable: an output layer larger than the host's, or none.
func TestDescriptorFaults(t *testing.T) {
	p := pkg(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	for _, c := range []struct {
		name   string
		device func(e *executable.Executable)
		drop   int // the raise-event dropped (-1: none)
		err    error
		says   string
	}{
		{"a DMA no buffer holds", func(e *executable.Executable) { e.Outputs[0].SizeBytes += 4096 }, -1, driver.ErrDeviceFault,
			"the device's DMA descriptor (tag 3, 5104 bytes at 0x7f200000c000): no buffer of the request holds those bytes"},
		{"an output never sent", func(e *executable.Executable) { e.Outputs = nil }, -1, driver.ErrDeviceFault,
			`the device completed the request without sending output "MobilenetV1/Predictions/Reshape_1" batch 0`},
		{"no completion", func(*executable.Executable) {}, 4, driver.ErrNoCompletion,
			"request 1 (the device's DMA descriptors after its DMA hints): no event within"},
	} {
		t.Run(c.name, func(t *testing.T) {
			main := nondeterministic(p.Main(), instructions)
			dev := nondeterministic(p.Main(), instructions)
			c.device(dev)
			r := newRig(t, tpusim.Config{})
			r.opts.Timeout = 200 * time.Millisecond
			r.bus.Learn(p.Caching())
			r.bus.Learn(dev)
			r.dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
				if op.Kind == "raise-event" && op.N == c.drop {
					return tpusim.Drop
				}
				return tpusim.None
			})
			d := r.open(t)
			defer d.Close()
			m, err := program.NewModel(main, p.Caching())
			if err != nil {
				t.Fatal(err)
			}
			in := [][]byte{inputFor(&main.Inputs[0], 1)}
			_, err = d.Run(context.Background(), m, in, 1)
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("run: %v\nwant %v: ...%s", err, c.err, c.says)
			}
			if _, err := d.Run(context.Background(), m, in, 1); !errors.Is(err, driver.ErrClosed) {
				t.Errorf("a run after the fault: %v, want ErrClosed", err)
			}
		})
	}
}

// TestSequenceKerasLSTM: Coral's keras_lstm_mnist_ptq_edgetpu.tflite
// (google-coral/test_data; not in ../shared, so the test reads it from
// DELEGO_GITHUB_MODELS, laid out as OWNER+NAME/PATH) is the model whose
// hints are not fully deterministic: its main executable's name the
// instructions, its parameters and its three inputs (the image and the
// LSTM's two state variables), and neither its outputs nor its completion.
// On the simulator it runs as libedgetpu runs it with descriptors from the
// device: the driver asks for them (descr_ep 0xff), sends what the hints
// name, and receives the three outputs and the completion the device
// describes.
func TestSequenceKerasLSTM(t *testing.T) {
	dir := os.Getenv("DELEGO_GITHUB_MODELS")
	if dir == "" {
		t.Skip("set DELEGO_GITHUB_MODELS (a folder of OWNER+NAME/PATH files) holding google-coral+test_data/keras_lstm_mnist_ptq_edgetpu.tflite")
	}
	p := pkgFile(t, filepath.Join(dir, "google-coral+test_data", "keras_lstm_mnist_ptq_edgetpu.tflite"))
	main, caching := p.Main(), p.Caching()
	var hints []string
	for _, h := range main.DMA.Hints {
		hints = append(hints, fmt.Sprintf("%s %s %q %d", h.Kind, h.Meta.Target, h.Meta.Layer, h.Size))
	}
	if main.DMA.FullyDeterministic || !caching.DMA.FullyDeterministic || strings.Join(hints, ", ") !=
		`instruction output "" 0, dma parameters "" 576, dma input "serving_default_x:0" 784, dma input "tfl.pseudo_qconst" 24, dma input "tfl.pseudo_qconst1" 40` {
		t.Fatalf("the model changed: main's hints (fully deterministic %v): %s", main.DMA.FullyDeterministic, hints)
	}
	r := newRig(t, tpusim.Config{}, p)
	d := r.open(t)
	m, err := program.NewModel(main, caching)
	if err != nil {
		t.Fatal(err)
	}
	var in [][]byte
	for i := range main.Inputs {
		in = append(in, inputFor(&main.Inputs[i], byte(i)))
	}
	out, err := d.Run(context.Background(), m, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := r.closeAndCompareCtrl(t, d, func(c *ctrl) { c.w64(csrDescrEP, 0xff) })

	// Addresses: the caching executable's parameters, then the main
	// executable's (a page on); the request's scratch (672 bytes), the
	// three inputs and the three outputs, a page each.
	mainParams := driver.ParameterBase + pageUp(len(caching.Parameters))
	page := func(n int) uint64 { return driver.RequestBase + uint64(n)*4096 }
	var want []dma
	want = append(want, dma{tag: 0, bs: &caching.Bitstreams[0], addr: func(m executable.Meta) (uint64, bool) {
		return driver.ParameterBase, m.Target == executable.ParameterBase
	}, what: "caching instructions"}, dma{tag: 2, data: caching.Parameters, what: "caching parameters"})
	want = append(want, dma{tag: 0, bs: &main.Bitstreams[0], addr: func(m executable.Meta) (uint64, bool) {
		switch m.Target {
		case executable.ParameterBase:
			return mainParams, true
		case executable.ScratchBase:
			return page(0), true
		}
		for i := range main.Inputs {
			if m.Target == executable.InputActivation && m.Layer == main.Inputs[i].Name {
				return page(1 + i), true
			}
		}
		for i := range main.Outputs {
			if m.Target == executable.OutputActivation && m.Layer == main.Outputs[i].Name {
				return page(4 + i), true
			}
		}
		return 0, false
	}, what: "main instructions"}, dma{tag: 2, data: main.Parameters, what: "main parameters"})
	for i := range main.Inputs {
		l := &main.Inputs[i]
		want = append(want, dma{tag: 1, data: program.InputBuffer(l, in[i], l.PaddedBytes()), what: "input " + l.Name})
	}
	checkBulkOut(t, bulkOuts(t, s["0x01"]), want)
	checkQueue(t, "events", s["0x82"], "0x82", 16, 1, []string{
		descriptor(driver.TagParameters, driver.ParameterBase, 43968), event0,
		descriptor(driver.TagParameters, mainParams, 576),
		descriptor(driver.TagInputActivations, page(1), 784),
		descriptor(driver.TagInputActivations, page(2), 24),
		descriptor(driver.TagInputActivations, page(3), 40),
		descriptor(driver.TagOutputActivations, page(4), 16),
		descriptor(driver.TagOutputActivations, page(5), 24),
		descriptor(driver.TagOutputActivations, page(6), 40),
		event0,
	}, false)
	if want := simOutput(&main.Outputs[0], in); !bytes.Equal(out[0], want) {
		t.Errorf("output %q: % x, want the simulator's % x", main.Outputs[0].Name, out[0], want)
	}
	if len(out) != 3 || len(out[1]) != 20 || len(out[2]) != 40 {
		t.Errorf("the state outputs: %d, want 20 and 40 bytes", len(out))
	}
}
