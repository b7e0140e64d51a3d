package model

import "sync"

// derived holds what users of a model compute from its constants once and
// share (Derived).
type derived struct {
	mu      sync.Mutex
	entries map[any]*derivedEntry
}

type derivedEntry struct {
	once  sync.Once
	value any
}

// Derived returns the value build makes for key, built once per model:
// data computed from the model's constant tensors (a kernel's packed
// weights) that every interpreter of the model then shares instead of
// holding its own copy. build runs at most once per key; concurrent
// callers with the same key wait for it. The value must be read-only from
// then on, and key must say everything the value depends on. A Model not
// made by New or Load shares nothing: build runs every time.
func (m *Model) Derived(key any, build func() any) any {
	if m.derived == nil {
		return build()
	}
	m.derived.mu.Lock()
	if m.derived.entries == nil {
		m.derived.entries = make(map[any]*derivedEntry)
	}
	e, ok := m.derived.entries[key]
	if !ok {
		e = &derivedEntry{}
		m.derived.entries[key] = e
	}
	m.derived.mu.Unlock()
	e.once.Do(func() { e.value = build() })
	return e.value
}
