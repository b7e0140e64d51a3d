package nn

import "unsafe"

// Execution is an ANeuralNetworksExecution.
type Execution struct {
	lib    *Lib
	handle uintptr
}

// NewExecution is ANeuralNetworksExecution_create.
func (c *Compilation) NewExecution() (*Execution, error) {
	e := &Execution{lib: c.lib}
	if err := c.lib.check("ANeuralNetworksExecution_create", call(c.lib.fn.execCreate, c.handle, uintptr(unsafe.Pointer(&e.handle)))); err != nil {
		return nil, err
	}
	return e, nil
}

// Free is ANeuralNetworksExecution_free; safe on nil and twice.
func (e *Execution) Free() {
	if e == nil || e.handle == 0 {
		return
	}
	call(e.lib.fn.execFree, e.handle)
	e.handle = 0
}

// CanReuse reports whether executions can be made reusable
// (ANeuralNetworksExecution_setReusable, feature level 5).
func (l *Lib) CanReuse() bool { return l.fn.execSetReusable != 0 }

// SetReusable is ANeuralNetworksExecution_setReusable.
func (e *Execution) SetReusable(reusable bool) error {
	const name = "ANeuralNetworksExecution_setReusable"
	if e.lib.fn.execSetReusable == 0 {
		return missing(name)
	}
	return e.lib.check(name, call(e.lib.fn.execSetReusable, e.handle, boolArg(reusable)))
}

// SetInputFromMemory is ANeuralNetworksExecution_setInputFromMemory, with
// the operand's type as the model gave it (a nil type).
func (e *Execution) SetInputFromMemory(index int, mem *Memory, offset, length int) error {
	r := call(e.lib.fn.execSetInputFromMemory, e.handle, uintptr(index), 0, mem.handle, uintptr(offset), uintptr(length))
	return e.lib.check("ANeuralNetworksExecution_setInputFromMemory", r)
}

// SetOutputFromMemory is ANeuralNetworksExecution_setOutputFromMemory.
func (e *Execution) SetOutputFromMemory(index int, mem *Memory, offset, length int) error {
	r := call(e.lib.fn.execSetOutputFromMemory, e.handle, uintptr(index), 0, mem.handle, uintptr(offset), uintptr(length))
	return e.lib.check("ANeuralNetworksExecution_setOutputFromMemory", r)
}

// HasCompute reports whether synchronous ANeuralNetworksExecution_compute
// (NNAPI 1.2) is there; before it, Compute uses startCompute and an event.
func (l *Lib) HasCompute() bool { return l.fn.execCompute != 0 }

// Compute runs the execution and waits for it: ANeuralNetworksExecution_compute
// where the library has it, else startCompute and ANeuralNetworksEvent_wait.
func (e *Execution) Compute() error {
	if e.lib.fn.execCompute != 0 {
		return e.lib.check("ANeuralNetworksExecution_compute", call(e.lib.fn.execCompute, e.handle))
	}
	return e.StartComputeAndWait()
}

// StartComputeAndWait is ANeuralNetworksExecution_startCompute, then
// ANeuralNetworksEvent_wait and ANeuralNetworksEvent_free.
func (e *Execution) StartComputeAndWait() error {
	var ev uintptr
	if err := e.lib.check("ANeuralNetworksExecution_startCompute", call(e.lib.fn.execStartCompute, e.handle, uintptr(unsafe.Pointer(&ev)))); err != nil {
		return err
	}
	defer call(e.lib.fn.eventFree, ev)
	return e.lib.check("ANeuralNetworksEvent_wait", call(e.lib.fn.eventWait, ev))
}

// BurstCompute is ANeuralNetworksExecution_burstCompute.
func (e *Execution) BurstCompute(b *Burst) error {
	return e.lib.check("ANeuralNetworksExecution_burstCompute", call(e.lib.fn.execBurstCompute, e.handle, b.handle))
}
