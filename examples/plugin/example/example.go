// Package example is a delego delegate for a pretend accelerator, written
// to show a vendor how a plugin is made; docs/writing-a-plugin.md walks
// through it. Its "device" runs ADD, MUL and RELU on float32 tensors in
// plain Go. $DELEGO_EXAMPLE_DEVICES says how many devices are plugged in
// (1 when unset); 0 unplugs them, and the delegate then says it cannot run
// here, as a real driver does when its hardware is absent.
//
// The binary that serves it, delego-example, is cmd/delego-example: its
// main is the one line plugin.Serve(example.New()).
package example

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Name is the delegate's name: what settings and --delegate select, and
// the NAME in its binary's name, delego-NAME.
const Name = "example"

// Version is the plugin's version, which `delego plugins` shows.
const Version = "0.1.0"

// EnvDevices names the environment variable that says how many pretend
// devices are plugged in.
const EnvDevices = "DELEGO_EXAMPLE_DEVICES"

// DeviceMemory is how many bytes of tensors the pretend device holds: a
// partition that needs more fails to compile, and the host falls back to
// its CPU kernels when the settings allow it.
const DeviceMemory = 4 << 20

// OptionThreads is the option that sets how many goroutines one Invoke
// uses: --delegate-option example:threads=4 on the command line.
const OptionThreads = "threads"

// Delegate is the example accelerator's delegate. It holds no state, so
// its methods are safe for concurrent use, as the host needs: several
// interpreters may ask one plugin process for support, or compile in it,
// at the same time.
type Delegate struct{}

// New returns the example delegate.
func New() *Delegate { return &Delegate{} }

// Name is the delegate's name, Name.
func (*Delegate) Name() string { return Name }

// Version is the plugin's version, Version. The plugin transport reports
// it when a delegate has this method; without it, the binary's module
// version.
func (*Delegate) Version() string { return Version }

// Close releases the delegate: nothing to release here. In a plugin
// process, the host's Close ends the process.
func (*Delegate) Close() error { return nil }

// Support declares what the device runs: each op at the versions whose
// semantics the kernels implement (version 1 of all three is their float
// form; later versions add integer types) and float32 tensors only. The
// host never offers a node outside this declaration.
//
// Without a device it still declares the ops, beside the error that says
// why it cannot run: a plugin's host then plans as if the device were
// there (delego plan shows the partitions it would take), and Compile
// fails with that error, which the fallback settings decide on.
func (*Delegate) Support(context.Context) (*delegate.Support, error) {
	float32Only := []tensor.DType{tensor.Float32}
	v1 := tensor.VersionRange{Min: 1, Max: 1}
	sup := &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{
		schema.BuiltinOperatorADD:  {Versions: v1, Types: float32Only},
		schema.BuiltinOperatorMUL:  {Versions: v1, Types: float32Only},
		schema.BuiltinOperatorRELU: {Versions: v1, Types: float32Only},
	}}
	if _, err := devices(); err != nil {
		return sup, err
	}
	return sup, nil
}

// Devices lists the pretend devices, for `delego plugins`.
func (*Delegate) Devices(context.Context) ([]delegate.Device, error) {
	n, err := devices()
	if err != nil {
		return nil, err
	}
	devs := make([]delegate.Device, n)
	for i := range devs {
		devs[i] = delegate.Device{Name: fmt.Sprintf("example%d", i), Description: "pretend accelerator (float32 ADD, MUL, RELU)"}
	}
	return devs, nil
}

// devices is how many devices $DELEGO_EXAMPLE_DEVICES plugs in: an error
// wrapping delegate.ErrNoDevice when there are none, and an error naming
// the variable when its value is not a count.
func devices() (int, error) {
	v, ok := os.LookupEnv(EnvDevices)
	if !ok {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n < 0:
		return 0, fmt.Errorf("$%s=%q: want a count of devices, such as 1", EnvDevices, v)
	case n == 0:
		return 0, fmt.Errorf("%w: no example device is plugged in ($%s=0)", delegate.ErrNoDevice, EnvDevices)
	}
	return n, nil
}

// Honours lists the settings fields the delegate reads: the CPU's thread
// count, the default for the threads option.
func (*Delegate) Honours() []string { return []string{"cpu_settings.num_threads"} }

// Options lists the options the delegate takes.
func (*Delegate) Options() []delegate.Option {
	return []delegate.Option{{Name: OptionThreads,
		Description: "goroutines one Invoke uses (a whole number from 1 to 64; default cpu_settings.num_threads, else 1)"}}
}

// CheckNodes is the finer check, beyond the declared Support: the host
// sends the whole model once, with every node that passed Support. The
// device adds and multiplies tensors of one shape only, and fuses no
// activation but RELU, RELU6 and RELU_N1_TO_1.
func (*Delegate) CheckNodes(_ context.Context, data []byte, nodes []int) ([]delegate.Verdict, error) {
	m, err := model.New(data)
	if err != nil {
		return nil, err
	}
	sg := m.Subgraph(0)
	verdicts := make([]delegate.Verdict, len(nodes))
	for i, n := range nodes {
		if n < 0 || n >= sg.NumOperators() {
			return nil, fmt.Errorf("node %d: the model's first subgraph has %d operators", n, sg.NumOperators())
		}
		if _, err := stepOf(m, sg.Operator(n)); err != nil {
			verdicts[i].Reason = err.Error()
			continue
		}
		verdicts[i].Accept = true
	}
	return verdicts, nil
}

// Compile turns a partition into a program for the device. An error here
// is a compilation error: with fallback on compilation errors allowed,
// the partition's nodes run on delego's CPU kernels instead.
func (*Delegate) Compile(_ context.Context, p *delegate.Partition) (delegate.Executable, error) {
	if _, err := devices(); err != nil {
		return nil, err
	}
	threads, err := threadsFor(p)
	if err != nil {
		return nil, err
	}
	m, err := model.New(p.Model)
	if err != nil {
		return nil, fmt.Errorf("read the partition: %w", err)
	}
	return newProgram(m, threads)
}

// maxThreads bounds the threads option.
const maxThreads = 64

// threadsFor reads how many goroutines an Invoke of p uses: the threads
// option, else the settings' cpu_settings.num_threads, else 1.
func threadsFor(p *delegate.Partition) (int, error) {
	v, ok := p.Options[OptionThreads]
	if !ok {
		return min(max(int(p.Settings.GetCpuSettings().GetNumThreads()), 1), maxThreads), nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxThreads {
		return 0, fmt.Errorf("option %s=%q: want a whole number from 1 to %d", OptionThreads, v, maxThreads)
	}
	return n, nil
}
