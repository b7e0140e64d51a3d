package driver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/delego/delego/plugins/edgetpu/program"
	"github.com/delego/delego/plugins/edgetpu/usb"
)

// syncStream stands in for an InStream on a transport without one: one
// bulk-in transfer in flight, while Next waits.
type syncStream struct {
	t  Transport
	ep int
}

func (s syncStream) Next(ctx context.Context, buf []byte) (int, error) {
	return s.t.BulkIn(ctx, s.ep, buf)
}

func (s syncStream) Close() error { return nil }

// startReaders is what UsbDriver::WorkerThreadFunc installs once the
// driver is open, in its order: a reader of event descriptors on endpoint
// 2, one of interrupts on endpoint 3, and the queue of bulk-in transfers
// on endpoint 1 (usb_bulk_in_queue_capacity transfers of 1 KiB, or 256
// bytes at USB 2 high speed). The event reader is a queue of one transfer
// where the transport has queues, so that it is submitted before Open
// returns, as the worker thread's is before the first request.
func (d *Driver) startReaders(ctx context.Context) error {
	d.bg, d.stopBG = context.WithCancel(context.Background())
	d.events = make(chan event, 64)
	d.inBuf = make([]byte, d.inChunk)
	newStream := func(ctx context.Context, ep, size, count int) (usb.InStream, error) {
		if s, ok := d.t.(InStreamer); ok {
			return s.NewInStream(ctx, ep, size, count)
		}
		return syncStream{t: d.t, ep: ep}, nil
	}
	ev, err := newStream(ctx, EPEvent, eventBytes, 1)
	if err != nil {
		d.stopBG()
		return fmt.Errorf("event endpoint: %w", err)
	}
	d.wg.Add(2)
	go d.readEvents(ev, func() (usb.InStream, error) { return newStream(d.bg, EPEvent, eventBytes, 1) })
	go d.readInterrupts()
	st, err := newStream(ctx, EPBulkIn, d.inChunk, d.opts.BulkInQueue)
	if err != nil {
		d.stopReaders()
		return fmt.Errorf("queue %d bulk-in transfers: %w", d.opts.BulkInQueue, err)
	}
	d.stream = st
	return nil
}

// stopReaders cancels the readers' transfers and waits for them
// (UsbDriver::SetState(kClosing): TryCancelAllTransfers).
func (d *Driver) stopReaders() {
	if d.stopBG == nil {
		return
	}
	d.stopBG()
	if d.stream != nil {
		_ = d.stream.Close()
		d.stream = nil
	}
	d.wg.Wait()
}

// setFault records the first fault and ends the run in progress with it.
func (d *Driver) setFault(err error) {
	d.faultMu.Lock()
	defer d.faultMu.Unlock()
	if d.fault == nil {
		d.fault = err
	}
	if d.runCancel != nil {
		d.runCancel(err)
	}
}

func (d *Driver) faulted() error {
	d.faultMu.Lock()
	defer d.faultMu.Unlock()
	return d.fault
}

// read is one transfer of a background reader, bounded by the timeout; it
// reports whether the transfer timed out (which libedgetpu ignores: the
// reader is installed again).
func (d *Driver) read(f func(context.Context, int, []byte) (int, error), ep int, buf []byte) (int, bool, error) {
	ctx, cancel := context.WithTimeout(d.bg, d.opts.Timeout)
	defer cancel()
	n, err := f(ctx, ep, buf)
	return n, err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && d.bg.Err() == nil, err
}

// readEvents is UsbMlCommands::AsyncReadEvent and UsbDriver::HandleEvent:
// 16-byte event descriptors (address, length, tag in the low 4 bits of
// byte 12); a timeout installs the reader again; another failure, or a
// packet of another size, is fatal (libedgetpu aborts).
func (d *Driver) readEvents(s usb.InStream, again func() (usb.InStream, error)) {
	defer d.wg.Done()
	defer func() {
		if s != nil {
			_ = s.Close()
		}
	}()
	buf := make([]byte, eventBytes)
	for {
		n, timedOut, err := d.read(func(ctx context.Context, _ int, buf []byte) (int, error) { return s.Next(ctx, buf) }, EPEvent, buf)
		switch {
		case d.bg.Err() != nil:
			return
		case timedOut:
			_ = s.Close()
			if s, err = again(); err != nil {
				d.setFault(fmt.Errorf("event endpoint %#02x: %w", 0x80|EPEvent, err))
				return
			}
			continue
		case err != nil:
			d.setFault(fmt.Errorf("event endpoint %#02x: %w", 0x80|EPEvent, err))
			return
		case n != eventBytes:
			d.setFault(fmt.Errorf("%w: a %d-byte event descriptor, want %d", ErrDeviceFault, n, eventBytes))
			return
		}
		ev := event{addr: binary.LittleEndian.Uint64(buf), length: binary.LittleEndian.Uint32(buf[8:]), tag: buf[12] & 0xf}
		select {
		case d.events <- ev:
		default:
			d.setFault(fmt.Errorf("%w: %d event descriptors nobody waits for", ErrDeviceFault, cap(d.events)))
			return
		}
	}
}

// readInterrupts is UsbMlCommands::AsyncReadInterrupt and
// UsbDriver::HandleInterrupt: 4-byte interrupts whose bit 0 is the fatal
// error interrupt and bits 1-4 the four top-level interrupts.
func (d *Driver) readInterrupts() {
	defer d.wg.Done()
	buf := make([]byte, intrBytes)
	for {
		n, timedOut, err := d.read(d.t.InterruptIn, EPInterrupt, buf)
		switch {
		case d.bg.Err() != nil:
			return
		case timedOut:
			continue
		case err != nil:
			d.setFault(fmt.Errorf("interrupt endpoint %#02x: %w", 0x80|EPInterrupt, err))
			return
		case n != intrBytes:
			d.setFault(fmt.Errorf("%w: a %d-byte interrupt, want %d", ErrDeviceFault, n, intrBytes))
			return
		}
		if err := d.handleInterrupt(d.bg, binary.LittleEndian.Uint32(buf)); err != nil {
			if d.bg.Err() == nil {
				d.setFault(err)
			}
			return
		}
	}
}

// handleInterrupt is UsbDriver::HandleInterrupt. A fatal error interrupt
// reads the HIB error status (CheckHibError, which libedgetpu aborts on
// when it is not zero) and clears the interrupt; each top-level interrupt
// runs its handler (BeagleTopLevelInterruptManager::DoHandleInterrupt) and
// is cleared. Clearing writes the status register with the interrupt's bit
// at 0 (InterruptController::ClearInterruptStatus: write 0 to clear).
func (d *Driver) handleInterrupt(ctx context.Context, raw uint32) error {
	c := d.c
	var fault error
	if raw&1 != 0 {
		status, err := c.read64(ctx, csrHIBErrorStatus)
		if err != nil {
			return err
		}
		if status != 0 {
			first, err := c.read64(ctx, csrHIBFirstErrorStatus)
			if err != nil {
				return err
			}
			fault = fmt.Errorf("%w: HIB error: hib_error_status = %016x, hib_first_error_status = %016x", ErrDeviceFault, status, first)
		}
		if err := c.write64(ctx, csrFatalErrIntStatus, 0); err != nil {
			return err
		}
		if fault == nil {
			fault = fmt.Errorf("%w: fatal error interrupt", ErrDeviceFault)
		}
	}
	for id := range uint32(4) {
		if raw&(1<<(id+1)) == 0 {
			continue
		}
		if err := d.handleTopLevel(ctx, int(id)); err != nil {
			return err
		}
		if err := c.write64(ctx, csrTopLevelInt0Status+id*csrTopLevelIntStride, 0); err != nil {
			return err
		}
	}
	return fault
}

// handleTopLevel is BeagleTopLevelInterruptManager's handler for top-level
// interrupt id: 0 thermal shutdown, 1 PCIe error, 2 MBIST, 3 thermal
// warning.
func (d *Driver) handleTopLevel(ctx context.Context, id int) error {
	c := d.c
	switch id {
	case 0, 3: // HandleThermalShutdownInterrupt, HandleThermalWarningInterrupt
		v, err := c.read32(ctx, csrOMC0_DC)
		if err != nil {
			return err
		}
		w := uint64(v)
		if id == 0 && bits(w, omc0DCSdOBit, 1) == 1 {
			w = setBits(w, omc0DCSdClearBit, 1, 1)
		}
		if id == 3 && bits(w, omc0DCWarnOBit, 1) == 1 {
			w = setBits(w, omc0DCWarnClearBit, 1, 1)
		}
		return c.write32(ctx, csrOMC0_DC, uint32(w))
	case 1: // HandlePcieErrorInterrupt: toggle abm_en on each error.
		for _, p := range []struct{ resp, en uint32 }{{csrSlvWrErrResp, csrSlvAbmEn}, {csrSlvRdErrResp, csrSlvAbmEn}, {csrMstWrErrResp, csrMstAbmEn}, {csrMstRdErrResp, csrMstAbmEn}} {
			v, err := c.read32(ctx, p.resp)
			if err != nil {
				return err
			}
			if v == 1 {
				if err := c.write32(ctx, p.en, 0); err != nil {
					return err
				}
				if err := c.write32(ctx, p.en, 1); err != nil {
					return err
				}
			}
		}
		return nil
	case 2: // HandleMbistInterrupt: write back the status bits set (1 clears).
		v, err := c.read32(ctx, csrRambistCtrl1)
		if err != nil {
			return err
		}
		w := uint64(v)
		w = setBits(w, rambistIntStatusLo, rambistIntStatusW, bits(w, rambistIntStatusLo, rambistIntStatusW))
		if err := c.write32(ctx, csrRambistCtrl1, uint32(w)); err != nil {
			return err
		}
		if v, err = c.read32(ctx, csrSCUCtr7); err != nil {
			return err
		}
		return c.write32(ctx, csrSCUCtr7, v)
	}
	return nil
}

// paramAddr is the device address of p's parameters on this open device.
func (d *Driver) paramAddr(p *program.Program) uint64 {
	if len(p.Exe.Parameters) == 0 {
		return 0
	}
	a, ok := d.params[p]
	if !ok {
		a = d.paramMem.alloc(len(p.Exe.Parameters))
		d.params[p] = a
	}
	return a
}

// Run runs m once. inputs holds, per input layer, the tensor's bytes for
// every batch (batches times the layer's ActualBytes); Run returns, per
// output layer, the values of every batch in the layer's tensor order
// (batches times its ActualBytes). As Driver::SubmitInferenceRequest does,
// it first runs m's parameter-caching executable when the parameters
// cached on the device are not m's (another caching token, or none), then
// one request of the main executable per hardware batch.
//
// A failure of the device or the bus leaves the driver faulted: it fails
// every later Run; Close it and Open the device again.
func (d *Driver) Run(ctx context.Context, m *program.Model, inputs [][]byte, batches int) ([][]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if err := d.faulted(); err != nil {
		return nil, fmt.Errorf("%w after a fault: %w", ErrClosed, err)
	}
	main := m.Main.Exe
	if batches < 1 {
		return nil, fmt.Errorf("%d batches", batches)
	}
	if len(inputs) != len(main.Inputs) {
		return nil, fmt.Errorf("%d inputs for %d input layers", len(inputs), len(main.Inputs))
	}
	for i, in := range inputs {
		if want := batches * main.Inputs[i].ActualBytes(); len(in) != want {
			return nil, fmt.Errorf("input layer %q: %d bytes for %d batches, want %d", main.Inputs[i].Name, len(in), batches, want)
		}
	}

	// Driver::SubmitInferenceRequest: ResetCachedParameters unless the
	// main executable's token is the one cached; NeedsParameterCaching;
	// SubmitParameterCachingRequest.
	var reqs []*request
	a := &arena{next: RequestBase}
	if main.CachingToken == 0 || main.CachingToken != d.token {
		d.token = 0
		clear(d.cached)
	}
	caching := m.Caching != nil && !d.cached[m.Caching]
	if caching {
		r, err := newRequest(m.Caching, d.paramAddr(m.Caching), nil, a)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
	}
	hw := max(main.BatchSize, 1)
	for first := 0; first < batches; first += hw {
		in := make([][][]byte, len(inputs))
		for i, data := range inputs {
			size := main.Inputs[i].ActualBytes()
			for b := first; b < min(first+hw, batches); b++ {
				in[i] = append(in[i], data[b*size:(b+1)*size])
			}
		}
		r, err := newRequest(m.Main, d.paramAddr(m.Main), in, a)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
	}

	if caching {
		d.token = m.Caching.Exe.CachingToken
		d.cached[m.Caching] = true
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d.faultMu.Lock()
	d.runCancel = cancel
	if d.fault != nil {
		// A background reader failed after the check above and before the
		// run could be cancelled: the run must not wait out its timeouts.
		cancel(d.fault)
	}
	d.faultMu.Unlock()
	err := d.execute(runCtx, reqs)
	d.faultMu.Lock()
	d.runCancel = nil
	d.faultMu.Unlock()
	if err != nil {
		if cause := context.Cause(runCtx); cause != nil && !errors.Is(cause, ctx.Err()) && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (%w)", cause, err)
		}
		d.setFault(err)
		clear(d.cached)
		d.token = 0
		return nil, err
	}

	outputs := make([][]byte, len(main.Outputs))
	mains := reqs[len(reqs)-(batches+hw-1)/hw:]
	for i := range main.Outputs {
		l := &main.Outputs[i]
		size := l.ActualBytes()
		outputs[i] = make([]byte, batches*size)
		for b := range batches {
			v := outputs[i][b*size : (b+1)*size]
			if err := program.Relayout(l, v, mains[b/hw].outputs[i][b%hw]); err != nil {
				return nil, err
			}
			if program.Signed(l) {
				program.FlipSign(v, l.DataType.Size(), len(v)/l.DataType.Size())
			}
		}
	}
	return outputs, nil
}

// step is one DMA of a run, or a fence, in UsbDriver's queue of
// UsbIoRequests (io_requests_): req is the request it belongs to; matched
// says that the event or DMA descriptor the device sends for it came, or
// that none will (UsbIoRequest::SourceAndMatchStatus: instructions are
// never described, and a DMA the device asked for is its own).
type step struct {
	io
	req     int
	matched bool
}

// queue is one Run's DMAs on their way (UsbDriver::ProcessIo): the steps
// of every request in order, the next one to carry out, and whether the
// device sends descriptors for bulk DMAs too (descr_ep 0xff) or for
// interrupts only.
type queue struct {
	d     *Driver
	reqs  []*request
	steps []step
	at    int
	bulk  bool
}

// execute moves the requests' DMAs in hint order, as UsbDriver::ProcessIo
// does in single bulk-out endpoint mode: every bulk-out behind its header,
// in chunks of at most 1 MiB; a bulk-in request filled from the queued
// bulk-in transfers before anything after it goes out; interrupts waiting
// for their events without holding up the DMAs after them, except at a
// fence. When a request's hints are not fully deterministic, the device
// sends a descriptor for each DMA it makes (descr_ep 0xff for the whole
// run): each matches the oldest hinted DMA of its kind and buffer not yet
// matched, or is a DMA of the device's own that the driver then carries
// out; such a request ends at a global fence that clears when the
// device's completion interrupt has come.
func (d *Driver) execute(ctx context.Context, reqs []*request) error {
	q := &queue{d: d, reqs: reqs, bulk: slices.ContainsFunc(reqs, func(r *request) bool { return r.descriptors })}
	for ri, r := range reqs {
		for _, x := range r.ios {
			q.steps = append(q.steps, step{io: x, req: ri, matched: !described(x.kind, x.tag, q.bulk)})
		}
		if r.descriptors {
			what := fmt.Sprintf("request %d (the device's DMA descriptors after its DMA hints)", ri)
			q.steps = append(q.steps, step{io: io{kind: ioGlobalFence, what: what}, req: ri, matched: true})
		}
	}
	if err := d.descriptors(ctx, q.bulk); err != nil {
		return err
	}
	return q.run(ctx)
}

// described reports whether the device sends an event for a DMA of that
// kind and tag: for an interrupt always; for a bulk DMA but instructions
// in bulk descriptor mode.
func described(kind ioKind, tag byte, bulk bool) bool {
	switch kind {
	case ioInterrupt:
		return true
	case ioBulkOut, ioBulkIn:
		return bulk && tag != TagInstructions
	}
	return false
}

// run carries out the steps: the bulk DMAs in order, a fence or the end
// once the events that clear it have come; in bulk descriptor mode it
// takes the descriptors that came before each step, and carries out the
// DMAs they add.
func (q *queue) run(ctx context.Context) error {
	for {
		if q.bulk {
			if err := q.drain(); err != nil {
				return err
			}
		}
		if q.at < len(q.steps) {
			s := &q.steps[q.at]
			var err error
			switch s.kind {
			case ioBulkOut:
				err = q.d.send(ctx, &s.io)
			case ioBulkIn:
				err = q.d.receive(ctx, &s.io)
			}
			if err != nil {
				return err
			}
			if s.kind != ioFence && s.kind != ioGlobalFence {
				q.at++
				continue
			}
		}
		what, ok := q.cleared(q.at)
		switch {
		case !ok:
			if err := q.wait(ctx, what); err != nil {
				return err
			}
		case q.at == len(q.steps):
			return q.filled()
		default:
			q.at++
		}
	}
}

// cleared reports whether the run may pass step k (a fence, or the end at
// len(steps)): every step before it matched and, at a global fence, the
// device's completion interrupt come for its request (UsbDriver::ProcessIo
// completes a request at its interrupt 0; SingleQueueDmaScheduler clears
// the global fence then). Else it names what the run waits for.
func (q *queue) cleared(k int) (string, bool) {
	for _, s := range q.steps[:k] {
		if !s.matched {
			return s.what, false
		}
	}
	if k == len(q.steps) || q.steps[k].kind != ioGlobalFence {
		return "", true
	}
	req := q.steps[k].req
	for _, s := range q.steps[:k] {
		if s.req == req && s.kind == ioInterrupt && s.tag == TagInterrupt0 {
			return "", true
		}
	}
	return q.steps[k].what, false
}

// wait takes one event from the device, for at most the timeout: the
// device that never sends it fails the run with ErrNoCompletion.
func (q *queue) wait(ctx context.Context, what string) error {
	timer := time.NewTimer(q.d.opts.Timeout)
	defer timer.Stop()
	select {
	case ev := <-q.d.events:
		return q.match(ev)
	case <-timer.C:
		return fmt.Errorf("%w: %s: no event within %v", ErrNoCompletion, what, q.d.opts.Timeout)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
}

// drain takes the events that have come.
func (q *queue) drain() error {
	for {
		select {
		case ev := <-q.d.events:
			if err := q.match(ev); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// match is UsbDriver::HandleDmaDescriptor: the event matches the oldest
// step not yet matched, up to the first fence the run has not passed
// (the DMAs after it are not queued yet), that has its tag and, for a bulk
// DMA, its address and length. Without bulk descriptors only interrupts
// are matched, and an event that is not the oldest one's is a fault (the
// device raised an interrupt nothing waits for). With them, an event of
// another tag than the oldest unmatched step's is a DMA of the device's
// own (add).
func (q *queue) match(ev event) error {
	for k := range q.steps {
		s := &q.steps[k]
		switch {
		case s.kind == ioFence || s.kind == ioGlobalFence:
			if k >= q.at {
				return q.add(ev, k)
			}
			continue
		case s.matched:
			continue
		case s.tag != ev.tag && !q.bulk:
			return fmt.Errorf("%w: %s: the device sent event tag %d, want %d", ErrDeviceFault, s.what, ev.tag, s.tag)
		case s.tag != ev.tag:
			return q.add(ev, k)
		case s.kind != ioInterrupt && (s.addr != ev.addr || len(s.data) != int(ev.length)):
			continue
		}
		s.matched = true
		return nil
	}
	return q.add(ev, len(q.steps))
}

// add queues the DMA an unmatched descriptor asks for before the first
// fence from step k (UsbDriver::HandleDmaDescriptor pushes it behind the
// DMAs queued), in the request of that fence (or the last request).
func (q *queue) add(ev event, k int) error {
	if !q.bulk {
		return fmt.Errorf("%w: an event with tag %d that no DMA waits for", ErrDeviceFault, ev.tag)
	}
	for k < len(q.steps) && q.steps[k].kind != ioFence && q.steps[k].kind != ioGlobalFence {
		k++
	}
	req := len(q.reqs) - 1
	if k < len(q.steps) {
		req = q.steps[k].req
	}
	s := step{req: req, matched: true}
	if ev.tag >= TagInterrupt0 && ev.tag < TagInterrupt0+4 {
		s.io = io{kind: ioInterrupt, tag: ev.tag, what: fmt.Sprintf("the device's interrupt %d", ev.tag-TagInterrupt0)}
	} else {
		x, err := q.reqs[req].lookup(ev)
		if err != nil {
			return err
		}
		s.io = x
	}
	q.steps = slices.Insert(q.steps, k, s)
	return nil
}

// filled checks, once the device has completed a run in bulk descriptor
// mode, that it sent every output buffer something: one it never
// described would be passed off as its result.
func (q *queue) filled() error {
	if !q.bulk {
		return nil
	}
	for _, r := range q.reqs {
		for _, g := range r.regions {
			if g.recv && g.send == 0 && !g.filled {
				return fmt.Errorf("%w: the device completed the request without sending %s", ErrDeviceFault, g.what)
			}
		}
	}
	return nil
}

// descriptors sets which DMA descriptors the device sends: all of them
// (descr_ep 0xff) or the scalar core interrupts' only (0xf0), as
// UsbDriver::InitializeChip does by usb_enable_bulk_descriptors_from_device.
// libedgetpu chooses once for the driver (and refuses executables whose
// hints are not fully deterministic without them); this driver opens with
// interrupts only and switches when a run needs the other (its TODO:
// "find a way to mix models, switching on and off descriptors on the
// fly").
func (d *Driver) descriptors(ctx context.Context, bulk bool) error {
	if d.bulk == bulk {
		return nil
	}
	v := uint64(descrEPInterrupts)
	if bulk {
		v = descrEPAll
	}
	if err := d.c.write64(ctx, csrDescrEP, v); err != nil {
		return err
	}
	d.bulk = bulk
	return nil
}

// send is one bulk-out DMA: UsbMlCommands::PrepareHeader's header, then
// the data.
func (d *Driver) send(ctx context.Context, x *io) error {
	// out sends the header (at < 0) or the data from byte at.
	out := func(data []byte, at int) error {
		tctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
		defer cancel()
		err := d.t.BulkOut(tctx, EPBulkOut, data)
		switch {
		case err == nil:
			return nil
		case at < 0:
			return fmt.Errorf("%s: bulk out header (%d bytes): %w", x.what, len(data), err)
		}
		return fmt.Errorf("%s: bulk out data from byte %d (%d bytes): %w", x.what, at, len(data), err)
	}
	if err := out(header(x.tag, len(x.data)), -1); err != nil {
		return err
	}
	for at := 0; at < len(x.data); at += maxBulkOutChunk {
		if err := out(x.data[at:min(at+maxBulkOutChunk, len(x.data))], at); err != nil {
			return err
		}
	}
	return nil
}

// receive fills one bulk-in DMA from the queued bulk-in transfers, in the
// order they complete, a transfer's bytes going on to the next DMA where
// this one needs fewer (UsbDriver::ProcessIo, queued bulk-in).
func (d *Driver) receive(ctx context.Context, x *io) error {
	dst := x.data
	for len(dst) > 0 {
		if len(d.leftover) == 0 {
			tctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
			n, err := d.stream.Next(tctx, d.inBuf)
			cancel()
			if err != nil {
				return fmt.Errorf("%s: bulk in (%d of %d bytes received): %w", x.what, len(x.data)-len(dst), len(x.data), err)
			}
			d.leftover = d.inBuf[:n]
			continue
		}
		k := copy(dst, d.leftover)
		dst, d.leftover = dst[k:], d.leftover[k:]
	}
	if x.in != nil {
		x.in.filled = true
	}
	return nil
}

// Speed is the speed the device was opened at.
func (d *Driver) Speed() usb.Speed { return d.speed }
