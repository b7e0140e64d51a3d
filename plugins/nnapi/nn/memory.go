package nn

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Memory is shared memory NNAPI reads and writes: an anonymous memory file
// (memfd) mapped here and handed to NNAPI as an ANeuralNetworksMemory. Its
// file descriptor is closed as soon as NNAPI holds its own (NNAPI dups it).
type Memory struct {
	lib    *Lib
	handle uintptr
	// Bytes is the mapping; writes here are what NNAPI reads.
	Bytes []byte
}

// NewMemory makes size bytes of shared memory, read and written by NNAPI
// when writable, else read only.
func (l *Lib) NewMemory(name string, size int, writable bool) (*Memory, error) {
	if size <= 0 {
		size = 1
	}
	fd, err := unix.MemfdCreate("delego-nnapi-"+name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("shared memory for NNAPI: memfd_create: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		return nil, fmt.Errorf("shared memory for NNAPI: %d bytes: %w", size, err)
	}
	b, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shared memory for NNAPI: mmap %d bytes: %w", size, err)
	}
	prot := unix.PROT_READ
	if writable {
		prot |= unix.PROT_WRITE
	}
	m := &Memory{lib: l, Bytes: b}
	r := call(l.fn.memoryCreateFromFd, uintptr(size), uintptr(prot), uintptr(fd), 0, uintptr(unsafe.Pointer(&m.handle)))
	if err := l.check("ANeuralNetworksMemory_createFromFd", r); err != nil {
		unix.Munmap(b)
		return nil, err
	}
	return m, nil
}

// Free releases the NNAPI memory and the mapping. It is safe on nil and
// twice.
func (m *Memory) Free() {
	if m == nil {
		return
	}
	if m.handle != 0 {
		call(m.lib.fn.memoryFree, m.handle)
		m.handle = 0
	}
	if m.Bytes != nil {
		unix.Munmap(m.Bytes)
		m.Bytes = nil
	}
}
