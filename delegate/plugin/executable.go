package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
	"github.com/delego/delego/tensor"
)

// releaseTimeout bounds Release when an executable is closed: a plugin
// that has not freed a partition by then is killed (a stopped one would
// otherwise hold up the interpreter's Close).
const releaseTimeout = 2 * time.Second

// shmAlign aligns tensors in a region (cache lines).
const shmAlign = 64

// executable is a partition compiled in a plugin process.
type executable struct {
	c      *Client
	s      *session // the process it was compiled in
	handle uint64

	mu     sync.Mutex // one Invoke at a time: the region is per executable
	region *region
	closed bool
	// bell rings the region's doorbell when the plugin answers it (nil:
	// none); noBell: the plugin answered an Attach without one, so Invokes
	// stay gRPC calls.
	bell   *bellRinger
	noBell bool
}

// wantBell reports whether Invokes should go through a doorbell: the
// platform has one, the options allow shared memory and the doorbell, and
// the plugin has not declined it.
func (e *executable) wantBell() bool {
	o := e.c.opts
	return doorbellSupported && shmSupported && o.ShmThreshold >= 0 && !o.NoDoorbell && !e.noBell
}

// placement is where each boundary tensor travels: at an offset of the
// region (shm), or inline (offset -1), and the bytes of tensors the region
// must hold. With a doorbell every tensor with bytes goes through the region, so that
// the request is metadata only.
func (e *executable) placement(inputs, outputs []*tensor.Tensor, bell bool) (offsets []int, size int) {
	threshold := e.c.opts.ShmThreshold
	if bell {
		threshold = 1
	}
	offsets = make([]int, 0, len(inputs)+len(outputs))
	place := func(n int) int {
		if !shmSupported || threshold < 0 || n == 0 || n < threshold {
			return -1
		}
		// A delegate whose vector code reads a little past a tensor's end
		// can then use it where it lies instead of copying it.
		off := delegate.PlaceOverreadable(size, n)
		size = off + (n+shmAlign-1)/shmAlign*shmAlign
		return off
	}
	for _, t := range inputs {
		offsets = append(offsets, place(len(t.Data)))
	}
	for _, t := range outputs {
		offsets = append(offsets, place(len(t.Data)))
	}
	return offsets, size
}

// Invoke sends the inputs (inline or through the region), runs the
// partition in the plugin under ctx, and copies the outputs back in place.
func (e *executable) Invoke(ctx context.Context, inputs, outputs []*tensor.Tensor) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("invoke: %w", ErrClosed)
	}
	if !e.s.alive() {
		if e.s.closedByClient() {
			return fmt.Errorf("invoke: %w", ErrClosed)
		}
		// Ended under us (killed after a deadline, or died between calls):
		// make sure it is reaped and no longer current.
		e.s.kill()
		e.c.forget(e.s)
		return e.s.exited(fmt.Errorf("invoke: %w: the partition was compiled in a process that has ended (%s); compile it again",
			ErrCrashed, e.s.exitReport()))
	}
	useBell := e.wantBell()
	offsets, size := e.placement(inputs, outputs, useBell)
	if (size > 0 || useBell) && (e.region == nil || e.capacity() < size || useBell && e.bell == nil) {
		if err := e.attach(ctx, size, useBell); err != nil {
			return err
		}
	}
	req := &pluginpb.InvokeRequest{Handle: e.handle}
	for i, t := range inputs {
		pt := tensorPB(t, offsets[i])
		if pt.Data == nil {
			pt.Data = &pluginpb.Tensor_Inline{Inline: t.Data}
		} else {
			copy(e.region.data[offsets[i]:], t.Data)
		}
		req.Inputs = append(req.Inputs, pt)
	}
	for i, t := range outputs {
		req.Outputs = append(req.Outputs, tensorPB(t, offsets[len(inputs)+i]))
	}
	resp, err := e.call(ctx, req)
	if err != nil {
		return e.c.callErr(ctx, e.s, "invoke", err)
	}
	if err := e.readOutputs(req.Outputs, resp.Outputs, outputs); err != nil {
		return fmt.Errorf("invoke: %w", err)
	}
	return nil
}

// tensorPB describes t on the wire, its data at offset off of the region,
// or no data when off is -1.
func tensorPB(t *tensor.Tensor, off int) *pluginpb.Tensor {
	pt := &pluginpb.Tensor{Type: int32(t.Type), Shape: shapeToPB(t.Shape), Bytes: uint64(len(t.Data))}
	if off >= 0 {
		pt.Data = &pluginpb.Tensor_Shm{Shm: &pluginpb.Region{Offset: uint64(off), Length: uint64(len(t.Data))}}
	}
	return pt
}

// call runs req in the plugin: through the doorbell when there is one and
// req fits its block, else as a gRPC call. Its errors are for callErr.
func (e *executable) call(ctx context.Context, req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
	if e.bell != nil {
		if resp, err := e.bell.ring(ctx, req); !errors.Is(err, errBellTooLarge) {
			return resp, err
		}
	}
	return e.s.rpc.Invoke(ctx, req)
}

// readOutputs checks the plugin's outputs against what was asked (count,
// types, shapes, sizes, regions) and copies them into outputs.
func (e *executable) readOutputs(asked, got []*pluginpb.Tensor, outputs []*tensor.Tensor) error {
	if len(got) != len(asked) {
		return fmt.Errorf("%w: %d outputs, want %d", ErrMalformed, len(got), len(asked))
	}
	for i, g := range got {
		a := asked[i]
		if g.Type != a.Type || !slices.Equal(g.Shape, a.Shape) {
			return fmt.Errorf("%w: output %d is %s %v, want %s %v", ErrMalformed, i,
				tensor.DType(g.Type), g.Shape, tensor.DType(a.Type), a.Shape)
		}
		var data []byte
		switch d := g.Data.(type) {
		case *pluginpb.Tensor_Inline:
			data = d.Inline
		case *pluginpb.Tensor_Shm:
			want := a.GetShm()
			if want == nil || d.Shm.Offset != want.Offset || d.Shm.Length != want.Length {
				return fmt.Errorf("%w: output %d came back in shared memory [%d, +%d), not where it was asked", ErrMalformed, i, d.Shm.Offset, d.Shm.Length)
			}
			var err error
			if data, err = e.region.slice(d.Shm.Offset, d.Shm.Length); err != nil {
				return fmt.Errorf("%w: output %d: %v", ErrMalformed, i, err)
			}
		default:
			return fmt.Errorf("%w: output %d has no data", ErrMalformed, i)
		}
		if len(data) != len(outputs[i].Data) || g.Bytes != uint64(len(data)) {
			return fmt.Errorf("%w: output %d holds %d bytes (says %d), want %d", ErrMalformed, i, len(data), g.Bytes, len(outputs[i].Data))
		}
		copy(outputs[i].Data, data)
	}
	return nil
}

// capacity is how many bytes of tensors the region holds.
func (e *executable) capacity() int {
	if e.region == nil {
		return 0
	}
	if e.bell != nil {
		return len(e.region.data) - doorbellSize
	}
	return len(e.region.data)
}

// attach replaces the executable's region with one of at least size bytes
// of tensors, and a doorbell block after them when bell asks for one,
// mapped by both processes. A region made as a file is unlinked before
// attach returns, whatever happened.
func (e *executable) attach(ctx context.Context, size int, withBell bool) error {
	size = (size + delegate.Page - 1) / delegate.Page * delegate.Page
	if withBell {
		size += doorbellSize
	}
	req := &pluginpb.AttachRequest{Handle: e.handle, Size: uint64(size), Doorbell: withBell}
	r, err := e.newRegion(req)
	if err != nil {
		return fmt.Errorf("invoke: %w", err)
	}
	resp, err := e.s.rpc.Attach(ctx, req)
	var rmErr error
	if req.Path != "" {
		rmErr = os.Remove(req.Path)
	}
	if err != nil {
		r.close()
		return fmt.Errorf("attach shared memory: %w", e.c.callErr(ctx, e.s, "attach shared memory", err))
	}
	if rmErr != nil {
		r.close()
		return fmt.Errorf("invoke: shared memory: %w", rmErr)
	}
	old := e.region
	e.region, e.bell = r, nil
	switch {
	case withBell && resp.Doorbell:
		e.bell = newBellRinger(doorbellOf(r), e.s.alive, e.c.opts.observeBell)
	case withBell:
		e.noBell = true
	}
	return old.close()
}

// newRegion makes a region of req.Size bytes and says in req how the plugin
// finds it: sent over the region channel (FdToken) where the session has
// one (and the kernel makes memfds), else as a file (Path) in Options.ShmDir, which the caller unlinks
// once Attach returns.
func (e *executable) newRegion(req *pluginpb.AttachRequest) (*region, error) {
	if e.s.regions != nil {
		r, token, err := e.s.regions.create(int(req.Size))
		if !errors.Is(err, errNoMemfd) {
			req.FdToken = token
			return r, err
		}
	}
	r, path, err := createRegion(e.c.opts.ShmDir, int(req.Size))
	req.Path = path
	return r, err
}

// Close releases the partition in the plugin and unmaps the region.
func (e *executable) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var err error
	if e.s.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		if _, rerr := e.s.rpc.Release(ctx, &pluginpb.ReleaseRequest{Handle: e.handle}); rerr != nil {
			err = fmt.Errorf("release: %w", e.c.callErr(ctx, e.s, "release", rerr))
			if errors.Is(err, ErrClosed) {
				err = nil
			}
		}
	}
	return errors.Join(err, e.region.close())
}
