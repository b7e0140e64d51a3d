package cl

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
)

// libraryNames are the ICD loader's names, tried in order: the Linux
// soname, then the unversioned name Android's vendor images ship.
func libraryNames() []string {
	names := []string{"libOpenCL.so.1", "libOpenCL.so"}
	if runtime.GOOS == "android" {
		names = append(names, "/vendor/lib64/libOpenCL.so", "/system/vendor/lib64/libOpenCL.so")
	}
	return names
}

// Lib is a loaded OpenCL library: the function pointers of the calls the
// package makes. The library stays loaded for the life of the process
// (unloading an ICD loader under a running driver's threads is unsafe).
type Lib struct {
	path string
	fn   funcs
}

// funcs are the OpenCL entry points, resolved once by Load.
type funcs struct {
	getPlatformIDs, getPlatformInfo, getDeviceIDs, getDeviceInfo   uintptr
	createContext, releaseContext                                  uintptr
	createCommandQueue, releaseCommandQueue, finish                uintptr
	createBuffer, releaseMemObject                                 uintptr
	enqueueWriteBuffer, enqueueReadBuffer                          uintptr
	enqueueMapBuffer, enqueueUnmapMemObject                        uintptr
	createProgramWithSource, createProgramWithBinary, buildProgram uintptr
	getProgramBuildInfo, getProgramInfo, releaseProgram            uintptr
	createKernel, setKernelArg, getKernelWorkGroupInfo             uintptr
	releaseKernel, enqueueNDRangeKernel                            uintptr
}

// symbols pairs each entry point with its C name.
func (f *funcs) symbols() map[string]*uintptr {
	return map[string]*uintptr{
		"clGetPlatformIDs": &f.getPlatformIDs, "clGetPlatformInfo": &f.getPlatformInfo,
		"clGetDeviceIDs": &f.getDeviceIDs, "clGetDeviceInfo": &f.getDeviceInfo,
		"clCreateContext": &f.createContext, "clReleaseContext": &f.releaseContext,
		"clCreateCommandQueue": &f.createCommandQueue, "clReleaseCommandQueue": &f.releaseCommandQueue,
		"clFinish":       &f.finish,
		"clCreateBuffer": &f.createBuffer, "clReleaseMemObject": &f.releaseMemObject,
		"clEnqueueWriteBuffer": &f.enqueueWriteBuffer, "clEnqueueReadBuffer": &f.enqueueReadBuffer,
		"clEnqueueMapBuffer": &f.enqueueMapBuffer, "clEnqueueUnmapMemObject": &f.enqueueUnmapMemObject,
		"clCreateProgramWithSource": &f.createProgramWithSource, "clCreateProgramWithBinary": &f.createProgramWithBinary,
		"clBuildProgram": &f.buildProgram, "clGetProgramBuildInfo": &f.getProgramBuildInfo,
		"clGetProgramInfo": &f.getProgramInfo, "clReleaseProgram": &f.releaseProgram,
		"clCreateKernel": &f.createKernel, "clSetKernelArg": &f.setKernelArg,
		"clGetKernelWorkGroupInfo": &f.getKernelWorkGroupInfo, "clReleaseKernel": &f.releaseKernel,
		"clEnqueueNDRangeKernel": &f.enqueueNDRangeKernel,
	}
}

// Load opens the OpenCL ICD loader (libOpenCL.so.1, or on Android the
// vendor's libOpenCL.so). Its error wraps ErrNoLibrary when none opens.
func Load() (*Lib, error) { return LoadFrom(libraryNames()...) }

// LoadFrom opens the first of paths that loads as an OpenCL library.
func LoadFrom(paths ...string) (*Lib, error) {
	var errs []string
	for _, p := range paths {
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		l := &Lib{path: p}
		if err := l.resolve(h); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("%w (install ocl-icd-libopencl1 or your GPU vendor's OpenCL): %s", ErrNoLibrary, strings.Join(errs, "; "))
}

// resolve looks up every entry point in the library h.
func (l *Lib) resolve(h uintptr) error {
	var missing []string
	for name, p := range l.fn.symbols() {
		addr, err := purego.Dlsym(h, name)
		if err != nil || addr == 0 {
			missing = append(missing, name)
			continue
		}
		*p = addr
	}
	if len(missing) > 0 {
		return errors.New("not an OpenCL 1.2 library: missing " + strings.Join(missing, ", "))
	}
	return nil
}

// Path is the library Load opened.
func (l *Lib) Path() string { return l.path }

// call calls the C function fn with args and returns its result. Pointers
// converted to uintptr in a call's argument list stay alive and in place
// until the call returns (go:uintptrescapes, as for purego.SyscallN).
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// status calls fn, a function returning cl_int, and names it in the error.
//
//go:uintptrescapes
func status(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	return check(name, int32(r))
}
