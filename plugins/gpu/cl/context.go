package cl

import (
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Context is an OpenCL context on one device.
type Context struct {
	lib    *Lib
	id     uintptr
	Device Device
}

const contextPlatform = 0x1084

// NewContext creates a context on device d.
func (d *Device) NewContext() (*Context, error) {
	props := [3]uintptr{contextPlatform, d.platform, 0}
	var code int32
	id := call(d.lib.fn.createContext, uintptr(unsafe.Pointer(&props[0])), 1, uintptr(unsafe.Pointer(&d.id)), 0, 0, uintptr(unsafe.Pointer(&code)))
	if err := check("clCreateContext", code); err != nil {
		return nil, err
	}
	return &Context{lib: d.lib, id: id, Device: *d}, nil
}

// Release releases the context; releasing it twice does nothing.
func (c *Context) Release() error {
	if c == nil || c.id == 0 {
		return nil
	}
	err := status("clReleaseContext", c.lib.fn.releaseContext, c.id)
	c.id = 0
	return err
}

// Queue is an in-order command queue.
type Queue struct {
	lib *Lib
	id  uintptr

	// The hot calls (Write, Read, Enqueue) pass their arguments from here
	// rather than in a variadic list, which would be allocated per call.
	mu   sync.Mutex
	args [9]uintptr
	keep unsafe.Pointer // the host memory of the call in flight, kept on the heap
}

// hot calls fn with q.args[:n] (under q.mu) and names it in the error.
func (q *Queue) hot(name string, fn uintptr, n int) error {
	r, _, _ := purego.SyscallN(fn, q.args[:n]...)
	q.keep = nil
	return check(name, int32(r))
}

// NewQueue creates an in-order command queue on the context's device.
// (clCreateCommandQueue: deprecated by OpenCL 2.0 but exported by every
// ICD loader, and the only one an OpenCL 1.2 driver has.)
func (c *Context) NewQueue() (*Queue, error) {
	var code int32
	id := call(c.lib.fn.createCommandQueue, c.id, c.Device.id, 0, uintptr(unsafe.Pointer(&code)))
	if err := check("clCreateCommandQueue", code); err != nil {
		return nil, err
	}
	return &Queue{lib: c.lib, id: id}, nil
}

// Finish waits until every command enqueued has completed.
func (q *Queue) Finish() error { return status("clFinish", q.lib.fn.finish, q.id) }

// Release releases the queue; releasing it twice does nothing.
func (q *Queue) Release() error {
	if q == nil || q.id == 0 {
		return nil
	}
	err := status("clReleaseCommandQueue", q.lib.fn.releaseCommandQueue, q.id)
	q.id = 0
	return err
}

// MemFlags are a buffer's cl_mem_flags.
type MemFlags uint64

// Buffer flags.
const (
	ReadWrite   MemFlags = 1 << 0
	WriteOnly   MemFlags = 1 << 1
	ReadOnly    MemFlags = 1 << 2
	copyHostPtr MemFlags = 1 << 5
)

// Buffer is a device memory object.
type Buffer struct {
	lib  *Lib
	id   uintptr
	Size int
}

// NewBuffer allocates size bytes on the device.
func (c *Context) NewBuffer(flags MemFlags, size int) (*Buffer, error) {
	return c.newBuffer(flags, size, nil)
}

// NewBufferFrom allocates a buffer holding a copy of data
// (CL_MEM_COPY_HOST_PTR: the driver copies before the call returns).
func (c *Context) NewBufferFrom(flags MemFlags, data []byte) (*Buffer, error) {
	return c.newBuffer(flags|copyHostPtr, len(data), data)
}

func (c *Context) newBuffer(flags MemFlags, size int, data []byte) (*Buffer, error) {
	// The specification makes a size beyond CL_DEVICE_MAX_MEM_ALLOC_SIZE
	// CL_INVALID_BUFFER_SIZE, but NVIDIA's driver allocates it anyway: the
	// limit is kept here, for every driver alike.
	if size <= 0 || uint64(size) > c.Device.MaxAllocBytes {
		return nil, &Error{Call: "clCreateBuffer", Code: -61} // CL_INVALID_BUFFER_SIZE
	}
	var code int32
	var host unsafe.Pointer
	if data != nil {
		host = unsafe.Pointer(&data[0])
	}
	id := call(c.lib.fn.createBuffer, c.id, uintptr(flags), uintptr(size), uintptr(host), uintptr(unsafe.Pointer(&code)))
	if err := check("clCreateBuffer", code); err != nil {
		return nil, err
	}
	return &Buffer{lib: c.lib, id: id, Size: size}, nil
}

// Release releases the buffer; releasing it twice does nothing.
func (b *Buffer) Release() error {
	if b == nil || b.id == 0 {
		return nil
	}
	err := status("clReleaseMemObject", b.lib.fn.releaseMemObject, b.id)
	b.id = 0
	return err
}

const clTrue = 1

// Write copies data into b at offset and waits until it is copied.
func (q *Queue) Write(b *Buffer, offset int, data []byte) error {
	return q.transfer("clEnqueueWriteBuffer", q.lib.fn.enqueueWriteBuffer, b, offset, data)
}

// Read copies b from offset into data once every command before it has
// run, and waits until it is copied.
func (q *Queue) Read(b *Buffer, offset int, data []byte) error {
	return q.transfer("clEnqueueReadBuffer", q.lib.fn.enqueueReadBuffer, b, offset, data)
}

// transfer is a blocking clEnqueueRead/WriteBuffer. It allocates nothing:
// data's address goes into q.args as a uintptr, and q.keep (a real
// pointer) holds data on the heap, where it does not move, until the
// synchronous call returns.
func (q *Queue) transfer(name string, fn uintptr, b *Buffer, offset int, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.keep = unsafe.Pointer(&data[0])
	q.args = [9]uintptr{q.id, b.id, clTrue, uintptr(offset), uintptr(len(data)), uintptr(q.keep), 0, 0, 0}
	return q.hot(name, fn, 9)
}

// MapFlags say what a mapping is for.
type MapFlags uint64

// Map flags.
const (
	MapRead  MapFlags = 1 << 0
	MapWrite MapFlags = 1 << 1
)

// Mapping is a buffer mapped into host memory. Bytes are valid until Unmap.
type Mapping struct {
	buf   *Buffer
	ptr   uintptr
	Bytes []byte
}

// Map maps size bytes of b from offset into host memory, waiting for it.
func (q *Queue) Map(b *Buffer, flags MapFlags, offset, size int) (*Mapping, error) {
	var code int32
	ptr := call(q.lib.fn.enqueueMapBuffer, q.id, b.id, clTrue, uintptr(flags), uintptr(offset), uintptr(size), 0, 0, 0, uintptr(unsafe.Pointer(&code)))
	if err := check("clEnqueueMapBuffer", code); err != nil {
		return nil, err
	}
	// ptr is C memory the driver owns until Unmap: reinterpret it without
	// a uintptr-to-pointer conversion vet would question.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&ptr))
	return &Mapping{buf: b, ptr: ptr, Bytes: unsafe.Slice((*byte)(p), size)}, nil
}

// Unmap ends the mapping m and waits until it has ended.
func (q *Queue) Unmap(m *Mapping) error {
	if m.ptr == 0 {
		return nil
	}
	m.Bytes = nil
	if err := status("clEnqueueUnmapMemObject", q.lib.fn.enqueueUnmapMemObject, q.id, m.buf.id, m.ptr, 0, 0, 0); err != nil {
		return err
	}
	m.ptr = 0
	return q.Finish()
}
