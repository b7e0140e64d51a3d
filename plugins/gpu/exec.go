package gpu

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/delego/delego/plugins/gpu/cl"
	"github.com/delego/delego/tensor"
)

// executable is a compiled partition: its program, kernels, launches and
// buffers, all made by Compile.
type executable struct {
	mu       sync.Mutex // one queue and one set of buffers: invocations take turns
	ctx      *cl.Context
	queue    *cl.Queue
	program  *cl.Program
	kernels  []*cl.Kernel
	launches []*cl.Launch
	steps    []step // for errors: which node a launch runs
	buffers  []*cl.Buffer
	byTensor []*cl.Buffer // tensor index -> its buffer (shared for aliases)
	p        *plan
	pb       programBuilder
}

// build makes everything the plan needs on device d, building its program
// from source.
func build(d *cl.Device, p *plan) (*executable, error) { return buildWith(d, p, programBuilder{}) }

// buildWith makes everything the plan needs on device d, its program
// through pb.
func buildWith(d *cl.Device, p *plan, pb programBuilder) (_ *executable, err error) {
	x := &executable{p: p, steps: p.steps, pb: pb}
	defer func() {
		if err != nil {
			x.release()
		}
	}()
	if x.ctx, err = d.NewContext(); err != nil {
		return nil, err
	}
	if x.queue, err = x.ctx.NewQueue(); err != nil {
		return nil, err
	}
	if err := x.allocate(); err != nil {
		return nil, err
	}
	if len(p.steps) == 0 {
		return x, nil
	}
	if err := x.buildProgram(); err != nil {
		return nil, err
	}
	for i := range p.steps {
		if err := x.prepare(&p.steps[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", p.steps[i].where(), err)
		}
	}
	return x, nil
}

// allocate uploads every constant a kernel reads and allocates every other
// tensor's buffer once; an alias (RESHAPE's output) shares its root's
// buffer.
func (x *executable) allocate() error {
	x.byTensor = make([]*cl.Buffer, len(x.p.tensors))
	bound := x.p.bound()
	for i, t := range x.p.tensors {
		if !t.used || t.alias >= 0 || t.data != nil && !bound[i] {
			continue // an alias, or a constant no kernel reads (a filter that was repacked)
		}
		var (
			b   *cl.Buffer
			err error
		)
		size := t.bytes
		if !t.host {
			size = x.p.precision.deviceBytes(t.bytes)
		}
		if t.data != nil {
			b, err = x.ctx.NewBufferFrom(cl.ReadOnly, x.p.precision.deviceData(t.data))
		} else {
			b, err = x.ctx.NewBuffer(cl.ReadWrite, size)
		}
		if err != nil {
			return fmt.Errorf("%stensor %d (%d bytes; the device allocates at most %d): %w", x.userOf(i), i, size, x.ctx.Device.MaxAllocBytes, err)
		}
		x.buffers = append(x.buffers, b)
		x.byTensor[i] = b
	}
	for i, t := range x.p.tensors {
		if t.used && t.alias >= 0 {
			x.byTensor[i] = x.byTensor[t.alias]
		}
	}
	return nil
}

// userOf names the first step that reads or writes tensor ti (or an alias
// of it), "node 3 (CONV_2D): ", or "" when none does.
func (x *executable) userOf(ti int) string {
	for i := range x.p.steps {
		for _, a := range x.p.steps[i].args {
			if a == ti || (a < len(x.p.tensors) && x.p.tensors[a].alias == ti) {
				return x.p.steps[i].where() + ": "
			}
		}
	}
	return ""
}

// buildOptions are every program's build options: OpenCL C 1.2, which
// every device of the last decade speaks, and no warnings (PoCL prints
// them on standard error; a failed build still returns its log).
const buildOptions = "-cl-std=CL1.2 -w"

// buildProgram compiles every node's kernel as one program; a compile error
// names the node whose source the log's first error points into.
func (x *executable) buildProgram() error {
	var src strings.Builder
	starts := make([]int, len(x.p.steps)) // first source line of each step
	prelude := x.p.precision.prelude()
	src.WriteString(prelude)
	line := 1 + strings.Count(prelude, "\n")
	for i, s := range x.p.steps {
		starts[i] = line
		src.WriteString(s.src)
		line += strings.Count(s.src, "\n")
	}
	prog, err := x.pb.build(x.ctx, src.String(), buildOptions)
	if err != nil {
		i := max(stepAtLine(starts, buildErrorLine(err)), 0)
		return fmt.Errorf("%s: build: %w", x.p.steps[i].where(), excerpt(err))
	}
	x.program = prog
	return nil
}

// prepare creates step s's kernel, binds its buffers and fixes its
// work-group size.
func (x *executable) prepare(s *step) error {
	k, err := x.program.Kernel(s.kernel)
	if err != nil {
		return err
	}
	x.kernels = append(x.kernels, k)
	for i, ti := range s.args {
		if err := k.SetBuffer(i, x.byTensor[ti]); err != nil {
			return err
		}
	}
	wg, err := k.WorkGroupSize(&x.ctx.Device)
	if err != nil {
		return err
	}
	dev := &x.ctx.Device
	global, local := spreadGroups(s.global, min(wg, dev.MaxWorkGroupSize), dev.MaxWorkItemSizes, dev.ComputeUnits)
	l, err := cl.NewLaunch(k, global, local)
	if err != nil {
		return err
	}
	x.launches = append(x.launches, l)
	return nil
}

// maxGroup caps a work-group's size below what the device allows: large
// enough to fill a GPU's SIMD units, small enough to leave several groups
// per compute unit on the small layers.
const maxGroup = 256

// groups chooses a work-group shape for work of the given size under the
// kernel's limit limit (and the device's per-dimension limits) and rounds
// the global size up to whole groups (kernels check their bounds).
func groups(work []int, limit int, perDim []int) (global, local []int) {
	budget := floorPow2(max(min(limit, maxGroup), 1))
	global, local = make([]int, len(work)), make([]int, len(work))
	for i, w := range work {
		l := min(ceilPow2(max(w, 1)), budget)
		if i < len(perDim) && perDim[i] > 0 {
			l = min(l, floorPow2(perDim[i]))
		}
		local[i] = l
		budget /= l
		global[i] = (max(w, 1) + l - 1) / l * l
	}
	return global, local
}

// spreadGroups is groups with the size limit halved until the work makes
// at least two work-groups per compute unit (or groups of one item): a
// compute unit runs one group at a time (on PoCL, one thread runs a whole
// group), so a small layer in one big group would leave the others idle.
func spreadGroups(work []int, limit int, perDim []int, units int) (global, local []int) {
	for {
		global, local = groups(work, limit, perDim)
		n := 1
		for i := range global {
			n *= global[i] / local[i]
		}
		if n >= 2*units || limit <= 1 {
			return global, local
		}
		limit /= 2
	}
}

func floorPow2(n int) int {
	p := 1
	for p*2 <= n {
		p *= 2
	}
	return p
}

func ceilPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// buildErrorLine is the source line of the first error in a build log
// ("file:LINE:COL: error: ..." from Clang-based compilers, "error:
// file:LINE:COL: ..." from PoCL), or 0.
func buildErrorLine(err error) int {
	var ce *cl.Error
	if !errors.As(err, &ce) {
		return 0
	}
	at := regexp.MustCompile(`:(\d+):\d+:`)
	for _, l := range strings.Split(ce.Log, "\n") {
		if !strings.Contains(l, "error") {
			continue
		}
		if m := at.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

// stepAtLine is the step whose source holds line (starts ascending).
func stepAtLine(starts []int, line int) int {
	i, found := slices.BinarySearch(starts, line)
	if found {
		return i
	}
	return i - 1
}

// excerpt shortens a build error's log to its error lines.
func excerpt(err error) error {
	var ce *cl.Error
	if !errors.As(err, &ce) || ce.Log == "" {
		return err
	}
	var keep []string
	for _, l := range strings.Split(ce.Log, "\n") {
		if strings.Contains(l, "error") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	if len(keep) == 0 {
		keep = strings.Split(ce.Log, "\n")
	}
	short := strings.Join(keep[:min(len(keep), 5)], "; ")
	if len(short) > 600 {
		short = short[:600] + "…"
	}
	return &cl.Error{Call: ce.Call, Code: ce.Code, Log: short}
}

// Invoke writes the inputs, runs every kernel in node order and reads the
// outputs. It allocates nothing.
func (x *executable) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.queue == nil {
		return errors.New("gpu: executable is closed")
	}
	if err := x.checkIO(inputs, outputs); err != nil {
		return err
	}
	for i, t := range inputs {
		if err := x.queue.Write(x.byTensor[x.p.inputs[i]], 0, t.Data); err != nil {
			return fmt.Errorf("gpu: input %d: %w", i, err)
		}
	}
	for i, l := range x.launches {
		if err := x.queue.Enqueue(l); err != nil {
			return fmt.Errorf("gpu: %s: %w", x.steps[i].where(), err)
		}
	}
	for i, t := range outputs {
		if err := x.queue.Read(x.byTensor[x.p.outputs[i]], 0, t.Data); err != nil {
			return fmt.Errorf("gpu: output %d: %w", i, err)
		}
	}
	return nil
}

// checkIO checks the tensors are the partition's boundary, as compiled.
func (x *executable) checkIO(inputs, outputs []*tensor.Tensor) error {
	if len(inputs) != len(x.p.inputs) || len(outputs) != len(x.p.outputs) {
		return fmt.Errorf("gpu: partition has %d inputs and %d outputs, got %d and %d",
			len(x.p.inputs), len(x.p.outputs), len(inputs), len(outputs))
	}
	for i, t := range inputs {
		if want := x.p.tensors[x.p.inputs[i]].bytes; len(t.Data) != want {
			return fmt.Errorf("gpu: input %d holds %d bytes; the partition was compiled for %d", i, len(t.Data), want)
		}
	}
	for i, t := range outputs {
		if want := x.p.tensors[x.p.outputs[i]].bytes; len(t.Data) != want {
			return fmt.Errorf("gpu: output %d holds %d bytes; the partition was compiled for %d", i, len(t.Data), want)
		}
	}
	return nil
}

// Close releases every OpenCL object Compile made.
func (x *executable) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.release()
}

func (x *executable) release() error {
	var errs []error
	for _, k := range x.kernels {
		errs = append(errs, k.Release())
	}
	for _, b := range x.buffers {
		errs = append(errs, b.Release())
	}
	errs = append(errs, x.program.Release(), x.queue.Release(), x.ctx.Release())
	x.kernels, x.buffers, x.launches, x.program, x.queue, x.ctx = nil, nil, nil, nil, nil, nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("gpu: release: %w", err)
	}
	return nil
}
