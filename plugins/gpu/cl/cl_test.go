package cl

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// device opens the first OpenCL device. The tests run on PoCL, which
// scripts/deps.sh installs: no device is a failure, not a skip.
func device(t *testing.T) (*Lib, *Context, *Queue) {
	t.Helper()
	l, err := Load()
	if err != nil {
		t.Fatalf("Load: %v (scripts/deps.sh installs ocl-icd-libopencl1 and pocl-opencl-icd)", err)
	}
	ps, err := l.Platforms()
	if err != nil {
		t.Fatalf("Platforms: %v (scripts/deps.sh installs pocl-opencl-icd)", err)
	}
	for _, p := range ps {
		ds, err := p.Devices(DeviceAll)
		if err != nil {
			t.Fatalf("Devices: %v", err)
		}
		if len(ds) == 0 {
			continue
		}
		c, err := ds[0].NewContext()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Release() })
		q, err := c.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Release() })
		return l, c, q
	}
	t.Fatal("no OpenCL device")
	return nil, nil, nil
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func bytesOf(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

func TestListDevices(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := l.Platforms()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range ps {
		if p.Name == "" || !strings.HasPrefix(p.Version, "OpenCL ") {
			t.Errorf("platform %+v: no name or version", p)
		}
		ds, err := p.Devices(DeviceAll)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			n++
			t.Logf("%s / %s: %s, %s, driver %s, %d CUs, %d MiB global, %d KiB local, work-group %d %v, fp16 %v",
				p.Name, d.Name, d.Type, d.Version, d.DriverVersion, d.ComputeUnits, d.GlobalMemBytes>>20, d.LocalMemBytes>>10,
				d.MaxWorkGroupSize, d.MaxWorkItemSizes, d.FP16())
			if d.ComputeUnits < 1 || d.GlobalMemBytes == 0 || d.MaxWorkGroupSize < 1 || len(d.MaxWorkItemSizes) == 0 || d.Type == 0 {
				t.Errorf("device %q: implausible properties %+v", d.Name, d)
			}
		}
	}
	if n == 0 {
		t.Fatal("no OpenCL device")
	}
}

const vecAdd = `
__kernel void add(__global const float* a, __global const float* b, __global float* c, float scale, int n) {
	int i = get_global_id(0);
	if (i < n) c[i] = (a[i] + b[i]) * scale;
}

// sum adds each work-group's values in local memory; out[g] is group g's sum.
__kernel void sum(__global const float* in, __global float* out, __local float* tmp) {
	int l = get_local_id(0), n = get_local_size(0);
	tmp[l] = in[get_global_id(0)];
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = n / 2; s > 0; s /= 2) {
		if (l < s) tmp[l] += tmp[l + s];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (l == 0) out[get_group_id(0)] = tmp[0];
}
`

func TestVectorAddAndLocalMemory(t *testing.T) {
	_, c, q := device(t)
	p, err := c.BuildProgram(vecAdd, "-cl-std=CL1.2")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	const n = 1000
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), float32(2*i)+0.5
	}
	ba, err := c.NewBufferFrom(ReadOnly, bytesOf(a))
	if err != nil {
		t.Fatal(err)
	}
	defer ba.Release()
	bb, err := c.NewBuffer(ReadOnly, 4*n)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Release()
	if err := q.Write(bb, 0, bytesOf(b)); err != nil {
		t.Fatal(err)
	}
	bc, err := c.NewBuffer(ReadWrite, 4*n)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Release()
	k, err := p.Kernel("add")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	for _, err := range []error{k.SetBuffer(0, ba), k.SetBuffer(1, bb), k.SetBuffer(2, bc), k.SetFloat32(3, 2), k.SetInt32(4, n)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Run(k, []int{1024}, nil); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4*n)
	if err := q.Read(bc, 0, out); err != nil {
		t.Fatal(err)
	}
	for i, v := range floats(out) {
		if want := (a[i] + b[i]) * 2; v != want {
			t.Fatalf("c[%d] = %v, want %v", i, v, want)
		}
	}

	// The mapped buffer reads the same.
	m, err := q.Map(bc, MapRead, 0, 4*n)
	if err != nil {
		t.Fatal(err)
	}
	if got := floats(m.Bytes)[n-1]; got != (a[n-1]+b[n-1])*2 {
		t.Errorf("mapped c[%d] = %v", n-1, got)
	}
	if err := q.Unmap(m); err != nil {
		t.Fatal(err)
	}

	// The reduction in local memory, in work-groups the kernel allows.
	ks, err := p.Kernel("sum")
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Release()
	wg, err := ks.WorkGroupSize(&c.Device)
	if err != nil {
		t.Fatal(err)
	}
	group := 1
	for group*2 <= min(wg, 64) {
		group *= 2
	}
	groups := 8
	in := make([]float32, group*groups)
	for i := range in {
		in[i] = float32(i % 7)
	}
	bin, err := c.NewBufferFrom(ReadOnly, bytesOf(in))
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Release()
	bout, err := c.NewBuffer(WriteOnly, 4*groups)
	if err != nil {
		t.Fatal(err)
	}
	defer bout.Release()
	for _, err := range []error{ks.SetBuffer(0, bin), ks.SetBuffer(1, bout), ks.SetLocal(2, 4*group)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Run(ks, []int{group * groups}, []int{group}); err != nil {
		t.Fatal(err)
	}
	sums := make([]byte, 4*groups)
	if err := q.Read(bout, 0, sums); err != nil {
		t.Fatal(err)
	}
	for g, v := range floats(sums) {
		var want float32
		for _, x := range in[g*group : (g+1)*group] {
			want += x
		}
		if v != want {
			t.Errorf("group %d (of %d): sum %v, want %v", g, group, v, want)
		}
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
}

func TestBuildErrorCarriesLog(t *testing.T) {
	_, c, _ := device(t)
	_, err := c.BuildProgram("__kernel void f(__global float* x) {\n\tx[0] = 1;\n\tx[1] = undefined_thing;\n}\n", "")
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != BuildProgramFailure {
		t.Fatalf("err = %v, want CL_BUILD_PROGRAM_FAILURE", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "clBuildProgram: CL_BUILD_PROGRAM_FAILURE") || !strings.Contains(msg, "undefined_thing") || !strings.Contains(msg, ":3:") {
		t.Errorf("error does not name the call, the code and line 3's identifier: %s", msg)
	}
}

func TestBadArgumentsNameTheError(t *testing.T) {
	_, c, q := device(t)
	p, err := c.BuildProgram(vecAdd, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if _, err := p.Kernel("nope"); err == nil || !strings.Contains(err.Error(), "clCreateKernel: CL_INVALID_KERNEL_NAME") {
		t.Errorf("Kernel(nope) = %v", err)
	}
	k, err := p.Kernel("add")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	if err := q.Run(k, []int{16}, nil); err == nil || !strings.Contains(err.Error(), "CL_INVALID_KERNEL_ARGS") {
		t.Errorf("Run without arguments = %v", err)
	}
	if err := k.SetInt32(9, 1); err == nil || !strings.Contains(err.Error(), "clSetKernelArg: CL_INVALID_ARG_INDEX") {
		t.Errorf("SetInt32(9) = %v", err)
	}
}

func TestProgramBinaryRoundTrip(t *testing.T) {
	_, c, q := device(t)
	p, err := c.BuildProgram(vecAdd, "")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := p.Binary()
	p.Release()
	if err != nil {
		t.Fatal(err)
	}
	p2, err := c.ProgramFromBinary(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Release()
	k, err := p2.Kernel("add")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	x, err := c.NewBufferFrom(ReadWrite, bytesOf([]float32{1, 2, 3, 4}))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	for _, err := range []error{k.SetBuffer(0, x), k.SetBuffer(1, x), k.SetBuffer(2, x), k.SetFloat32(3, 0.5), k.SetInt32(4, 4)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Run(k, []int{4}, []int{1}); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 16)
	if err := q.Read(x, 0, out); err != nil {
		t.Fatal(err)
	}
	if got := floats(out); got[3] != 4 || got[0] != 1 {
		t.Errorf("from binary: %v, want [1 2 3 4]", got)
	}
	if _, err := c.ProgramFromBinary([]byte("not a binary"), ""); err == nil {
		t.Error("a garbage binary built")
	}
}

func TestNoLibrary(t *testing.T) {
	_, err := LoadFrom("/nonexistent/libOpenCL.so.1")
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("err = %v, want ErrNoLibrary", err)
	}
}

// TestNoPlatform runs the test binary again with OCL_ICD_VENDORS pointing
// at an empty directory (the ICD loader reads it once, at first use).
func TestNoPlatform(t *testing.T) {
	if os.Getenv("DELEGO_CL_NO_PLATFORM_CHILD") == "1" {
		l, err := Load()
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.Platforms()
		if !errors.Is(err, ErrNoPlatform) {
			t.Fatalf("err = %v, want ErrNoPlatform", err)
		}
		t.Logf("no platform: %v", err)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestNoPlatform$", "-test.v")
	cmd.Env = append(os.Environ(), "DELEGO_CL_NO_PLATFORM_CHILD=1", "OCL_ICD_VENDORS="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "no platform: no OpenCL platform") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestCodeNames(t *testing.T) {
	for code, want := range map[int32]string{-5: "CL_OUT_OF_RESOURCES", -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE", -11: "CL_BUILD_PROGRAM_FAILURE",
		-54: "CL_INVALID_WORK_GROUP_SIZE", -1001: "CL_PLATFORM_NOT_FOUND_KHR", -9999: "CL error -9999"} {
		if got := CodeName(code); got != want {
			t.Errorf("CodeName(%d) = %q, want %q", code, got, want)
		}
	}
}
