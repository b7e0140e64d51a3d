package gpu

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/gpu/cl"
)

// Name is the delegate's name.
const Name = "gpu"

// Delegate runs partitions on an OpenCL device. It holds only what it
// found of OpenCL (see discover): each compiled partition owns its context,
// queue, program and buffers. Built programs are cached on disk (CacheEnv).
type Delegate struct {
	hooks *hooks // tests' hooks; nil for New's

	once  sync.Once
	found []cl.Device
	used  int // index into found
	err   error
}

// New returns the gpu delegate.
func New() *Delegate { return &Delegate{} }

// Name implements delegate.Delegate.
func (*Delegate) Name() string { return Name }

// Support declares what Compile handles. Without OpenCL (no library, no
// platform, no device) it fails with an error wrapping delegate.ErrNoDevice.
func (dl *Delegate) Support(ctx context.Context) (*delegate.Support, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, _, err := dl.discover(); err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	return support(), nil
}

// Devices lists every OpenCL device of every platform, marking the one
// Compile uses ("in use:"). Its Name is the device's index (what
// DELEGO_GPU_DEVICE takes) and name.
func (dl *Delegate) Devices(ctx context.Context) ([]delegate.Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ds, used, err := dl.discover()
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	out := make([]delegate.Device, len(ds))
	for i := range ds {
		out[i] = delegate.Device{Name: fmt.Sprintf("%d: %s", i, ds[i].Name), Description: describe(&ds[i], i == used)}
	}
	return out, nil
}

// Compile lowers the partition to OpenCL C, builds it once for the
// partition's shapes, uploads the weights and allocates every buffer.
func (dl *Delegate) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := readSettings(p.Settings)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	m, err := model.New(p.Model)
	if err != nil {
		return nil, fmt.Errorf("gpu: partition data: %w", err)
	}
	d, err := dl.device()
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	prec, err := choosePrecision(os.Getenv(PrecisionEnv), s.lossAllowed, d)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	pl, err := lower(m, s, prec)
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	x, err := buildWith(d, pl, programBuilder{cache: openCache(os.Getenv(CacheEnv)), hooks: dl.hooks})
	if err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	// The device holds the constants now: let the partition model go.
	for i := range pl.tensors {
		pl.tensors[i].data = nil
	}
	return x, nil
}

// Close implements delegate.Delegate; the delegate holds nothing to close.
func (*Delegate) Close() error { return nil }

var (
	_ delegate.Delegate     = (*Delegate)(nil)
	_ delegate.DeviceLister = (*Delegate)(nil)
)
