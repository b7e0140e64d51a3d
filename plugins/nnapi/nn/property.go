package nn

import "runtime"

// AndroidAPILevel reads the Android API level (the system property
// ro.build.version.sdk, through bionic's __system_property_get); ok is
// false off Android or when the property cannot be read.
func AndroidAPILevel() (level int64, ok bool) {
	if runtime.GOOS != "android" {
		return 0, false
	}
	h, err := dlopen("libc.so")
	if err != nil {
		return 0, false
	}
	get := dlsym(h, "__system_property_get")
	if get == 0 {
		return 0, false
	}
	name := cString("ro.build.version.sdk")
	var value [92]byte // PROP_VALUE_MAX
	n := call(get, uintptr(ptr(name)), uintptr(ptr(value[:])))
	keep(name, &value)
	for i := 0; i < int(n) && i < len(value); i++ {
		d := value[i]
		if d < '0' || d > '9' {
			return 0, false
		}
		level = level*10 + int64(d-'0')
	}
	return level, n > 0
}

// ImpliedFeatureLevel is the feature level the library's functions imply,
// for a library without ANeuralNetworks_getRuntimeFeatureLevel off Android:
// the newest level whose functions it exports.
func (l *Lib) ImpliedFeatureLevel() int64 {
	switch f := &l.fn; {
	case f.execSetReusable != 0:
		return FeatureLevel5
	case f.compPriority != 0:
		return FeatureLevel4
	case f.getDeviceCount != 0:
		return FeatureLevel3
	case f.relaxFP16 != 0:
		return FeatureLevel2
	}
	return FeatureLevel1
}
