package edgetpu

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
)

// The two MobileNets edgetpu_compiler compiled together: their
// parameter-caching executables share a caching token, and their
// parameters share the device's memory.
const (
	cocompiledA = "mobilenet_v1_0.25_128_quant_cocompiled_with_mobilenet_v1_0.5_160_quant_edgetpu.tflite"
	cocompiledB = "mobilenet_v1_0.5_160_quant_cocompiled_with_mobilenet_v1_0.25_128_quant_edgetpu.tflite"
	// alone is compiled by itself: another token.
	alone = "mobilenet_v1_0.25_128_quant_edgetpu.tflite"
	// The parameters' sizes in the three models' caching executables.
	paramsA, paramsB = 566912, 1473280
)

// patient gives the driver libedgetpu's transfer timeout, not the short
// one of simDelegate: the models here are large for a loaded machine.
var patient = WithDriverOptions(func(o *driver.Options) { o.Timeout = 6 * time.Second })

// syncBuffer is a trace the test reads while the driver's background
// readers may still write to it.
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

// parameterDMAs lists the lengths of the parameter DMAs in a USB trace: the
// bulk-out headers with descriptor tag 2 (libedgetpu's kParameters).
func parameterDMAs(t *testing.T, trace string) []int {
	t.Helper()
	var out []int
	for _, line := range strings.Split(trace, "\n") {
		if !strings.Contains(line, " BULK_OUT ep=0x01 ") || !strings.Contains(line, " len=8 ") {
			continue
		}
		_, data, _ := strings.Cut(line, " data=")
		h, err := hex.DecodeString(data)
		if err != nil || len(h) != 8 {
			t.Fatalf("trace line %q: a header of %d bytes (%v)", line, len(h), err)
		}
		if h[4] == 2 {
			out = append(out, int(binary.LittleEndian.Uint32(h)))
		}
	}
	return out
}

// TestCocompiledSwitching: switching back and forth between two models
// compiled together on one Edge TPU sends each one's parameters once, the
// first time it runs, as libedgetpu does (their caching token is the one
// cached); switching between models compiled apart sends them every time.
// The USB trace shows it, and every output is the simulator's.
func TestCocompiledSwitching(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want []int // the parameter DMAs of a, b, a, b, a, b
	}{
		{cocompiledA, cocompiledB, []int{paramsA, paramsB}},
		{alone, cocompiledB, nil},
	} {
		t.Run(c.a, func(t *testing.T) {
			var trace syncBuffer
			d, _, _ := simDelegate(t, tpusim.Config{}, WithTrace(&trace), patient)
			a, b := interpreter(t, c.a, d, nil), interpreter(t, c.b, d, nil)
			for run := range 6 {
				it := a
				if run%2 == 1 {
					it = b
				}
				seed := fill(t, it, byte(run))
				if err := it.Invoke(context.Background()); err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				checkSim(t, it, seed)
			}
			got := parameterDMAs(t, trace.String())
			want := c.want
			if want == nil { // each switch loads the other's parameters
				exeA, exeB := parameterBytes(t, c.a), parameterBytes(t, c.b)
				want = []int{exeA, exeB, exeA, exeB, exeA, exeB}
			}
			if !slices.Equal(got, want) {
				t.Errorf("parameter DMAs %v, want %v", got, want)
			}
		})
	}
}

// parameterBytes is the size of a model's cached parameters, from its
// parameter-caching executable.
func parameterBytes(t *testing.T, name string) int {
	t.Helper()
	co, err := executable.Parse(tpuNodeOf(t, name).options)
	if err != nil {
		t.Fatal(err)
	}
	return len(co.Packages[0].Caching().Parameters)
}

// TestCocompiledConcurrent: interpreters of the two co-compiled models,
// each invoked from its own goroutine, take turns on their one device:
// every output is right and the parameters still go out once each.
func TestCocompiledConcurrent(t *testing.T) {
	var trace syncBuffer
	d, _, _ := simDelegate(t, tpusim.Config{}, WithTrace(&trace), patient)
	var wg sync.WaitGroup
	for g, name := range []string{cocompiledA, cocompiledB, cocompiledA} {
		it := interpreter(t, name, d, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for run := range 8 {
				seed := fillQuiet(it, byte(10*g+run))
				if err := it.Invoke(context.Background()); err != nil {
					t.Errorf("goroutine %d run %d: %v", g, run, err)
					return
				}
				if bad := simMismatch(it, seed); bad != "" {
					t.Errorf("goroutine %d run %d: %s", g, run, bad)
				}
			}
		}()
	}
	wg.Wait()
	got := parameterDMAs(t, trace.String())
	// Each interpreter's parameter-caching executable loads once: the two
	// of model A are two registrations, as in libedgetpu.
	count := map[int]int{}
	for _, n := range got {
		count[n]++
	}
	if len(got) != 3 || count[paramsA] != 2 || count[paramsB] != 1 {
		t.Errorf("parameter DMAs %v, want %d twice and %d once", got, paramsA, paramsB)
	}
}

// TestSeveralDevicesInParallel: interpreters on two simulated devices run
// at the same time: each device holds its first input DMA until the
// other's has arrived, which only happens when neither waits for the
// other's invoke to end.
func TestSeveralDevicesInParallel(t *testing.T) {
	var devs []*tpusim.Device
	for i := range 2 {
		devs = append(devs, tpusim.New(tpusim.Config{Bus: 1, Address: 2 + i, Ports: []int{1 + i}}))
	}
	d := New(Simulated(tpusim.NewBus(devs...)))
	t.Cleanup(func() { d.Close() })
	var arrived sync.WaitGroup
	arrived.Add(2)
	met := make(chan struct{})
	go func() { arrived.Wait(); close(met) }()
	for _, dev := range devs {
		var once sync.Once
		dev.InjectFaults(func(op tpusim.Op) tpusim.Fault {
			if op.Kind == "bulk-out" && op.Invoke == 1 {
				once.Do(func() {
					arrived.Done()
					select {
					case <-met:
					case <-time.After(5 * time.Second):
						t.Error("the other device's invoke never started while this one's ran")
					}
				})
			}
			return tpusim.None
		})
	}
	its := make([]*core.Interpreter, len(devs))
	for i := range devs { // both compiled before either runs
		its[i] = interpreter(t, "split_concat_edgetpu.tflite", d, coral("usb:"+strconv.Itoa(i)))
	}
	var wg sync.WaitGroup
	for i, it := range its {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seed := fillQuiet(it, byte(i))
			if err := it.Invoke(context.Background()); err != nil {
				t.Errorf("device %d: %v", i, err)
			} else if bad := simMismatch(it, seed); bad != "" {
				t.Errorf("device %d: %s", i, bad)
			}
		}()
	}
	wg.Wait()
}

// fillQuiet is fill for a goroutine other than the test's: it sets every
// input to a counter and returns the simulator's seed.
func fillQuiet(it *core.Interpreter, start byte) byte {
	var seed byte
	for i := range it.NumInputs() {
		b := it.Input(i).Data()
		for k := range b {
			b[k] = start + byte(3*k+i)
			seed += b[k]
		}
	}
	return seed
}

// simMismatch is checkSim for a goroutine other than the test's: "" when
// every output holds the simulator's counter from seed, else what differs.
func simMismatch(it *core.Interpreter, seed byte) string {
	for i := range it.NumOutputs() {
		for k, v := range it.Output(i).Data() {
			if v != seed+byte(k) {
				return fmt.Sprintf("output %d byte %d is %d, want %d", i, k, v, seed+byte(k))
			}
		}
	}
	return ""
}
