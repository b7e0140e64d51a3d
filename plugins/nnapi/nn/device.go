package nn

import "unsafe"

// Device is one NNAPI device (ANeuralNetworksDevice, feature level 29).
type Device struct {
	handle       uintptr
	Name         string
	Type         DeviceType
	Version      string
	FeatureLevel int64
}

// Handle is the device's ANeuralNetworksDevice pointer.
func (d *Device) Handle() uintptr { return d.handle }

// RuntimeFeatureLevel is ANeuralNetworks_getRuntimeFeatureLevel (feature
// level 31 and later); ok is false when the library lacks it.
func (l *Lib) RuntimeFeatureLevel() (level int64, ok bool) {
	if l.fn.runtimeFeatureLevel == 0 {
		return 0, false
	}
	return int64(call(l.fn.runtimeFeatureLevel)), true
}

// HasDevices reports whether the library enumerates devices (NNAPI 1.2).
func (l *Lib) HasDevices() bool {
	f := &l.fn
	return f.getDeviceCount != 0 && f.getDevice != 0 && f.deviceName != 0 && f.deviceType != 0 &&
		f.deviceVersion != 0 && f.deviceFeatureLevel != 0
}

// Devices lists the devices; nil, without error, when the library has no
// device introspection (before NNAPI 1.2).
func (l *Lib) Devices() ([]Device, error) {
	if !l.HasDevices() {
		return nil, nil
	}
	var n uint32
	if err := l.check("ANeuralNetworks_getDeviceCount", call(l.fn.getDeviceCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		return nil, err
	}
	out := make([]Device, 0, n)
	for i := uint32(0); i < n; i++ {
		d, err := l.device(i)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// device reads device i.
func (l *Lib) device(i uint32) (Device, error) {
	var d Device
	if err := l.check("ANeuralNetworks_getDevice", call(l.fn.getDevice, uintptr(i), uintptr(unsafe.Pointer(&d.handle)))); err != nil {
		return d, err
	}
	var name, version *byte
	var typ int32
	if err := l.check("ANeuralNetworksDevice_getName", call(l.fn.deviceName, d.handle, uintptr(unsafe.Pointer(&name)))); err != nil {
		return d, err
	}
	if err := l.check("ANeuralNetworksDevice_getType", call(l.fn.deviceType, d.handle, uintptr(unsafe.Pointer(&typ)))); err != nil {
		return d, err
	}
	if err := l.check("ANeuralNetworksDevice_getVersion", call(l.fn.deviceVersion, d.handle, uintptr(unsafe.Pointer(&version)))); err != nil {
		return d, err
	}
	if err := l.check("ANeuralNetworksDevice_getFeatureLevel", call(l.fn.deviceFeatureLevel, d.handle, uintptr(unsafe.Pointer(&d.FeatureLevel)))); err != nil {
		return d, err
	}
	d.Name, d.Version, d.Type = goString(name), goString(version), DeviceType(typ)
	return d, nil
}
