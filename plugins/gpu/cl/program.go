package cl

import (
	"errors"
	"runtime"
	"unsafe"
)

// Program is a built OpenCL program.
type Program struct {
	lib *Lib
	ctx *Context
	id  uintptr
}

const (
	programBinarySizes = 0x1165
	programBinaries    = 0x1166
	programBuildLog    = 0x1183
)

// BuildProgram compiles source for the context's device with the given
// options (e.g. "-cl-fast-relaxed-math -DN=4"). A compile error is an
// *Error with Code BuildProgramFailure whose Log is the compiler's log.
func (c *Context) BuildProgram(source, options string) (*Program, error) {
	if source == "" {
		return nil, &Error{Call: "clCreateProgramWithSource", Code: InvalidValue}
	}
	src := []byte(source)
	ptr := unsafe.Pointer(&src[0])
	length := uintptr(len(src))
	var pin runtime.Pinner // the array of string pointers holds a Go pointer
	pin.Pin(ptr)
	defer pin.Unpin()
	var code int32
	id := call(c.lib.fn.createProgramWithSource, c.id, 1, uintptr(unsafe.Pointer(&ptr)), uintptr(unsafe.Pointer(&length)), uintptr(unsafe.Pointer(&code)))
	if err := check("clCreateProgramWithSource", code); err != nil {
		return nil, err
	}
	p := &Program{lib: c.lib, ctx: c, id: id}
	if err := p.build(options); err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

// ProgramFromBinary loads a binary Binary returned (for the same device
// and driver) and builds it with options.
func (c *Context) ProgramFromBinary(binary []byte, options string) (*Program, error) {
	if len(binary) == 0 {
		return nil, &Error{Call: "clCreateProgramWithBinary", Code: InvalidValue}
	}
	ptr := unsafe.Pointer(&binary[0])
	length := uintptr(len(binary))
	var pin runtime.Pinner
	pin.Pin(ptr)
	defer pin.Unpin()
	var binStatus, code int32
	id := call(c.lib.fn.createProgramWithBinary, c.id, 1, uintptr(unsafe.Pointer(&c.Device.id)), uintptr(unsafe.Pointer(&length)),
		uintptr(unsafe.Pointer(&ptr)), uintptr(unsafe.Pointer(&binStatus)), uintptr(unsafe.Pointer(&code)))
	if err := check("clCreateProgramWithBinary", code); err != nil {
		return nil, withLog(err, "binary status "+CodeName(binStatus))
	}
	p := &Program{lib: c.lib, ctx: c, id: id}
	if err := p.build(options); err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

// build runs clBuildProgram and attaches the log to a failure.
func (p *Program) build(options string) error {
	opts := append([]byte(options), 0)
	err := status("clBuildProgram", p.lib.fn.buildProgram, p.id, 1, uintptr(unsafe.Pointer(&p.ctx.Device.id)), uintptr(unsafe.Pointer(&opts[0])), 0, 0)
	var ce *Error
	if errors.As(err, &ce) {
		ce.Log = p.BuildLog()
	}
	return err
}

// BuildLog is the compiler's log for the program's device ("" when the
// driver keeps none).
func (p *Program) BuildLog() string {
	var size uintptr
	fn := p.lib.fn.getProgramBuildInfo
	if status("clGetProgramBuildInfo", fn, p.id, p.ctx.Device.id, programBuildLog, 0, 0, uintptr(unsafe.Pointer(&size))) != nil || size == 0 {
		return ""
	}
	b := make([]byte, size)
	if status("clGetProgramBuildInfo", fn, p.id, p.ctx.Device.id, programBuildLog, size, uintptr(unsafe.Pointer(&b[0])), 0) != nil {
		return ""
	}
	return cString(b)
}

// Binary is the built program as the driver can load it again
// (ProgramFromBinary), for caching compiled kernels.
func (p *Program) Binary() ([]byte, error) {
	var size uintptr
	if err := status("clGetProgramInfo", p.lib.fn.getProgramInfo, p.id, programBinarySizes, ptrSize, uintptr(unsafe.Pointer(&size)), 0); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, &Error{Call: "clGetProgramInfo", Code: InvalidProgramExecutable, Log: "the driver returns no binary"}
	}
	bin := make([]byte, size)
	ptr := unsafe.Pointer(&bin[0])
	var pin runtime.Pinner // the array of binary pointers holds a Go pointer
	pin.Pin(ptr)
	defer pin.Unpin()
	if err := status("clGetProgramInfo", p.lib.fn.getProgramInfo, p.id, programBinaries, ptrSize, uintptr(unsafe.Pointer(&ptr)), 0); err != nil {
		return nil, err
	}
	return bin, nil
}

// Release releases the program; releasing it twice does nothing.
func (p *Program) Release() error {
	if p == nil || p.id == 0 {
		return nil
	}
	err := status("clReleaseProgram", p.lib.fn.releaseProgram, p.id)
	p.id = 0
	return err
}

// Kernel is one kernel function of a program, with its arguments.
type Kernel struct {
	lib  *Lib
	id   uintptr
	Name string
}

// Kernel creates the kernel named name.
func (p *Program) Kernel(name string) (*Kernel, error) {
	cname := append([]byte(name), 0)
	var code int32
	id := call(p.lib.fn.createKernel, p.id, uintptr(unsafe.Pointer(&cname[0])), uintptr(unsafe.Pointer(&code)))
	if err := check("clCreateKernel", code); err != nil {
		return nil, withLog(err, "kernel "+name)
	}
	return &Kernel{lib: p.lib, id: id, Name: name}, nil
}

// Release releases the kernel; releasing it twice does nothing.
func (k *Kernel) Release() error {
	if k == nil || k.id == 0 {
		return nil
	}
	err := status("clReleaseKernel", k.lib.fn.releaseKernel, k.id)
	k.id = 0
	return err
}

// SetBuffer sets argument i to buffer b.
func (k *Kernel) SetBuffer(i int, b *Buffer) error {
	return k.setArg(i, ptrSize, uintptr(unsafe.Pointer(&b.id)))
}

// SetInt32 sets argument i to an int.
func (k *Kernel) SetInt32(i int, v int32) error {
	return k.setArg(i, 4, uintptr(unsafe.Pointer(&v)))
}

// SetFloat32 sets argument i to a float.
func (k *Kernel) SetFloat32(i int, v float32) error {
	return k.setArg(i, 4, uintptr(unsafe.Pointer(&v)))
}

// SetLocal sets argument i, a __local pointer, to size bytes of local memory.
func (k *Kernel) SetLocal(i int, size int) error {
	return k.setArg(i, uintptr(size), 0)
}

//go:uintptrescapes
func (k *Kernel) setArg(i int, size, value uintptr) error {
	err := status("clSetKernelArg", k.lib.fn.setKernelArg, k.id, uintptr(i), size, value)
	return withLog(err, "kernel "+k.Name+" argument "+itoa(i))
}

const kernelWorkGroupSize = 0x11B0

// WorkGroupSize is the largest work-group the kernel runs in on device d
// (at most d.MaxWorkGroupSize; less when the kernel uses many registers or
// much local memory).
func (k *Kernel) WorkGroupSize(d *Device) (int, error) {
	var n uintptr
	if err := status("clGetKernelWorkGroupInfo", k.lib.fn.getKernelWorkGroupInfo, k.id, d.id, kernelWorkGroupSize, ptrSize, uintptr(unsafe.Pointer(&n)), 0); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Run enqueues k over global work items in work-groups of local (nil lets
// the driver choose); global and local have 1 to 3 dimensions. It does not
// wait: Finish or a Read does.
func (q *Queue) Run(k *Kernel, global, local []int) error {
	l, err := NewLaunch(k, global, local)
	if err != nil {
		return err
	}
	return q.Enqueue(l)
}

// Launch is a kernel with its NDRange fixed, made once and enqueued many
// times without allocating.
type Launch struct {
	k             *Kernel
	dims          uintptr
	global, local *[3]uintptr // on the heap: C reads them through uintptrs
}

// NewLaunch fixes k's global and local sizes (1 to 3 dimensions each, the
// same number; local nil lets the driver choose).
func NewLaunch(k *Kernel, global, local []int) (*Launch, error) {
	if len(global) < 1 || len(global) > 3 || (local != nil && len(local) != len(global)) {
		return nil, &Error{Call: "clEnqueueNDRangeKernel", Code: -53, Log: "kernel " + k.Name} // CL_INVALID_WORK_DIMENSION
	}
	l := &Launch{k: k, dims: uintptr(len(global)), global: new([3]uintptr)}
	for i := range global {
		l.global[i] = uintptr(global[i])
	}
	if local != nil {
		l.local = new([3]uintptr)
		for i := range local {
			l.local[i] = uintptr(local[i])
		}
	}
	return l, nil
}

// Enqueue enqueues the launch. It does not wait: Finish or a Read does.
// It allocates nothing (the sizes live in the Launch, on the heap).
func (q *Queue) Enqueue(l *Launch) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	local := uintptr(0)
	if l.local != nil {
		local = uintptr(unsafe.Pointer(l.local))
	}
	q.args = [9]uintptr{q.id, l.k.id, l.dims, 0, uintptr(unsafe.Pointer(l.global)), local, 0, 0, 0}
	err := q.hot("clEnqueueNDRangeKernel", q.lib.fn.enqueueNDRangeKernel, 9)
	runtime.KeepAlive(l) // its sizes, read by the call through uintptrs
	if err != nil {
		return withLog(err, "kernel "+l.k.Name)
	}
	return nil
}
