package nn

import (
	"fmt"
	"unsafe"
)

// Compilation is an ANeuralNetworksCompilation.
type Compilation struct {
	lib    *Lib
	handle uintptr
}

// NewCompilation is ANeuralNetworksCompilation_create, or
// ANeuralNetworksCompilation_createForDevices (NNAPI 1.2) when devices are
// given.
func (l *Lib) NewCompilation(m *Model, devices []*Device) (*Compilation, error) {
	c := &Compilation{lib: l}
	if len(devices) == 0 {
		r := call(l.fn.compCreate, m.handle, uintptr(unsafe.Pointer(&c.handle)))
		if err := l.check("ANeuralNetworksCompilation_create", r); err != nil {
			return nil, err
		}
		return c, nil
	}
	const name = "ANeuralNetworksCompilation_createForDevices"
	if l.fn.compCreateForDevices == 0 {
		return nil, missing(name)
	}
	hs := handles(devices)
	r := call(l.fn.compCreateForDevices, m.handle, uintptr(ptr(hs)), uintptr(len(hs)), uintptr(unsafe.Pointer(&c.handle)))
	keep(hs)
	if err := l.check(name, r); err != nil {
		return nil, err
	}
	return c, nil
}

// Free is ANeuralNetworksCompilation_free; safe on nil and twice.
func (c *Compilation) Free() {
	if c == nil || c.handle == 0 {
		return
	}
	call(c.lib.fn.compFree, c.handle)
	c.handle = 0
}

// SetPreference is ANeuralNetworksCompilation_setPreference.
func (c *Compilation) SetPreference(p Preference) error {
	return c.lib.check("ANeuralNetworksCompilation_setPreference", call(c.lib.fn.compPreference, c.handle, uintptr(p)))
}

// SetPriority is ANeuralNetworksCompilation_setPriority (NNAPI 1.3).
func (c *Compilation) SetPriority(p Priority) error {
	const name = "ANeuralNetworksCompilation_setPriority"
	if c.lib.fn.compPriority == 0 {
		return missing(name)
	}
	return c.lib.check(name, call(c.lib.fn.compPriority, c.handle, uintptr(p)))
}

// SetCaching is ANeuralNetworksCompilation_setCaching (NNAPI 1.2): dir is
// the cache directory, token the model's 32-byte token.
func (c *Compilation) SetCaching(dir string, token [CacheTokenSize]byte) error {
	const name = "ANeuralNetworksCompilation_setCaching"
	if c.lib.fn.compCaching == 0 {
		return missing(name)
	}
	d := cString(dir)
	r := call(c.lib.fn.compCaching, c.handle, uintptr(unsafe.Pointer(&d[0])), uintptr(unsafe.Pointer(&token[0])))
	keep(d, &token)
	return c.lib.check(name, r)
}

// Finish is ANeuralNetworksCompilation_finish.
func (c *Compilation) Finish() error {
	return c.lib.check("ANeuralNetworksCompilation_finish", call(c.lib.fn.compFinish, c.handle))
}

// Burst is an ANeuralNetworksBurst (NNAPI 1.2).
type Burst struct {
	lib    *Lib
	handle uintptr
}

// NewBurst is ANeuralNetworksBurst_create.
func (c *Compilation) NewBurst() (*Burst, error) {
	const name = "ANeuralNetworksBurst_create"
	l := c.lib
	if l.fn.burstCreate == 0 || l.fn.burstFree == 0 || l.fn.execBurstCompute == 0 {
		return nil, fmt.Errorf("bursts: %w", missing(name))
	}
	b := &Burst{lib: l}
	if err := l.check(name, call(l.fn.burstCreate, c.handle, uintptr(unsafe.Pointer(&b.handle)))); err != nil {
		return nil, err
	}
	return b, nil
}

// Free is ANeuralNetworksBurst_free; safe on nil and twice.
func (b *Burst) Free() {
	if b == nil || b.handle == 0 {
		return
	}
	call(b.lib.fn.burstFree, b.handle)
	b.handle = 0
}
