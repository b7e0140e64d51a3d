package cl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"
)

// DeviceType is an OpenCL device type (a bit set).
type DeviceType uint64

// The device types.
const (
	DeviceDefault     DeviceType = 1 << 0
	DeviceCPU         DeviceType = 1 << 1
	DeviceGPU         DeviceType = 1 << 2
	DeviceAccelerator DeviceType = 1 << 3
	DeviceCustom      DeviceType = 1 << 4
	DeviceAll         DeviceType = 0xFFFFFFFF
)

func (t DeviceType) String() string {
	var parts []string
	for _, n := range []struct {
		bit  DeviceType
		name string
	}{{DeviceCPU, "CPU"}, {DeviceGPU, "GPU"}, {DeviceAccelerator, "accelerator"}, {DeviceCustom, "custom"}} {
		if t&n.bit != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("type %#x", uint64(t))
	}
	return strings.Join(parts, "+")
}

// Info names (cl.h).
const (
	platformProfile    = 0x0900
	platformVersion    = 0x0901
	platformName       = 0x0902
	platformVendor     = 0x0903
	platformExtensions = 0x0904

	deviceType             = 0x1000
	deviceMaxComputeUnits  = 0x1002
	deviceMaxWorkItemDims  = 0x1003
	deviceMaxWorkGroupSize = 0x1004
	deviceMaxWorkItemSizes = 0x1005
	deviceMaxMemAllocSize  = 0x1010
	deviceGlobalMemSize    = 0x101F
	deviceLocalMemSize     = 0x1023
	deviceName             = 0x102B
	deviceVendor           = 0x102C
	driverVersion          = 0x102D
	deviceVersion          = 0x102F
	deviceExtensions       = 0x1030
)

// Platform is one OpenCL implementation (an ICD).
type Platform struct {
	lib                                        *Lib
	id                                         uintptr
	Name, Vendor, Version, Profile, Extensions string
}

// Device is one OpenCL device and what the package reads of it.
type Device struct {
	lib      *Lib
	id       uintptr
	platform uintptr
	// Platform is the name of the device's platform.
	Platform                             string
	Name, Vendor, Version, DriverVersion string
	Type                                 DeviceType
	ComputeUnits                         int
	GlobalMemBytes, LocalMemBytes        uint64
	MaxAllocBytes                        uint64
	MaxWorkGroupSize                     int
	MaxWorkItemSizes                     []int
	Extensions                           []string
}

// HasExtension reports whether the device lists extension name.
func (d *Device) HasExtension(name string) bool { return slices.Contains(d.Extensions, name) }

// FP16 reports whether the device computes in half precision (cl_khr_fp16).
func (d *Device) FP16() bool { return d.HasExtension("cl_khr_fp16") }

// Platforms lists the OpenCL platforms. When the ICD loader finds none
// (CL_PLATFORM_NOT_FOUND_KHR, or zero platforms) the error wraps
// ErrNoPlatform.
func (l *Lib) Platforms() ([]Platform, error) {
	var n uint32
	err := status("clGetPlatformIDs", l.fn.getPlatformIDs, 0, 0, uintptr(unsafe.Pointer(&n)))
	if errors.Is(err, ErrNoPlatform) {
		return nil, fmt.Errorf("%w (%v)", ErrNoPlatform, err)
	}
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w (clGetPlatformIDs lists none)", ErrNoPlatform)
	}
	ids := make([]uintptr, n)
	if err := status("clGetPlatformIDs", l.fn.getPlatformIDs, uintptr(n), uintptr(unsafe.Pointer(&ids[0])), uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, err
	}
	out := make([]Platform, 0, n)
	for _, id := range ids[:n] {
		p := Platform{lib: l, id: id}
		for _, f := range []struct {
			param uint32
			dst   *string
		}{{platformName, &p.Name}, {platformVendor, &p.Vendor}, {platformVersion, &p.Version}, {platformProfile, &p.Profile}, {platformExtensions, &p.Extensions}} {
			b, err := info("clGetPlatformInfo", l.fn.getPlatformInfo, id, f.param)
			if err != nil {
				return nil, err
			}
			*f.dst = cString(b)
		}
		out = append(out, p)
	}
	return out, nil
}

// Devices lists the platform's devices of the given types (DeviceAll for
// every one); none is an empty list, not an error.
func (p *Platform) Devices(types DeviceType) ([]Device, error) {
	l := p.lib
	var n uint32
	err := status("clGetDeviceIDs", l.fn.getDeviceIDs, p.id, uintptr(types), 0, 0, uintptr(unsafe.Pointer(&n)))
	var ce *Error
	if errors.As(err, &ce) && ce.Code == DeviceNotFound {
		return nil, nil
	}
	if err != nil || n == 0 {
		return nil, err
	}
	ids := make([]uintptr, n)
	if err := status("clGetDeviceIDs", l.fn.getDeviceIDs, p.id, uintptr(types), uintptr(n), uintptr(unsafe.Pointer(&ids[0])), 0); err != nil {
		return nil, err
	}
	out := make([]Device, 0, n)
	for _, id := range ids {
		d, err := l.device(id)
		if err != nil {
			return nil, err
		}
		d.platform, d.Platform = p.id, p.Name
		out = append(out, d)
	}
	return out, nil
}

// device reads device id's properties.
func (l *Lib) device(id uintptr) (Device, error) {
	d := Device{lib: l, id: id}
	get := func(param uint32) []byte {
		b, err := info("clGetDeviceInfo", l.fn.getDeviceInfo, id, param)
		if err != nil {
			return nil
		}
		return b
	}
	d.Name, d.Vendor = cString(get(deviceName)), cString(get(deviceVendor))
	d.Version, d.DriverVersion = cString(get(deviceVersion)), cString(get(driverVersion))
	d.Extensions = strings.Fields(cString(get(deviceExtensions)))
	d.Type = DeviceType(uint64le(get(deviceType)))
	d.ComputeUnits = int(uint64le(get(deviceMaxComputeUnits)))
	d.GlobalMemBytes = uint64le(get(deviceGlobalMemSize))
	d.LocalMemBytes = uint64le(get(deviceLocalMemSize))
	d.MaxAllocBytes = uint64le(get(deviceMaxMemAllocSize))
	d.MaxWorkGroupSize = int(uint64le(get(deviceMaxWorkGroupSize)))
	sizes := get(deviceMaxWorkItemSizes)
	for i := 0; i+int(ptrSize) <= len(sizes); i += int(ptrSize) {
		d.MaxWorkItemSizes = append(d.MaxWorkItemSizes, int(uint64le(sizes[i:i+int(ptrSize)])))
	}
	if d.Name == "" || d.MaxWorkGroupSize == 0 {
		return d, fmt.Errorf("clGetDeviceInfo: device %#x answers no name or work-group size", id)
	}
	return d, nil
}

const ptrSize = unsafe.Sizeof(uintptr(0))

// info runs a clGetXxxInfo(object, param, size, value, size_ret) query
// twice: for the size, then for the value.
func info(name string, fn, object uintptr, param uint32) ([]byte, error) {
	var size uintptr
	if err := status(name, fn, object, uintptr(param), 0, 0, uintptr(unsafe.Pointer(&size))); err != nil {
		return nil, fmt.Errorf("%w (param %#x)", err, param)
	}
	if size == 0 {
		return nil, nil
	}
	b := make([]byte, size)
	if err := status(name, fn, object, uintptr(param), size, uintptr(unsafe.Pointer(&b[0])), 0); err != nil {
		return nil, fmt.Errorf("%w (param %#x)", err, param)
	}
	return b, nil
}

// cString is b up to its first NUL.
func cString(b []byte) string {
	if i := slices.Index(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

// uint64le reads a little-endian unsigned integer of up to 8 bytes (a
// cl_uint, cl_ulong, size_t or cl_bitfield as the device answered it).
func uint64le(b []byte) uint64 {
	var v uint64
	for i := min(len(b), 8) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
