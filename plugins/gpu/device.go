package gpu

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/plugins/gpu/cl"
)

// DeviceEnv is the environment variable that picks the OpenCL device: an
// index into Devices' list, or a substring of a device's or its
// platform's name (case-insensitive).
const DeviceEnv = "DELEGO_GPU_DEVICE"

// noPlatform is Support's message when OpenCL finds no device.
const noPlatform = "no OpenCL platform (install an ICD: pocl-opencl-icd, or your GPU vendor's)"

// devices loads OpenCL and lists every device of every platform. A missing
// library, no platform or no device is an error wrapping
// delegate.ErrNoDevice.
func devices() ([]cl.Device, error) {
	lib, err := cl.Load()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", delegate.ErrNoDevice, err)
	}
	ps, err := lib.Platforms()
	if errors.Is(err, cl.ErrNoPlatform) {
		return nil, fmt.Errorf("%w: %s", delegate.ErrNoDevice, noPlatform)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", delegate.ErrNoDevice, err)
	}
	var all []cl.Device
	for _, p := range ps {
		ds, err := p.Devices(cl.DeviceAll)
		if err != nil {
			return nil, fmt.Errorf("%w: platform %q: %w", delegate.ErrNoDevice, p.Name, err)
		}
		all = append(all, ds...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w: %s", delegate.ErrNoDevice, noPlatform)
	}
	return all, nil
}

// choose picks the device to run on: the one DELEGO_GPU_DEVICE names,
// else the first GPU, else the first device.
func choose(ds []cl.Device, env string) (int, error) {
	if env = strings.TrimSpace(env); env != "" {
		if i, err := strconv.Atoi(env); err == nil {
			if i < 0 || i >= len(ds) {
				return 0, fmt.Errorf("%w: %s=%d: there are %d OpenCL devices", delegate.ErrNoDevice, DeviceEnv, i, len(ds))
			}
			return i, nil
		}
		for i, d := range ds {
			if strings.Contains(strings.ToLower(d.Name+" "+d.Platform), strings.ToLower(env)) {
				return i, nil
			}
		}
		return 0, fmt.Errorf("%w: %s=%q names no OpenCL device", delegate.ErrNoDevice, DeviceEnv, env)
	}
	for i, d := range ds {
		if d.Type&cl.DeviceGPU != 0 {
			return i, nil
		}
	}
	return 0, nil
}

// discover finds the OpenCL devices and the one to run on, the first time
// it is asked: the library, its platforms and DELEGO_GPU_DEVICE stay as
// they are while the plugin runs, so Support, Devices and every Compile
// share the answer.
func (dl *Delegate) discover() (ds []cl.Device, used int, err error) {
	dl.once.Do(func() {
		dl.found, dl.err = devices()
		if dl.err == nil {
			dl.used, dl.err = choose(dl.found, os.Getenv(DeviceEnv))
		}
	})
	return dl.found, dl.used, dl.err
}

// device is the device to run on.
func (dl *Delegate) device() (*cl.Device, error) {
	ds, used, err := dl.discover()
	if err != nil {
		return nil, err
	}
	return &ds[used], nil
}

// describe is one line about a device for Devices.
func describe(d *cl.Device, used bool) string {
	// As TFLite chooses (choosePrecision): half only with cl_khr_fp16.
	fp16 := "no: is_precision_loss_allowed runs in fp32"
	if d.FP16() {
		fp16 = "yes: is_precision_loss_allowed runs in fp16"
	}
	s := fmt.Sprintf("%s, %s (%s), %s, %d compute units, %d MiB global, %d KiB local memory, fp16 %s",
		d.Platform, d.Version, d.DriverVersion, d.Type, d.ComputeUnits, d.GlobalMemBytes>>20, d.LocalMemBytes>>10, fp16)
	if used {
		s = "in use: " + s
	}
	return s
}
