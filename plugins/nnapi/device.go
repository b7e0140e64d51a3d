package nnapi

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/plugins/nnapi/nn"
)

// LibraryEnv names another NNAPI library to load instead of Android's
// libneuralnetworks.so (delego's test runtime, in the tests).
const LibraryEnv = "DELEGO_NNAPI_LIBRARY"

// referenceDevice is NNAPI's CPU implementation, which TFLite leaves out
// unless allow_nnapi_cpu_on_android_10_plus (or accelerator_name) asks for it.
const referenceDevice = "nnapi-reference"

// errOffAndroid is Support's reason where there is no NNAPI.
type errOffAndroid struct{ err error }

func (e errOffAndroid) Error() string {
	if runtime.GOOS != "android" {
		return "NNAPI is only on Android (libneuralnetworks.so not found)"
	}
	return fmt.Sprintf("NNAPI cannot be opened: %v", e.err)
}

func (e errOffAndroid) Unwrap() []error { return []error{delegate.ErrNoDevice, e.err} }

// found is what the delegate found of NNAPI, once.
type found struct {
	lib     *nn.Lib
	level   int64  // the runtime's feature level
	levelBy string // how it was learnt
	devices []nn.Device
}

// discover loads NNAPI and reads its level and devices the first time it
// is asked: the library and its devices stay as they are while the plugin
// runs, so Support, Devices, CheckNodes and every Compile share the answer.
func (dl *Delegate) discover() (*found, error) {
	dl.once.Do(func() { dl.found, dl.err = discover(os.Getenv(LibraryEnv)) })
	return dl.found, dl.err
}

func discover(path string) (*found, error) {
	lib, err := nn.Load(path)
	if err != nil {
		if path != "" {
			return nil, fmt.Errorf("%w: %s=%s: %w", delegate.ErrNoDevice, LibraryEnv, path, err)
		}
		return nil, errOffAndroid{err}
	}
	f := &found{lib: lib}
	switch l, ok := lib.RuntimeFeatureLevel(); {
	case ok:
		f.level, f.levelBy = l, "ANeuralNetworks_getRuntimeFeatureLevel"
	default:
		if api, ok := nn.AndroidAPILevel(); ok {
			f.level, f.levelBy = api, "the Android API level (ro.build.version.sdk)"
		} else {
			f.level, f.levelBy = lib.ImpliedFeatureLevel(), "the newest NNAPI functions the library exports"
		}
	}
	if f.devices, err = lib.Devices(); err != nil {
		return nil, fmt.Errorf("%w: listing NNAPI devices: %w", delegate.ErrNoDevice, err)
	}
	return f, nil
}

// targetOf is the devices a compilation is for, as TFLite's delegate
// chooses them (GetTargetDevices), and the feature level it targets
// (GetTargetFeatureLevel): the device accelerator_name names; else, from
// NNAPI 1.2 on, every device but nnapi-reference unless allowCPU; the
// level is the best of those devices' levels when below the runtime's.
// No devices (nil) means NNAPI's own choice, at the runtime's level.
func (f *found) targetOf(s settings) ([]*nn.Device, target, error) {
	t := target{level: f.level, who: "the NNAPI runtime", acceleratorNamed: s.accelerator != ""}
	var ds []*nn.Device
	switch {
	case s.accelerator != "":
		for i := range f.devices {
			if f.devices[i].Name == s.accelerator {
				ds = append(ds, &f.devices[i])
			}
		}
		if len(ds) == 0 {
			return nil, t, fmt.Errorf("%w: accelerator_name %q names no NNAPI device (there are: %s)", delegate.ErrNoDevice, s.accelerator, f.deviceNames())
		}
	case f.level >= level12 && !s.allowCPU && len(f.devices) > 0:
		for i := range f.devices {
			if f.devices[i].Name != referenceDevice {
				ds = append(ds, &f.devices[i])
			}
		}
		if len(ds) == 0 {
			return nil, t, fmt.Errorf("%w: the only NNAPI device is %s (NNAPI's CPU implementation), which TFLite uses only with allow_nnapi_cpu_on_android_10_plus", errNoTarget, referenceDevice)
		}
	default:
		return nil, t, nil
	}
	best := int64(-1)
	for _, d := range ds {
		best = max(best, d.FeatureLevel)
	}
	if best > 0 && best < f.level {
		t.level = best
		if len(ds) == 1 {
			t.who = fmt.Sprintf("device %q", ds[0].Name)
		} else {
			t.who = "the best of devices " + quoted(ds)
		}
	}
	return ds, t, nil
}

// errNoTarget: no device TFLite would use is left.
var errNoTarget = errors.New("no NNAPI device to run on")

func quoted(ds []*nn.Device) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%q", d.Name)
	}
	return strings.Join(s, ", ")
}

func (f *found) deviceNames() string {
	if len(f.devices) == 0 {
		return "none listed: the library has no device introspection"
	}
	s := make([]string, len(f.devices))
	for i, d := range f.devices {
		s[i] = fmt.Sprintf("%q", d.Name)
	}
	return strings.Join(s, ", ")
}

// describe lists the runtime and each device for Devices.
func (f *found) describe() []delegate.Device {
	out := []delegate.Device{{Name: "runtime", Description: fmt.Sprintf("%s, feature level %s (from %s)", f.lib.Path(), nn.LevelName(f.level), f.levelBy)}}
	ds, _, _ := f.targetOf(settings{})
	for _, d := range f.devices {
		desc := fmt.Sprintf("%s, feature level %s, version %q", d.Type, nn.LevelName(d.FeatureLevel), d.Version)
		used := false
		for _, u := range ds {
			used = used || u.Name == d.Name
		}
		switch {
		case used:
			desc = "in use: " + desc
		case d.Name == referenceDevice:
			desc += "; left out unless allow_nnapi_cpu_on_android_10_plus or accelerator_name asks for it"
		}
		out = append(out, delegate.Device{Name: d.Name, Description: desc})
	}
	return out
}

// whoDevices names the target devices for a reason.
func (t target) whoDevices(ds []*nn.Device) string {
	if len(ds) == 1 {
		return fmt.Sprintf("device %q", ds[0].Name)
	}
	return "devices " + quoted(ds)
}
