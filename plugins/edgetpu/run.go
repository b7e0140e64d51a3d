package edgetpu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/edgetpu/driver"
	"github.com/delego/delego/plugins/edgetpu/driver/usbtrace"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/plugins/edgetpu/executable"
	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/plugins/edgetpu/tpusim"
	"github.com/delego/delego/plugins/edgetpu/usb"
	"github.com/delego/delego/tensor"
)

// This file is part 2 of the plugin: compiled partitions run on the device
// through plugins/edgetpu/driver. The delegate opens each device once and
// shares it between the partitions compiled for it; a partition whose run
// fails closes the device, and the next run opens it again (which resets
// it, loading its firmware again when it needs it).

// runtime is what the delegate holds between compilations.
type runtime struct {
	mu        sync.Mutex
	devices   map[string]*openDevice // by location
	firmware  string                 // edgetpuinfo.EnvFirmware
	trace     io.Writer              // WithTrace
	tracePath string                 // edgetpuinfo.EnvTrace, opened on first use
	traceFile *os.File
	tracer    *usbtrace.Tracer
	tune      func(*driver.Options)
	sim       *tpusim.Bus // Simulated
	twins                 // the CPU twins the simulator computes from (simtwin.go)
}

// openDevice is a device open for the partitions compiled for it.
type openDevice struct {
	drv  *driver.Driver
	refs int
}

func newRuntime() *runtime { return &runtime{devices: map[string]*openDevice{}} }

// WithFirmware names the firmware image for devices waiting for one, where
// coral_settings.firmware_path names none.
func WithFirmware(path string) Option { return func(d *Delegate) { d.run.firmware = path } }

// WithTrace writes every USB operation of the delegate's devices to w, in
// the format of package usbtrace.
func WithTrace(w io.Writer) Option { return func(d *Delegate) { d.run.trace = w } }

// WithDriverOptions adjusts the driver's options (timeouts, retry delays)
// after the settings have set them.
func WithDriverOptions(f func(*driver.Options)) Option { return func(d *Delegate) { d.run.tune = f } }

// Simulated runs the delegate on a bus of simulated devices (package
// tpusim); Compile teaches them the executables it compiles.
func Simulated(b *tpusim.Bus) Option {
	return func(d *Delegate) {
		d.bus = driver.AdaptBus[*tpusim.Device](b)
		d.run.sim = b
	}
}

// EnvOptions reads the delegate's environment variables (edgetpuinfo's
// EnvDevice, EnvFirmware, EnvTrace) through lookup (os.LookupEnv).
func EnvOptions(lookup func(string) (string, bool)) ([]Option, error) {
	var opts []Option
	sim, err := envSim(lookup)
	if err != nil {
		return nil, err
	}
	if sim != nil {
		opts = append(opts, Simulated(sim))
	}
	if v, ok := lookup(edgetpuinfo.EnvFirmware); ok && v != "" {
		opts = append(opts, WithFirmware(v))
	}
	if v, ok := lookup(edgetpuinfo.EnvTrace); ok && v != "" {
		opts = append(opts, func(d *Delegate) { d.run.tracePath = v })
	}
	if v, ok := lookup(edgetpuinfo.EnvTwin); ok && v != "" {
		if sim == nil {
			return nil, fmt.Errorf("$%s=%q names CPU twins for a simulated Edge TPU, but $%s does not ask for one (sim)", edgetpuinfo.EnvTwin, v, edgetpuinfo.EnvDevice)
		}
		opts = append(opts, WithTwins(filepath.SplitList(v)...))
	}
	return opts, nil
}

// EnvBus is the bus edgetpuinfo.EnvDevice names: a simulated one, or nil
// for the host's.
func EnvBus(lookup func(string) (string, bool)) (Bus, error) {
	sim, err := envSim(lookup)
	if sim == nil || err != nil {
		return nil, err
	}
	return driver.AdaptBus[*tpusim.Device](sim), nil
}

// envSim is the simulated bus edgetpuinfo.EnvDevice asks for, nil for none.
func envSim(lookup func(string) (string, bool)) (*tpusim.Bus, error) {
	v, ok := lookup(edgetpuinfo.EnvDevice)
	if !ok || v == "" || v == "usb" {
		return nil, nil
	}
	c, n, err := parseSim(v)
	if err != nil {
		return nil, fmt.Errorf("$%s=%q: %w", edgetpuinfo.EnvDevice, v, err)
	}
	return tpusim.NewBus(simDevices(c, n)...), nil
}

// MaxSimulated is the most simulated devices DELEGO_EDGETPU_DEVICE=sim:N
// plugs in.
const MaxSimulated = 16

// simDevices are n simulated devices made after c, each at its own address
// and port (bus 1, address 2, port 1 for the first; then 3 and 2, ...), so
// that Devices names them usb:0, usb:1, ... in that order.
func simDevices(c tpusim.Config, n int) []*tpusim.Device {
	devs := make([]*tpusim.Device, n)
	for i := range devs {
		ci := c
		ci.Address, ci.Ports = c.Address+i, []int{c.Ports[0] + i}
		devs[i] = tpusim.New(ci)
	}
	return devs
}

// parseSim reads "sim" or "sim-dfu", then optionally a colon and the number
// of devices (1 when absent), then optionally a colon and the faults every
// device injects (each counting its own invokes): sim, sim:2,
// sim:unplug-after=3, sim-dfu:2:stall-after=0.
func parseSim(v string) (tpusim.Config, int, error) {
	c := tpusim.Config{Bus: 1, Address: 2, Ports: []int{1}}
	kind, rest, hasRest := strings.Cut(v, ":")
	switch kind {
	case "sim":
	case "sim-dfu":
		c.WaitForFirmware = true
	default:
		return c, 0, errors.New("want sim (a simulated Coral USB Accelerator), sim-dfu (one waiting for its firmware) or usb, " +
			"the simulated ones optionally followed by a number of devices and faults to inject, as in sim:2 or sim:unplug-after=3")
	}
	count, faults, hasFaults := strings.Cut(rest, ":")
	n := 1
	if count != "" && !strings.Contains(count, "=") {
		var err error
		if n, err = strconv.Atoi(count); err != nil || n < 1 || n > MaxSimulated || strings.HasPrefix(count, "+") {
			return c, 0, fmt.Errorf("%q is not a number of simulated devices (1 to %d)", count, MaxSimulated)
		}
	} else {
		faults, hasFaults = rest, hasRest
	}
	if !hasFaults {
		return c, n, nil
	}
	var err error
	if c.Busy, faults, err = cutBusy(faults); err != nil {
		return c, 0, err
	}
	if faults == "" && c.Busy > 0 {
		return c, n, nil
	}
	if c.Faults, err = tpusim.ParseFaults(faults); err != nil {
		return c, 0, fmt.Errorf("the simulated device's faults: %w", err)
	}
	return c, n, nil
}

// cutBusy takes "busy=DURATION" (tpusim.Config.Busy: how long each invoke
// computes) out of a comma-separated list and returns the rest.
func cutBusy(list string) (time.Duration, string, error) {
	var busy time.Duration
	var rest []string
	for _, item := range strings.Split(list, ",") {
		v, ok := strings.CutPrefix(item, "busy=")
		if !ok {
			rest = append(rest, item)
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, "", fmt.Errorf("busy=%s: want how long each invoke computes, a duration above 0 (5ms, 20ms)", v)
		}
		busy = d
	}
	return busy, strings.Join(rest, ","), nil
}

// IsSimulated reports whether the delegate runs on simulated devices,
// whose outputs are the model's only when computed from CPU twins
// (ComputesFromTwins).
func (d *Delegate) IsSimulated() bool { return d.run.sim != nil }

// ComputesFromTwins reports whether the simulated devices compute each
// custom op's outputs from CPU twins (WithTwins).
func (d *Delegate) ComputesFromTwins() bool { return d.run.sim != nil && len(d.run.paths) > 0 }

// Performance maps CoralSettings.performance to the driver's level.
func Performance(p config.CoralSettings_Performance) driver.Performance {
	switch p {
	case config.CoralSettings_HIGH:
		return driver.PerformanceHigh
	case config.CoralSettings_MEDIUM:
		return driver.PerformanceMedium
	case config.CoralSettings_LOW:
		return driver.PerformanceLow
	}
	return driver.PerformanceMax
}

// tracerLocked returns the tracer, opening the trace file on first use.
func (r *runtime) tracerLocked() (*usbtrace.Tracer, error) {
	if r.tracer != nil {
		return r.tracer, nil
	}
	w := r.trace
	if w == nil && r.tracePath != "" {
		f, err := os.Create(r.tracePath)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", edgetpuinfo.EnvTrace, err)
		}
		r.traceFile, w = f, f
	}
	if w == nil {
		return nil, nil
	}
	r.tracer = usbtrace.New(w)
	return r.tracer, nil
}

// options are the driver's options for a device and the settings.
func (d *Delegate) options(dev Device, s Settings) (driver.Options, error) {
	o := driver.Options{
		Open:         driver.OpenerAt(d.bus, dev.Info),
		Performance:  Performance(s.Performance),
		AlwaysDFU:    s.AlwaysDFU,
		FirmwarePath: s.FirmwarePath,
		BulkInQueue:  s.BulkInQueue,
	}
	if o.FirmwarePath == "" {
		o.FirmwarePath = d.run.firmware
	}
	if d.run.sim != nil {
		// A simulated device comes back from a reset at once.
		o.RetryDelay = -1
	}
	if s.BulkInQueue > driver.MaxBulkInQueue {
		return o, fmt.Errorf("coral_settings.usb_max_bulk_in_queue_length %d: at most %d", s.BulkInQueue, driver.MaxBulkInQueue)
	}
	if d.run.tune != nil {
		d.run.tune(&o)
	}
	return o, nil
}

// acquire returns the open driver of dev, opening it when no partition
// holds it.
func (d *Delegate) acquire(ctx context.Context, dev Device, o driver.Options, ref bool) (*driver.Driver, error) {
	r := d.run
	r.mu.Lock()
	defer r.mu.Unlock()
	key := dev.Location()
	sh := r.devices[key]
	if sh == nil {
		sh = &openDevice{}
		r.devices[key] = sh
	}
	if ref {
		sh.refs++
	}
	if sh.drv != nil {
		return sh.drv, nil
	}
	tr, err := r.tracerLocked()
	if err != nil {
		return nil, err
	}
	if tr != nil {
		o.Open = tr.Opener(o.Open)
	}
	drv, err := driver.Open(ctx, o)
	if err != nil {
		return nil, explainAccess(dev.Info, err)
	}
	sh.drv = drv
	return drv, nil
}

// drop closes a driver that failed, so that the next run opens the device
// again.
func (d *Delegate) drop(dev Device, drv *driver.Driver) {
	r := d.run
	r.mu.Lock()
	defer r.mu.Unlock()
	if sh := r.devices[dev.Location()]; sh != nil && sh.drv == drv {
		sh.drv = nil
	}
	_ = drv.Close()
}

// releaseRef forgets a partition's hold on dev, closing it with the last.
func (d *Delegate) releaseRef(dev Device) error {
	r := d.run
	r.mu.Lock()
	defer r.mu.Unlock()
	key := dev.Location()
	sh := r.devices[key]
	if sh == nil {
		return nil
	}
	if sh.refs--; sh.refs > 0 {
		return nil
	}
	delete(r.devices, key)
	if sh.drv != nil {
		return sh.drv.Close()
	}
	return nil
}

// close closes every device and the trace file.
func (r *runtime) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for key, sh := range r.devices {
		if sh.drv != nil {
			errs = append(errs, sh.drv.Close())
		}
		delete(r.devices, key)
	}
	if r.traceFile != nil {
		errs = append(errs, r.traceFile.Close())
		r.traceFile, r.tracer = nil, nil
	}
	errs = append(errs, r.closeTwinsLocked())
	return errors.Join(errs...)
}

// compile is the end of Compile once the device is found: each node's
// executables checked for the driver, the device opened.
func (d *Delegate) compile(ctx context.Context, m *model.Model, s Settings, nodes []*program.Node, dev Device) (delegate.Executable, error) {
	sg := m.Subgraph(0)
	x := &runnable{d: d, dev: dev, m: m, nodes: nodes, vals: make([][]byte, sg.NumTensors()),
		inputs: sg.Inputs(), outputs: sg.Outputs(), consts: make([][]byte, sg.NumTensors())}
	for ti, t := range sg.Tensors() {
		x.consts[ti] = m.Buffer(t.Buffer)
	}
	for _, n := range nodes {
		x.models = append(x.models, n.Program)
		ins, outs := nodeTensors(sg.Operator(n.Index), n)
		x.ins, x.outs = append(x.ins, ins), append(x.outs, outs)
		x.data = append(x.data, make([][]byte, len(ins)))
		x.results = append(x.results, outputTensors(m, outs))
		if err := d.teach(ctx, x, m, n, ins, outs); err != nil {
			x.closeParts()
			return nil, err
		}
	}
	opts, err := d.options(dev, s)
	if err != nil {
		return nil, err
	}
	x.opts = opts
	if _, err := d.acquire(ctx, dev, x.opts, true); err != nil {
		_ = d.releaseRef(dev)
		x.closeParts()
		return nil, fmt.Errorf("%w: %s: %w", delegate.ErrNoDevice, dev, err)
	}
	return x, nil
}

// teach tells a simulated bus about node n's executables (it cannot run
// Edge TPU instructions, so it recognises what it is sent) and, with CPU
// twins, how to compute the main one's outputs (the twin's part is kept
// in x.parts).
func (d *Delegate) teach(ctx context.Context, x *runnable, m *model.Model, n *program.Node, ins, outs []int) error {
	sim := d.run.sim
	if sim == nil {
		return nil
	}
	if n.Caching != nil {
		sim.Learn(n.Caching)
		x.taught = append(x.taught, n.Caching)
	}
	x.taught = append(x.taught, n.Main)
	if len(d.run.paths) == 0 {
		sim.Learn(n.Main)
		return nil
	}
	p, err := d.twinPart(ctx, m, n, ins, outs)
	if err != nil {
		return err
	}
	x.parts = append(x.parts, p)
	return sim.Compute(n.Main, p.compute)
}

// runnable is a compiled partition.
type runnable struct {
	d      *Delegate
	dev    Device
	opts   driver.Options
	m      *model.Model
	nodes  []*program.Node
	models []*program.Model
	// ins and outs are each node's tensors (nodeTensors); inputs and
	// outputs the partition's, and consts each tensor's constant data (nil
	// for none): read once at Compile, so Invoke asks the model nothing.
	ins, outs       [][]int
	inputs, outputs []int
	consts          [][]byte
	// Invoke's scratch, made at Compile: each node's input data, each
	// node's output tensors with their buffers (outputTensors), and every
	// partition tensor's value so far (nil: none yet).
	data    [][][]byte
	results [][]*tensor.Tensor
	vals    [][]byte
	// parts are the CPU twin's parts the simulator computes the nodes
	// with (simtwin.go), compiled on the cpu delegate; taught are the
	// executables teach told the simulator about.
	parts  []*twinPart
	taught []*executable.Executable
	mu     sync.Mutex
	closed bool
}

// closeParts closes the twin's compiled parts, and has the simulator
// forget the executables taught for them: another partition with the same
// bitstreams must not be computed with parts that are closed.
func (x *runnable) closeParts() error {
	if sim := x.d.run.sim; sim != nil {
		for _, e := range x.taught {
			sim.Forget(e)
		}
	}
	x.taught = nil
	var errs []error
	for _, p := range x.parts {
		errs = append(errs, p.exe.Close())
	}
	x.parts = nil
	return errors.Join(errs...)
}

// outputTensors are the tensors that receive a node's output layers (outs,
// as nodeTensors gives them), each with a buffer of its size; nil where a
// layer goes to no tensor.
func outputTensors(m *model.Model, outs []int) []*tensor.Tensor {
	ts := make([]*tensor.Tensor, len(outs))
	for j, ti := range outs {
		if ti < 0 {
			continue
		}
		info := m.Subgraph(0).Tensor(ti)
		ts[j] = &tensor.Tensor{Name: info.Name, Type: info.Type, Shape: info.Shape, Quant: info.Quant,
			Data: make([]byte, tensor.NumElements(info.Shape)*info.Type.Size())}
	}
	return ts
}

// Invoke runs the partition's nodes in order on the device: each node's
// inputs from the partition's inputs or the nodes before it, its outputs
// relayouted and converted to the tensors' types (ReFormatOutputs), a
// "..._variable_output" layer's values going to the state tensor it
// updates. A failure of the device closes it (the next Invoke opens it
// again) and is an execution error; one of a device that left the bus
// wraps delegate.ErrNoDevice.
func (x *runnable) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return errors.New("edgetpu: invoke after close")
	}
	if len(inputs) != len(x.inputs) || len(outputs) != len(x.outputs) {
		return fmt.Errorf("edgetpu: the partition has %d inputs and %d outputs, got %d and %d", len(x.inputs), len(x.outputs), len(inputs), len(outputs))
	}
	vals := x.vals
	clear(vals)
	for i, ti := range x.inputs {
		vals[ti] = inputs[i].Data
	}
	value := func(ti int) []byte {
		if v := vals[ti]; v != nil {
			return v
		}
		return x.consts[ti]
	}
	drv, err := x.d.acquire(ctx, x.dev, x.opts, false)
	if err != nil {
		return fmt.Errorf("edgetpu: open %s again: %w", x.dev, deviceGone(err))
	}
	for k, n := range x.nodes {
		ins := x.ins[k]
		data := x.data[k]
		for i, ti := range ins {
			data[i] = value(ti)
			if want := n.Batches * n.Main.Inputs[i].ActualBytes(); len(data[i]) != want {
				return fmt.Errorf("edgetpu: node %d input %d holds %d bytes, want %d", n.Index, i, len(data[i]), want)
			}
		}
		outs, err := drv.Run(ctx, x.models[k], data, n.Batches)
		if err != nil {
			x.d.drop(x.dev, drv)
			return fmt.Errorf("edgetpu: node %d on %s: %w", n.Index, x.dev, deviceGone(err))
		}
		for j, t := range x.results[k] {
			if t == nil {
				continue
			}
			l := &n.Main.Outputs[j]
			buf := t.Data
			per, actual := len(buf)/n.Batches, l.ActualBytes()
			for b := range n.Batches {
				if err := program.OutputValues(l, t, buf[b*per:(b+1)*per], outs[j][b*actual:(b+1)*actual]); err != nil {
					return fmt.Errorf("edgetpu: node %d: %w", n.Index, err)
				}
			}
			vals[x.outs[k][j]] = buf
		}
	}
	for j, ti := range x.outputs {
		v := vals[ti]
		if v == nil || len(v) != len(outputs[j].Data) {
			return fmt.Errorf("edgetpu: partition output %d (%q): %d bytes for a %d-byte tensor", j, x.m.Subgraph(0).Tensor(ti).Name, len(v), len(outputs[j].Data))
		}
		copy(outputs[j].Data, v)
	}
	return nil
}

// deviceGone marks the error of a device that left the bus while open
// (unplugged: usb.ErrDisconnected) or is no longer there to open again
// (usb.ErrNotFound) as delegate.ErrNoDevice.
func deviceGone(err error) error {
	if errors.Is(err, usb.ErrDisconnected) || errors.Is(err, usb.ErrNotFound) {
		return fmt.Errorf("%w: %w", delegate.ErrNoDevice, err)
	}
	return err
}

// nodeTensors are the partition tensors a node reads and writes: its
// inputs (the op's, less the absent ones), and for each output layer of its
// main executable the tensor that receives it, -1 for none: the op's output
// of the same index, or for a "..._variable_output" layer the input tensor
// of the state it updates.
func nodeTensors(op *model.Operator, n *program.Node) (ins, outs []int) {
	ins = slices.DeleteFunc(op.Inputs(), func(ti int) bool { return ti < 0 })
	outs = make([]int, len(n.Main.Outputs))
	for j := range n.Main.Outputs {
		outs[j] = -1
		if name, ok := strings.CutSuffix(n.Main.Outputs[j].Name, executable.VariableOutputSuffix); ok {
			for i := range n.Main.Inputs {
				if name != "" && n.Main.Inputs[i].Name == name && i < len(ins) {
					outs[j] = ins[i]
				}
			}
		} else if j < len(op.Outputs()) {
			outs[j] = op.Outputs()[j]
		}
	}
	return ins, outs
}

// Close releases the partition's hold on its device.
func (x *runnable) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	return errors.Join(x.closeParts(), x.d.releaseRef(x.dev))
}
