package main_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/examples/plugin/example"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// buildPlugin builds this command as delego-example into a directory of
// its own, as a vendor ships it, and returns the directory.
func buildPlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "delego-"+example.Name), ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// The binary links none of delego's interpreter or CPU kernels: a plugin
// needs only the contract, the transport and the model reader.
func TestLinksNoInterpreter(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/delego/delego" || strings.HasPrefix(pkg, "github.com/delego/delego/core") ||
			strings.HasPrefix(pkg, "github.com/delego/delego/plugins/") {
			t.Errorf("delego-example links %s", pkg)
		}
	}
}

// floats encodes float32 values as tensor data.
func floats(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.NativeEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// writeModel writes the test model into dir and returns its path. Its
// nodes, and where they run with the example delegate:
//
//	0 ADD(x, c)             example
//	1 MUL(a, x) RELU6       example
//	2 TANH                  CPU: the example declares no TANH
//	3 ADD(t, row) broadcast CPU: the finer check refuses to broadcast
//	4 RELU                  example
func writeModel(t *testing.T, dir string, n int) string {
	t.Helper()
	b := modelbuild.New()
	shape := []int{1, n}
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)/4 - 1
	}
	x := b.Tensor("x", tensor.Float32, shape)
	c := b.Const("c", tensor.Float32, shape, floats(vals...))
	row := b.Const("row", tensor.Float32, []int{n}, floats(vals...))
	a := b.Tensor("a", tensor.Float32, shape)
	m := b.Tensor("m", tensor.Float32, shape)
	th := b.Tensor("t", tensor.Float32, shape)
	s := b.Tensor("s", tensor.Float32, shape)
	out := b.Tensor("out", tensor.Float32, shape)
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, c}, []int{a}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Op(schema.BuiltinOperatorMUL, 1, []int{a, x}, []int{m},
		modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeRELU6}))
	b.Op(schema.BuiltinOperatorTANH, 1, []int{m}, []int{th}, nil)
	b.Op(schema.BuiltinOperatorADD, 1, []int{th, row}, []int{s}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Op(schema.BuiltinOperatorRELU, 1, []int{s}, []int{out}, nil)
	b.Inputs(x)
	b.Outputs(out)
	path := filepath.Join(dir, "model.tflite")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// input is the test model's input: n values from -3 upwards.
func input(n int) []byte {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)/2 - 3
	}
	return floats(v...)
}

// invoke runs it once on the test input and returns the output.
func invoke(t *testing.T, it interface {
	SetInputs([][]byte) error
	Invoke(context.Context) error
	Output(int) *core.Tensor
}, n int) []byte {
	t.Helper()
	if err := it.SetInputs([][]byte{input(n)}); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(context.Background()); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	return slices.Clone(it.Output(0).Data())
}

// cpuResult is the test model's output on delego's CPU kernels alone.
func cpuResult(t *testing.T, path string, n int) []byte {
	t.Helper()
	it, err := delego.Open(context.Background(), path, delego.WithDelegates())
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	return invoke(t, it, n)
}

const fallbackOnCompile = `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`

func TestPluginEndToEnd(t *testing.T) {
	dir := buildPlugin(t)
	const n = 12
	path := writeModel(t, t.TempDir(), n)
	want := cpuResult(t, path, n)
	ctx := context.Background()

	t.Run("plan and results", func(t *testing.T) {
		it, err := delego.Open(ctx, path, delego.WithPluginDirs(dir), delego.WithDelegates(example.Name))
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		plan := it.Plan()
		var parts [][]int
		for _, p := range plan.Partitions {
			if p.Delegate != example.Name {
				t.Errorf("partition on %q", p.Delegate)
			}
			parts = append(parts, p.Nodes)
		}
		if !slices.EqualFunc(parts, [][]int{{0, 1}, {4}}, slices.Equal) {
			t.Errorf("partitions %v, want [[0 1] [4]]", parts)
		}
		for node, reason := range map[int]string{
			2: "example: TANH v1: example does not support this op",
			3: "example: ADD: input 1 has shape [12] and the output [1 12]; the example device does not broadcast",
		} {
			if got := plan.Nodes[node].Reasons; len(got) != 1 || got[0] != reason {
				t.Errorf("node %d stayed on the CPU for %q, want %q", node, got, reason)
			}
		}
		if got := invoke(t, it, n); !slices.Equal(got, want) {
			t.Errorf("output %v, want the CPU's %v", got, want)
		}
		if fb := it.Fallbacks(); len(fb) != 0 {
			t.Errorf("fallbacks: %v", fb)
		}
	})

	// The package delegate's rule: an executable only sees the shapes it
	// was compiled for, and a resize that changes them fails.
	t.Run("resize", func(t *testing.T) {
		it, err := delego.Open(ctx, path, delego.WithPluginDirs(dir), delego.WithDelegates(example.Name))
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		if err := it.ResizeInput(0, []int{2, n}); err != nil {
			t.Fatal(err)
		}
		err = it.AllocateTensors()
		if err == nil || !strings.Contains(err.Error(), "partition 0 (example) was compiled for tensor") ||
			!strings.Contains(err.Error(), "resizing delegated tensors is not supported") {
			t.Errorf("got %v, want an error naming the partition that a resize would change", err)
		}
	})

	t.Run("version and devices", func(t *testing.T) {
		t.Setenv(example.EnvDevices, "2")
		c, err := plugin.Open(ctx, filepath.Join(dir, "delego-"+example.Name), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		info := c.Info()
		var devs []string
		for _, d := range info.Devices {
			devs = append(devs, d.Name)
		}
		if info.Version != example.Version || !info.Usable || !info.HasChecker || !slices.Equal(devs, []string{"example0", "example1"}) {
			t.Errorf("the plugin says %+v", info)
		}
	})

	t.Run("no device", func(t *testing.T) {
		t.Setenv(example.EnvDevices, "0")
		_, err := delego.Open(ctx, path, delego.WithPluginDirs(dir), delego.WithDelegates(example.Name))
		if !errors.Is(err, delegate.ErrNoDevice) || !strings.Contains(err.Error(), "no example device is plugged in") {
			t.Errorf("got %v, want the plugin's no-device error", err)
		}
	})

	t.Run("no device, with fallback", func(t *testing.T) {
		t.Setenv(example.EnvDevices, "0")
		it, err := delego.Open(ctx, path, delego.WithPluginDirs(dir), delego.WithDelegates(example.Name),
			delego.WithSettingsData([]byte(fallbackOnCompile)))
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		fb := it.Fallbacks()
		for _, e := range fb {
			if e.Stage != delegate.StageCompile || !errors.Is(e.Err, delegate.ErrNoDevice) {
				t.Errorf("fallback %v, want one for want of a device", e)
			}
		}
		if len(fb) == 0 {
			t.Error("no fallback recorded: the CPU ran the model without saying why")
		}
		if got := invoke(t, it, n); !slices.Equal(got, want) {
			t.Errorf("output %v, want the CPU's %v", got, want)
		}
	})

	t.Run("compile error falls back", func(t *testing.T) {
		big := example.DeviceMemory / 4 // one tensor fills the device
		bigPath := writeModel(t, t.TempDir(), big)
		it, err := delego.Open(ctx, bigPath, delego.WithPluginDirs(dir), delego.WithDelegates(example.Name),
			delego.WithSettingsData([]byte(fallbackOnCompile)))
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		fb := it.Fallbacks()
		if len(fb) != 2 || fb[0].Stage != delegate.StageCompile || fb[0].Outcome != delegate.MovedToCPU ||
			!strings.Contains(fb[0].Err.Error(), "the example device holds") {
			t.Fatalf("fallbacks %v, want both partitions moved to the CPU for want of device memory", fb)
		}
		if got, want := invoke(t, it, big), cpuResult(t, bigPath, big); !slices.Equal(got, want) {
			t.Error("the fallen-back run differs from the CPU's")
		}
	})

	t.Run("interpreters share a process", func(t *testing.T) {
		c, err := plugin.Open(ctx, filepath.Join(dir, "delego-"+example.Name), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		m, err := model.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		const interpreters, runs = 4, 50
		var wg sync.WaitGroup
		errs := make(chan error, interpreters)
		for range interpreters {
			it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{c}})
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			if got := len(it.Plan().Partitions); got != 2 {
				t.Fatalf("%d partitions, want 2 on the shared plugin", got)
			}
			if err := it.AllocateTensors(); err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				for range runs {
					if err := it.SetInputs([][]byte{input(n)}); err != nil {
						errs <- err
						return
					}
					if err := it.Invoke(ctx); err != nil {
						errs <- err
						return
					}
					if !slices.Equal(it.Output(0).Data(), want) {
						errs <- errors.New("an interpreter sharing the plugin got a wrong output")
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
