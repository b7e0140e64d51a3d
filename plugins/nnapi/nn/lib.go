package nn

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// ErrNoLibrary is wrapped by Load's error when no NNAPI library opens.
var ErrNoLibrary = errors.New("libneuralnetworks.so not found")

// DefaultLibrary is the NNAPI library's name on Android.
const DefaultLibrary = "libneuralnetworks.so"

// Lib is a loaded NNAPI library: the function pointers it has. The library
// stays loaded for the life of the process (drivers keep threads in it).
type Lib struct {
	path string
	fn   funcs
}

// funcs are the NNAPI entry points; 0 for one the library lacks.
type funcs struct {
	getDeviceCount, getDevice, runtimeFeatureLevel                        uintptr
	deviceName, deviceType, deviceVersion, deviceFeatureLevel             uintptr
	memoryCreateFromFd, memoryFree                                        uintptr
	modelCreate, modelFree, modelFinish, addOperand, setOperandValue      uintptr
	setOperandValueFromMemory, setPerChannel, addOperation, identifyIO    uintptr
	relaxFP16, supportedForDevices                                        uintptr
	compCreate, compCreateForDevices, compFree, compFinish                uintptr
	compPreference, compPriority, compCaching                             uintptr
	execCreate, execFree, execSetInputFromMemory, execSetOutputFromMemory uintptr
	execCompute, execStartCompute, execBurstCompute, execSetReusable      uintptr
	eventWait, eventFree, burstCreate, burstFree                          uintptr
	lastError                                                             uintptr
}

// symbols pairs each entry point with its C name.
func (f *funcs) symbols() map[string]*uintptr {
	return map[string]*uintptr{
		"ANeuralNetworks_getDeviceCount":                           &f.getDeviceCount,
		"ANeuralNetworks_getDevice":                                &f.getDevice,
		"ANeuralNetworks_getRuntimeFeatureLevel":                   &f.runtimeFeatureLevel,
		"ANeuralNetworksDevice_getName":                            &f.deviceName,
		"ANeuralNetworksDevice_getType":                            &f.deviceType,
		"ANeuralNetworksDevice_getVersion":                         &f.deviceVersion,
		"ANeuralNetworksDevice_getFeatureLevel":                    &f.deviceFeatureLevel,
		"ANeuralNetworksMemory_createFromFd":                       &f.memoryCreateFromFd,
		"ANeuralNetworksMemory_free":                               &f.memoryFree,
		"ANeuralNetworksModel_create":                              &f.modelCreate,
		"ANeuralNetworksModel_free":                                &f.modelFree,
		"ANeuralNetworksModel_finish":                              &f.modelFinish,
		"ANeuralNetworksModel_addOperand":                          &f.addOperand,
		"ANeuralNetworksModel_setOperandValue":                     &f.setOperandValue,
		"ANeuralNetworksModel_setOperandValueFromMemory":           &f.setOperandValueFromMemory,
		"ANeuralNetworksModel_setOperandSymmPerChannelQuantParams": &f.setPerChannel,
		"ANeuralNetworksModel_addOperation":                        &f.addOperation,
		"ANeuralNetworksModel_identifyInputsAndOutputs":            &f.identifyIO,
		"ANeuralNetworksModel_relaxComputationFloat32toFloat16":    &f.relaxFP16,
		"ANeuralNetworksModel_getSupportedOperationsForDevices":    &f.supportedForDevices,
		"ANeuralNetworksCompilation_create":                        &f.compCreate,
		"ANeuralNetworksCompilation_createForDevices":              &f.compCreateForDevices,
		"ANeuralNetworksCompilation_free":                          &f.compFree,
		"ANeuralNetworksCompilation_finish":                        &f.compFinish,
		"ANeuralNetworksCompilation_setPreference":                 &f.compPreference,
		"ANeuralNetworksCompilation_setPriority":                   &f.compPriority,
		"ANeuralNetworksCompilation_setCaching":                    &f.compCaching,
		"ANeuralNetworksExecution_create":                          &f.execCreate,
		"ANeuralNetworksExecution_free":                            &f.execFree,
		"ANeuralNetworksExecution_setInputFromMemory":              &f.execSetInputFromMemory,
		"ANeuralNetworksExecution_setOutputFromMemory":             &f.execSetOutputFromMemory,
		"ANeuralNetworksExecution_compute":                         &f.execCompute,
		"ANeuralNetworksExecution_startCompute":                    &f.execStartCompute,
		"ANeuralNetworksExecution_burstCompute":                    &f.execBurstCompute,
		"ANeuralNetworksExecution_setReusable":                     &f.execSetReusable,
		"ANeuralNetworksEvent_wait":                                &f.eventWait,
		"ANeuralNetworksEvent_free":                                &f.eventFree,
		"ANeuralNetworksBurst_create":                              &f.burstCreate,
		"ANeuralNetworksBurst_free":                                &f.burstFree,
		"DelegoNnapiTest_lastError":                                &f.lastError,
	}
}

// required are the functions of NNAPI 1.0 (Android 8.1, feature level 27)
// that the delegate cannot work without.
var required = []string{
	"ANeuralNetworksMemory_createFromFd", "ANeuralNetworksMemory_free",
	"ANeuralNetworksModel_create", "ANeuralNetworksModel_free", "ANeuralNetworksModel_finish",
	"ANeuralNetworksModel_addOperand", "ANeuralNetworksModel_setOperandValue",
	"ANeuralNetworksModel_setOperandValueFromMemory", "ANeuralNetworksModel_addOperation",
	"ANeuralNetworksModel_identifyInputsAndOutputs",
	"ANeuralNetworksCompilation_create", "ANeuralNetworksCompilation_free",
	"ANeuralNetworksCompilation_finish", "ANeuralNetworksCompilation_setPreference",
	"ANeuralNetworksExecution_create", "ANeuralNetworksExecution_free",
	"ANeuralNetworksExecution_setInputFromMemory", "ANeuralNetworksExecution_setOutputFromMemory",
	"ANeuralNetworksExecution_startCompute", "ANeuralNetworksEvent_wait", "ANeuralNetworksEvent_free",
}

// Load opens the NNAPI library at path ("" or a bare name: the dynamic
// linker's search, as on Android) and resolves its functions. Its error
// wraps ErrNoLibrary when nothing opens.
func Load(path string) (*Lib, error) {
	if path == "" {
		path = DefaultLibrary
	}
	h, err := dlopen(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoLibrary, path, err)
	}
	l := &Lib{path: path}
	for name, p := range l.fn.symbols() {
		*p = dlsym(h, name)
	}
	var missing []string
	for _, name := range required {
		if *l.fn.symbols()[name] == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s is not an NNAPI library: it lacks %s", path, strings.Join(missing, ", "))
	}
	return l, nil
}

// Path is the library Load opened.
func (l *Lib) Path() string { return l.path }

// Has reports whether the library exports the C function name (one of
// those the package uses): an older Android lacks the newer ones.
func (l *Lib) Has(name string) bool {
	p, ok := l.fn.symbols()[name]
	return ok && *p != 0
}

// check turns a result code from the call name into an error.
func (l *Lib) check(name string, r uintptr) error {
	code := ResultCode(int32(r))
	if code == NoError {
		return nil
	}
	return &Error{Call: name, Code: code, Detail: l.lastError()}
}

// missing is the error for a call the library lacks.
func missing(name string) error {
	return fmt.Errorf("%s: not in this NNAPI library (an older Android)", name)
}

// lastError is the test runtime's description of its last failure.
func (l *Lib) lastError() string {
	if l.fn.lastError == 0 {
		return ""
	}
	return callString(l.fn.lastError)
}

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for i := 0; ; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// cString is s NUL-terminated.
func cString(s string) []byte { return append([]byte(s), 0) }

// keep keeps values alive across a call that received them as uintptr.
func keep(vs ...any) { runtime.KeepAlive(vs) }
