//go:build !cgo

package xnnpack

import (
	"fmt"

	"github.com/delego/delego/delegate"
)

// Without cgo there is no XNNPACK: the delegate reports itself unavailable
// (delegate.ErrNoDevice), which the interpreter treats as a compilation
// error subject to the fallback settings.

var errNoCgo = fmt.Errorf("%w: xnnpack: this binary was built without cgo, so without XNNPACK", delegate.ErrNoDevice)

func initialize() error { return errNoCgo }

type engine struct{}

func compile(*program, int, bool) (*engine, error) { return nil, errNoCgo }

func (*engine) run(_, _ [][]byte) error { return errNoCgo }

func (*engine) close() {}
