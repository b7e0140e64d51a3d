package plugin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
	"google.golang.org/protobuf/proto"
)

// open opens a built plugin and closes it when the test ends.
func open(t *testing.T, name string, opts *plugin.Options) *plugin.Client {
	t.Helper()
	c, err := plugin.Open(t.Context(), pluginPath(name), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// interp makes an interpreter for a golden case's model with delegates d
// and settings s, its inputs set from the golden input.
func interp(t *testing.T, gc shared.GoldenCase, s *config.TFLiteSettings, d ...delegate.Delegate) (*core.Interpreter, error) {
	t.Helper()
	return interpOptions(t, gc, &core.Options{Delegates: d, Settings: s})
}

// interpOptions is interp with every option given.
func interpOptions(t *testing.T, gc shared.GoldenCase, opts *core.Options) (*core.Interpreter, error) {
	t.Helper()
	m, err := model.Load(shared.Model(t, gc.Model))
	if err != nil {
		t.Fatal(err)
	}
	it, err := core.NewInterpreterContext(t.Context(), m, opts)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { it.Close() })
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	in := shared.ReadGolden(t, gc.InputFile)
	for i, gi := range gc.Inputs {
		if err := it.Input(i).CopyFrom(in[gi.Offset : gi.Offset+gi.Bytes]); err != nil {
			t.Fatal(err)
		}
	}
	return it, nil
}

// outputs concatenates an interpreter's outputs.
func outputs(it *core.Interpreter) []byte {
	var out []byte
	for i := range it.NumOutputs() {
		out = append(out, it.Output(i).Data()...)
	}
	return out
}

// cpuOutputs runs a golden case on the CPU kernels alone.
func cpuOutputs(t *testing.T, gc shared.GoldenCase) []byte {
	t.Helper()
	it, err := interp(t, gc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	return outputs(it)
}

// fallback returns settings with the given fallbacks allowed.
func fallback(onCompile, onExecute bool) *config.TFLiteSettings {
	return &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{
		AllowAutomaticFallbackOnCompilationError: proto.Bool(onCompile),
		AllowAutomaticFallbackOnExecutionError:   proto.Bool(onExecute),
	}}
}

func TestDescribe(t *testing.T) {
	c := open(t, "cpu", nil)
	info := c.Info()
	if info.Name != "cpu" || info.Protocol != plugin.ProtocolVersion || !info.Usable || info.HasChecker ||
		info.Path != pluginPath("cpu") || info.Version == "" {
		t.Errorf("info %+v", info)
	}
	if len(info.Devices) != 1 || info.Devices[0].Name != "cpu" {
		t.Errorf("devices %+v", info.Devices)
	}
	// The cpu plugin supports every op the core supports, at the same versions.
	want, err := cpu.New().Support(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Support(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Builtins) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("declared support differs from the core's:\n got %v\nwant %v", got, want)
	}
	if c.Name() != "cpu" || c.Starts() != 1 || c.Pid() == 0 {
		t.Errorf("name %q, starts %d, pid %d", c.Name(), c.Starts(), c.Pid())
	}
}

// TestOutputsMatchInProcess runs models through the cpu plugin with every
// tensor inline, every tensor in shared memory, and the default threshold,
// with the doorbell and with gRPC Invokes: the bytes equal the in-process
// run's, invoke after invoke.
func TestOutputsMatchInProcess(t *testing.T) {
	for _, name := range []string{"split_concat__seed1", "mobilenet_v1_0.25_128_quant__cat_128", "keras_lstm_mnist_ptq__digit7"} {
		gc := shared.GoldenCaseNamed(t, name)
		inProc, err := interp(t, gc, nil, cpu.New())
		if err != nil {
			t.Fatal(err)
		}
		var want [][]byte
		for range 2 {
			if err := inProc.Invoke(t.Context()); err != nil {
				t.Fatal(err)
			}
			want = append(want, outputs(inProc))
		}
		for _, o := range []struct {
			th     int
			noBell bool
		}{{-1, false}, {1, false}, {0, false}, {1, true}, {0, true}} {
			t.Run(fmt.Sprintf("%s/threshold=%d/nodoorbell=%v", name, o.th, o.noBell), func(t *testing.T) {
				c := open(t, "cpu", &plugin.Options{ShmThreshold: o.th, NoDoorbell: o.noBell, ShmDir: t.TempDir()})
				it, err := interp(t, gc, nil, c)
				if err != nil {
					t.Fatal(err)
				}
				if p := it.Plan(); len(p.Partitions) != 1 || len(p.CPUNodes) != 0 {
					t.Fatalf("plan:\n%s", it.Report().Text())
				}
				for i, w := range want {
					if err := it.Invoke(t.Context()); err != nil {
						t.Fatal(err)
					}
					if got := outputs(it); !bytes.Equal(got, w) {
						t.Errorf("invoke %d: outputs differ from the in-process run", i+1)
					}
				}
				if ev := it.Fallbacks(); len(ev) != 0 {
					t.Errorf("fallbacks: %v", ev)
				}
			})
		}
	}
	checkNoPlugins(t)
}

// TestSharedMemoryIsPrivate checks the regions: by default memfds, which
// never have a name, sent to the plugin over its region channel and mapped
// by it as such; for a plugin without the channel, files made 0600 in
// ShmDir, unlinked once the plugin has mapped them. Either way ShmDir is
// empty afterwards, and closing the interpreter unmaps the region in the
// plugin.
func TestSharedMemoryIsPrivate(t *testing.T) {
	for _, c := range []struct {
		name   string
		byPath bool
		mapped string // what names the region in the plugin's maps
	}{
		{"memfd", false, "/memfd:delego-region (deleted)"},
		{"file", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := &plugin.Options{ShmThreshold: 1, ShmDir: dir}
			if c.byPath {
				plugin.RegionsByPath(opts)
			}
			p := open(t, "cpu", opts)
			it, err := interp(t, shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128"), nil, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := it.Invoke(t.Context()); err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("region files left in %s: %v", dir, left)
			}
			name := c.mapped
			if name == "" {
				name = dir
			}
			maps, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/maps")
			if err != nil {
				t.Fatal(err)
			}
			var mapped []string
			for _, l := range strings.Split(string(maps), "\n") {
				if strings.Contains(l, name) {
					mapped = append(mapped, l)
				}
			}
			if len(mapped) != 1 || !strings.HasSuffix(mapped[0], "(deleted)") || !strings.Contains(mapped[0], "rw-s") {
				t.Errorf("plugin's mappings of %s: %q; want one shared, deleted file", name, mapped)
			}
			// Closing the interpreter releases the region in the plugin too.
			it.Close()
			maps, _ = os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/maps")
			if strings.Contains(string(maps), name) {
				t.Error("the plugin still maps the region after the executable was closed")
			}
		})
	}
}

// TestCloseReaps checks that Close ends the plugin process and reaps it: no
// zombie is left.
func TestCloseReaps(t *testing.T) {
	c, err := plugin.Open(t.Context(), pluginPath("cpu"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := c.Pid()
	if _, _, _, ok := procStat(pid); !ok {
		t.Fatalf("plugin process %d not found", pid)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, state, ok := procStat(pid); ok {
		t.Errorf("process %d still exists after Close (state %s)", pid, state)
	}
	if _, err := c.Compile(t.Context(), &delegate.Partition{}); !errors.Is(err, plugin.ErrClosed) {
		t.Errorf("Compile after Close: %v, want ErrClosed", err)
	}
	checkNoPlugins(t)
}

// TestConcurrentInterpreters shares one plugin process between interpreters
// that are made, invoked and closed on many goroutines at once (run it with
// -race): compiles, invokes and releases interleave in the one process.
func TestConcurrentInterpreters(t *testing.T) {
	c := open(t, "cpu", &plugin.Options{ShmDir: t.TempDir()})
	type job struct {
		name  string
		model *model.Model
		input []byte
		want  []byte
	}
	var jobs []job
	for _, name := range []string{"split_concat__seed1", "mobilenet_v1_0.25_128_quant__cat_128"} {
		gc := shared.GoldenCaseNamed(t, name)
		m, err := model.Load(shared.Model(t, gc.Model))
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{name, m, shared.ReadGolden(t, gc.InputFile), cpuOutputs(t, gc)})
	}
	// run makes an interpreter for j on c, invokes it n times and closes it.
	run := func(j job, n int) error {
		it, err := core.NewInterpreterContext(t.Context(), j.model, &core.Options{Delegates: []delegate.Delegate{c}})
		if err != nil {
			return err
		}
		defer it.Close()
		if err := it.AllocateTensors(); err != nil {
			return err
		}
		off := 0
		for i := range it.NumInputs() {
			n := len(it.Input(i).Data())
			if err := it.Input(i).CopyFrom(j.input[off : off+n]); err != nil {
				return err
			}
			off += n
		}
		for i := range n {
			if err := it.Invoke(t.Context()); err != nil {
				return err
			}
			if !bytes.Equal(outputs(it), j.want) {
				return fmt.Errorf("%s: outputs differ on invoke %d", j.name, i)
			}
		}
		if ev := it.Fallbacks(); len(ev) != 0 {
			return fmt.Errorf("fallbacks: %v", ev)
		}
		return nil
	}
	const goroutines, rounds, invokes = 8, 3, 4
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*rounds)
	for g := range goroutines {
		wg.Go(func() {
			for r := range rounds {
				if err := run(jobs[(g+r)%len(jobs)], invokes); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c.Starts() != 1 {
		t.Errorf("%d plugin processes started, want 1 shared", c.Starts())
	}
}

func TestAutoMTLS(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	c := open(t, "cpu", &plugin.Options{AutoMTLS: true})
	it, err := interp(t, gc, nil, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(outputs(it), cpuOutputs(t, gc)) {
		t.Error("outputs differ over mTLS")
	}
}

func TestOpenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := plugin.Open(ctx, pluginPath("cpu"), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context: %v", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	if _, err := plugin.Open(ctx, pluginPath("cpu"), nil); err == nil {
		t.Error("Open after the deadline succeeded")
	}
	checkNoPlugins(t)
}

// TestFinerCheck: a plugin with a finer support check is asked once per
// model over the wire, and its refusals shape the plan.
func TestFinerCheck(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	p := open(t, "fault-checker", nil)
	if !p.Info().HasChecker {
		t.Fatal("the plugin's checker was not declared")
	}
	it, err := interp(t, gc, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	plan := it.Plan()
	var onCPU []int
	for _, n := range plan.CPUNodes {
		onCPU = append(onCPU, n.Node)
	}
	if !strings.Contains(it.Report().Text(), "fault plugin refuses odd node 1") || !slices.Equal(onCPU, []int{1}) {
		t.Errorf("plan:\n%s", it.Report().Text())
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(outputs(it), cpuOutputs(t, gc)) {
		t.Error("outputs differ from the CPU's")
	}
}

// TestDoorbell compiles a model as one partition and invokes it directly:
// by default every Invoke rings the region's doorbell instead of making a
// gRPC call; with NoDoorbell or everything inline none does. The outputs
// equal the in-process delegate's either way.
func TestDoorbell(t *testing.T) {
	data, err := os.ReadFile(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(data)
	if err != nil {
		t.Fatal(err)
	}
	sg := m.Subgraph(0)
	tensors := func(ids []int, fill byte) []*tensor.Tensor {
		var ts []*tensor.Tensor
		for _, id := range ids {
			ti := sg.Tensor(id)
			kt := &tensor.Tensor{Type: ti.Type, Shape: ti.Shape}
			kt.Data = make([]byte, kt.Bytes())
			for i := range kt.Data {
				kt.Data[i] = fill + byte(i*7)
			}
			ts = append(ts, kt)
		}
		return ts
	}
	ref, err := cpu.New().Compile(t.Context(), &delegate.Partition{Model: data})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, c := range []struct {
		name string
		opts plugin.Options
		bell bool
	}{
		{"default", plugin.Options{}, true},
		{"NoDoorbell", plugin.Options{NoDoorbell: true}, false},
		{"inline", plugin.Options{ShmThreshold: -1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.ShmDir = t.TempDir()
			p := open(t, "cpu", &c.opts)
			exe, err := p.Compile(t.Context(), &delegate.Partition{Model: data})
			if err != nil {
				t.Fatal(err)
			}
			defer exe.Close()
			for i := range 3 {
				in := tensors(sg.Inputs(), byte(i))
				want, got := tensors(sg.Outputs(), 0), tensors(sg.Outputs(), 0)
				if err := ref.Invoke(t.Context(), in, want); err != nil {
					t.Fatal(err)
				}
				if err := exe.Invoke(t.Context(), in, got); err != nil {
					t.Fatal(err)
				}
				for o := range got {
					if !bytes.Equal(got[o].Data, want[o].Data) {
						t.Errorf("invoke %d: output %d differs from the in-process delegate's", i+1, o)
					}
				}
			}
			rings, on := plugin.DoorbellRings(exe)
			if want := map[bool]int{true: 3, false: 0}[c.bell]; on != c.bell || rings != want {
				t.Errorf("doorbell %v, %d rings; want %v, %d", on, rings, c.bell, want)
			}
			// Between invokes the plugin polls the doorbell for a moment at
			// most: idle, it sleeps.
			time.Sleep(50 * time.Millisecond)
			before := cpuTicks(t, p.Pid())
			time.Sleep(500 * time.Millisecond)
			if used := cpuTicks(t, p.Pid()) - before; used > 10 {
				t.Errorf("the idle plugin used %d clock ticks of CPU in 0.5 s", used)
			}
		})
	}
}

// cpuTicks is the CPU time process pid has used, user and system, in clock
// ticks (/proc/PID/stat).
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return utime + stime
}
