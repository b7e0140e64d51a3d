package nn

import "unsafe"

// Operand describes an operand (ANeuralNetworksOperandType): a scalar when
// Dims is nil and Type is a scalar type.
type Operand struct {
	Type      OperandType
	Dims      []uint32
	Scale     float32
	ZeroPoint int32
}

// cOperand is ANeuralNetworksOperandType's layout.
type cOperand struct {
	typ       int32
	dimCount  uint32
	dims      *uint32
	scale     float32
	zeroPoint int32
}

func (o *Operand) c() cOperand {
	c := cOperand{typ: int32(o.Type), dimCount: uint32(len(o.Dims)), scale: o.Scale, zeroPoint: o.ZeroPoint}
	if len(o.Dims) > 0 {
		c.dims = &o.Dims[0]
	}
	return c
}

// cPerChannel is ANeuralNetworksSymmPerChannelQuantParams' layout.
type cPerChannel struct {
	channelDim uint32
	scaleCount uint32
	scales     *float32
}

// Model is an ANeuralNetworksModel being built, then finished.
type Model struct {
	lib    *Lib
	handle uintptr
}

// NewModel is ANeuralNetworksModel_create.
func (l *Lib) NewModel() (*Model, error) {
	m := &Model{lib: l}
	if err := l.check("ANeuralNetworksModel_create", call(l.fn.modelCreate, uintptr(unsafe.Pointer(&m.handle)))); err != nil {
		return nil, err
	}
	return m, nil
}

// Free is ANeuralNetworksModel_free; safe on nil and twice.
func (m *Model) Free() {
	if m == nil || m.handle == 0 {
		return
	}
	call(m.lib.fn.modelFree, m.handle)
	m.handle = 0
}

// Handle is the ANeuralNetworksModel pointer.
func (m *Model) Handle() uintptr { return m.handle }

// AddOperand is ANeuralNetworksModel_addOperand.
func (m *Model) AddOperand(o Operand) error {
	c := o.c()
	r := call(m.lib.fn.addOperand, m.handle, uintptr(unsafe.Pointer(&c)))
	keep(o.Dims)
	return m.lib.check("ANeuralNetworksModel_addOperand", r)
}

// SetValue is ANeuralNetworksModel_setOperandValue. NNAPI copies values of
// up to MaxImmediateSize bytes at once; a larger value it reads until the
// model is finished, so the caller keeps it alive until then.
func (m *Model) SetValue(index uint32, value []byte) error {
	var p unsafe.Pointer
	if len(value) > 0 {
		p = unsafe.Pointer(&value[0])
	}
	r := call(m.lib.fn.setOperandValue, m.handle, uintptr(index), uintptr(p), uintptr(len(value)))
	keep(value)
	return m.lib.check("ANeuralNetworksModel_setOperandValue", r)
}

// SetValueFromMemory is ANeuralNetworksModel_setOperandValueFromMemory.
func (m *Model) SetValueFromMemory(index uint32, mem *Memory, offset, length int) error {
	r := call(m.lib.fn.setOperandValueFromMemory, m.handle, uintptr(index), mem.handle, uintptr(offset), uintptr(length))
	return m.lib.check("ANeuralNetworksModel_setOperandValueFromMemory", r)
}

// SetPerChannel is ANeuralNetworksModel_setOperandSymmPerChannelQuantParams
// (NNAPI 1.2).
func (m *Model) SetPerChannel(index uint32, channelDim int, scales []float32) error {
	const name = "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams"
	if m.lib.fn.setPerChannel == 0 {
		return missing(name)
	}
	c := cPerChannel{channelDim: uint32(channelDim), scaleCount: uint32(len(scales))}
	if len(scales) > 0 {
		c.scales = &scales[0]
	}
	r := call(m.lib.fn.setPerChannel, m.handle, uintptr(index), uintptr(unsafe.Pointer(&c)))
	keep(scales)
	return m.lib.check(name, r)
}

// AddOperation is ANeuralNetworksModel_addOperation.
func (m *Model) AddOperation(op OperationType, inputs, outputs []uint32) error {
	r := call(m.lib.fn.addOperation, m.handle, uintptr(op), uintptr(len(inputs)), uintptr(ptr(inputs)),
		uintptr(len(outputs)), uintptr(ptr(outputs)))
	keep(inputs, outputs)
	return m.lib.check("ANeuralNetworksModel_addOperation", r)
}

// IdentifyInputsAndOutputs is ANeuralNetworksModel_identifyInputsAndOutputs.
func (m *Model) IdentifyInputsAndOutputs(inputs, outputs []uint32) error {
	r := call(m.lib.fn.identifyIO, m.handle, uintptr(len(inputs)), uintptr(ptr(inputs)),
		uintptr(len(outputs)), uintptr(ptr(outputs)))
	keep(inputs, outputs)
	return m.lib.check("ANeuralNetworksModel_identifyInputsAndOutputs", r)
}

// RelaxFloat32ToFloat16 is ANeuralNetworksModel_relaxComputationFloat32toFloat16
// (NNAPI 1.1).
func (m *Model) RelaxFloat32ToFloat16(allow bool) error {
	const name = "ANeuralNetworksModel_relaxComputationFloat32toFloat16"
	if m.lib.fn.relaxFP16 == 0 {
		return missing(name)
	}
	return m.lib.check(name, call(m.lib.fn.relaxFP16, m.handle, boolArg(allow)))
}

// Finish is ANeuralNetworksModel_finish.
func (m *Model) Finish() error {
	return m.lib.check("ANeuralNetworksModel_finish", call(m.lib.fn.modelFinish, m.handle))
}

// SupportedOperations is ANeuralNetworksModel_getSupportedOperationsForDevices
// (NNAPI 1.2) on a finished model: one answer per operation, in the order
// they were added.
func (m *Model) SupportedOperations(devices []*Device, operations int) ([]bool, error) {
	const name = "ANeuralNetworksModel_getSupportedOperationsForDevices"
	if m.lib.fn.supportedForDevices == 0 {
		return nil, missing(name)
	}
	hs := handles(devices)
	out := make([]bool, operations+1) // +1: never a nil pointer
	r := call(m.lib.fn.supportedForDevices, m.handle, uintptr(ptr(hs)), uintptr(len(hs)), uintptr(unsafe.Pointer(&out[0])))
	keep(hs, out)
	if err := m.lib.check(name, r); err != nil {
		return nil, err
	}
	return out[:operations], nil
}

// ptr is the address of s's first element, or nil.
func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// handles are the devices' ANeuralNetworksDevice pointers.
func handles(ds []*Device) []uintptr {
	hs := make([]uintptr, len(ds))
	for i, d := range ds {
		hs[i] = d.handle
	}
	return hs
}

func boolArg(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}
