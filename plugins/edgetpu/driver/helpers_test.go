package driver_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/driver/usbtrace"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/testsupport/shared"
)

// pkg reads the package of the only edgetpu-custom-op node of a shared model.
func pkg(t *testing.T, name string) *executable.Package {
	t.Helper()
	return pkgFile(t, shared.Model(t, name))
}

// pkgFile reads the package of the only edgetpu-custom-op node of the
// model file at path.
func pkgFile(t *testing.T, path string) *executable.Package {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Subgraph(0).NumOperators() {
		op := m.Subgraph(0).Operator(i)
		if m.OpCodeOf(op).Custom != executable.CustomOp {
			continue
		}
		co, err := executable.Parse(op.CustomOptions())
		if err != nil {
			t.Fatal(err)
		}
		return co.Packages[0]
	}
	t.Fatalf("%s has no %s node", path, executable.CustomOp)
	return nil
}

// syncBuffer is a trace destination read while the driver writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rig is a simulated device on a simulated bus, the driver's options to
// open it, and the trace of what the driver asks of it.
type rig struct {
	dev   *tpusim.Device
	bus   *tpusim.Bus
	trace *syncBuffer
	opts  driver.Options
}

func newRig(t *testing.T, c tpusim.Config, pkgs ...*executable.Package) *rig {
	t.Helper()
	if c.Bus == 0 {
		c.Bus, c.Address, c.Ports = 2, 5, []int{1, 3}
	}
	r := &rig{dev: tpusim.New(c), trace: &syncBuffer{}}
	r.bus = tpusim.NewBus(r.dev)
	for _, p := range pkgs {
		for _, e := range p.Executables {
			r.bus.Learn(e)
		}
	}
	tr := usbtrace.New(r.trace)
	r.opts = driver.Options{
		Open:       tr.Opener(driver.OpenerAt(driver.AdaptBus[*tpusim.Device](r.bus), r.dev.Info())),
		RetryDelay: -1, // the simulated device comes back from a reset at once
		Timeout:    time.Second,
	}
	return r
}

func (r *rig) open(t *testing.T) *driver.Driver {
	t.Helper()
	d, err := driver.Open(context.Background(), r.opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// traceLine is one line of the trace, less its sequence number.
var traceLine = regexp.MustCompile(`^(\d{6}) (.*)$`)

// streams splits the trace as USB orders it: per endpoint (the key is
// "ctrl" for the control transfers and API calls, "0x01" for bulk out 1,
// "0x81", "0x82", "0x83" for the in endpoints). It checks the sequence
// numbers count from 1, and renumbers the transfers of each stream from 1
// in submission order (their ids interleave across streams in an order
// the goroutines decide).
func streams(t *testing.T, trace string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	ids := map[string]map[string]int{}
	id := regexp.MustCompile(` id=\d+ `)
	ep := regexp.MustCompile(`ep=(0x[0-9a-f]{2})`)
	lines := strings.Split(strings.TrimSuffix(trace, "\n"), "\n")
	for i, l := range lines {
		m := traceLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("trace line %d %q: no sequence number", i+1, l)
		}
		if n, _ := strconv.Atoi(m[1]); n != i+1 {
			t.Fatalf("trace line %d has sequence number %s", i+1, m[1])
		}
		body := m[2]
		key := "ctrl"
		if e := ep.FindStringSubmatch(body); e != nil {
			key = e[1]
		}
		if ids[key] == nil {
			ids[key] = map[string]int{}
		}
		body = id.ReplaceAllStringFunc(body, func(s string) string {
			n, ok := ids[key][s]
			if !ok {
				n = len(ids[key]) + 1
				ids[key][s] = n
			}
			return fmt.Sprintf(" id=%d ", n)
		})
		out[key] = append(out[key], body)
	}
	return out
}

// ctrl builds the expected control transfers and API calls.
type ctrl []string

func (c *ctrl) api(format string, args ...any) { *c = append(*c, "API "+fmt.Sprintf(format, args...)) }

func (c *ctrl) in(rt, req uint8, value, index uint16, data string) {
	*c = append(*c, fmt.Sprintf("CTRL IN  bmRequestType=0x%02x bRequest=0x%02x wValue=0x%04x wIndex=0x%04x wLength=%d result=%d data=%s",
		rt, req, value, index, len(data)/2, len(data)/2, orDash(data)))
}

// inN is a control read whose buffer (wLength) is larger than the answer.
func (c *ctrl) inN(rt, req uint8, value, index uint16, wLength int, data string) {
	*c = append(*c, fmt.Sprintf("CTRL IN  bmRequestType=0x%02x bRequest=0x%02x wValue=0x%04x wIndex=0x%04x wLength=%d result=%d data=%s",
		rt, req, value, index, wLength, len(data)/2, orDash(data)))
}

func (c *ctrl) out(rt, req uint8, value, index uint16, data string) {
	*c = append(*c, fmt.Sprintf("CTRL OUT bmRequestType=0x%02x bRequest=0x%02x wValue=0x%04x wIndex=0x%04x wLength=%d result=%d data=%s",
		rt, req, value, index, len(data)/2, len(data)/2, orDash(data)))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func le(v uint64, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return hex.EncodeToString(b)
}

// The CSR requests of UsbMlCommands (driver/usb/usb_ml_commands.cc):
// vendor requests to the device, bRequest 1 for 32 bits and 0 for 64,
// wValue the offset's low 16 bits, wIndex its high 16, data little-endian.
func (c *ctrl) r32(off uint32, v uint64) { c.in(0xc0, 1, uint16(off), uint16(off>>16), le(v, 4)) }
func (c *ctrl) w32(off uint32, v uint64) { c.out(0x40, 1, uint16(off), uint16(off>>16), le(v, 4)) }
func (c *ctrl) r64(off uint32, v uint64) { c.in(0xc0, 0, uint16(off), uint16(off>>16), le(v, 8)) }
func (c *ctrl) w64(off uint32, v uint64) { c.out(0x40, 0, uint16(off), uint16(off>>16), le(v, 8)) }

// compare reports the first difference between two line lists.
func compare(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s: line %d of %d (want %d):\n got %s\nwant %s", what, i+1, len(got), len(want), clip(g), clip(w))
			return
		}
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
