package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
)

// DefaultShmThreshold is the tensor size from which tensors travel through
// shared memory instead of inline in the gRPC messages.
const DefaultShmThreshold = 16 << 10

// Options configure a Client. The zero value is the defaults.
type Options struct {
	// Checksum pins the binary: its SHA-256 must be this before each start
	// (go-plugin's SecureConfig). Nil: no check.
	Checksum []byte
	// AutoMTLS secures the connection to the plugin with go-plugin's
	// automatic mutual TLS (one-time certificates for each start).
	AutoMTLS bool
	// ShmThreshold: tensors of at least this many bytes go through shared
	// memory, smaller ones inline. 0 means DefaultShmThreshold; negative
	// sends everything inline.
	ShmThreshold int
	// NoDoorbell sends every Invoke as a gRPC call. By default, where both
	// sides can (Linux), an Invoke is written into the partition's shared
	// memory region and the plugin woken with a futex, which saves the gRPC
	// round trip (see doorbell.go); a negative ShmThreshold turns it off
	// too.
	NoDoorbell bool
	// ShmDir is where region files are made (and unlinked once the plugin
	// has mapped them) for a plugin that cannot take regions as file
	// descriptors (on Linux, a delego plugin can: its regions are memfds
	// with no name); "" means /dev/shm when writable, else the temporary
	// directory.
	ShmDir string
	// StartTimeout bounds a start (process, handshake, Describe) when the
	// context has no earlier deadline; 0 means 30 seconds.
	StartTimeout time.Duration
	// Stderr, when set, also receives the plugin's standard error as it
	// comes, a whole line per Write, each after the plugin's name in
	// brackets ("[xnnpack] ..."); a last line the process did not end is
	// ended when it stops. Without it, the host keeps only the tail, for
	// the error of a plugin that crashes. Clients that share a writer
	// write to it concurrently (os.Stderr is safe for that).
	Stderr io.Writer

	// regionsByPath makes regions files, as for a plugin without the
	// region channel (the tests compare the two).
	regionsByPath bool
	// observeBell, when set, hears of every doorbell ring of the Client's
	// executables and of every answer the host polled for (the tests count
	// them: see CountBells in export_test.go).
	observeBell func(bellEvent)
}

// Info is what a plugin said of itself in Describe.
type Info struct {
	Name     string // the delegate's name
	Version  string // the plugin's version
	Protocol int    // the protocol version it speaks
	Path     string // the binary
	Support  *delegate.Support
	Devices  []delegate.Device
	// Usable is false when the delegate cannot run here; Reason says why.
	Usable bool
	Reason string
	// HasChecker: the plugin has a finer support check (CheckNodes).
	HasChecker bool
	// Configurable: the plugin declared the settings it honours and the
	// options it takes (protocol 2, and a delegate.Configurable delegate);
	// Honours and Options are then the whole of it. False: it declared
	// nothing (a protocol 1 plugin, or a delegate that does not say), and
	// the empty Honours and Options say nothing either.
	Configurable bool
	Honours      []string
	Options      []delegate.Option
}

// Client is a delegate served by a plugin process: a delegate.Delegate (and
// delegate.Checker, delegate.DeviceLister) that the interpreter cannot tell
// from an in-process one. One Client owns at most one process at a time and
// is safe for concurrent use: several interpreters can share it.
type Client struct {
	path string
	opts Options
	name string // Info.Name at Open; never changes

	mu     sync.Mutex // guards what follows; held while a process starts
	sess   *session
	info   Info
	starts int
	closed bool
}

var (
	_ delegate.Delegate     = (*Client)(nil)
	_ delegate.Checker      = (*Client)(nil)
	_ delegate.DeviceLister = (*Client)(nil)
	_ delegate.Configurable = (*Client)(nil)
)

// Open starts the plugin binary at path, checks the handshake and its
// protocol version, and asks it to describe itself; ctx bounds that start
// (its deadline; a context already done fails at once), not the process's
// life. opts may be nil. Close the Client to stop the process.
func Open(ctx context.Context, path string, opts *Options) (*Client, error) {
	c := &Client{path: path}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.ShmThreshold == 0 {
		c.opts.ShmThreshold = DefaultShmThreshold
	}
	if c.opts.ShmDir == "" {
		c.opts.ShmDir = defaultShmDir()
	}
	if c.opts.StartTimeout <= 0 {
		c.opts.StartTimeout = 30 * time.Second
	}
	if _, err := c.current(ctx); err != nil {
		return nil, err
	}
	c.name = c.info.Name
	return c, nil
}

// Name is the delegate's name, as the plugin gave it.
func (c *Client) Name() string { return c.name }

// Info is what the plugin said of itself when it last started.
func (c *Client) Info() Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// Starts counts the plugin processes started so far: 1 after Open, one
// more after each restart.
func (c *Client) Starts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starts
}

// Pid is the plugin process's id, or 0 when none is running.
func (c *Client) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil || !c.sess.alive() {
		return 0
	}
	return c.sess.pid
}

// Support returns the support the plugin declared. A plugin that cannot
// run here (no device) but declared its ops all the same has Support
// return the declaration, so that partitions and the plan are what they
// would be with a device, and Compile fail with the error wrapping
// delegate.ErrNoDevice, subject to fallback. One that declared nothing fails with that error.
func (c *Client) Support(context.Context) (*delegate.Support, error) {
	info := c.Info()
	if !info.Usable && len(info.Support.Builtins)+len(info.Support.Custom) == 0 {
		return nil, info.noDevice()
	}
	return info.Support, nil
}

// noDevice is the error of a plugin that said it cannot run here: Reason,
// wrapping delegate.ErrNoDevice, whose words it holds once.
func (i Info) noDevice() error {
	why := strings.TrimPrefix(i.Reason, delegate.ErrNoDevice.Error()+": ")
	return fmt.Errorf("%w: %s", delegate.ErrNoDevice, why)
}

// Devices returns the devices the plugin declared.
func (c *Client) Devices(context.Context) ([]delegate.Device, error) {
	return c.Info().Devices, nil
}

// Honours lists the TFLiteSettings fields the plugin declared it reads
// (delegate.Configurable). Empty means "honours nothing" only when
// DeclaresSettings is true.
func (c *Client) Honours() []string { return c.Info().Honours }

// Options lists the key/value options the plugin declared it takes
// (delegate.Configurable). Empty means "takes none" only when
// DeclaresSettings is true.
func (c *Client) Options() []delegate.Option { return c.Info().Options }

// DeclaresSettings reports whether the plugin declared what it honours and
// takes. A Client is always a delegate.Configurable, since a Go type cannot
// be one for some plugins only: a host that checks settings against
// Honours must first ask this (a plugin of protocol 1, or whose delegate
// declares nothing, says nothing about settings, which is not "honours
// nothing"; an in-process delegate says the same by not implementing
// delegate.Configurable).
func (c *Client) DeclaresSettings() bool { return c.Info().Configurable }

// CheckNodes is the plugin's finer support check, one RPC for all nodes;
// a plugin without one, or one that cannot run here (its declaration is
// all there is to go by), accepts every node.
func (c *Client) CheckNodes(ctx context.Context, model []byte, nodes []int) ([]delegate.Verdict, error) {
	if info := c.Info(); !info.HasChecker || !info.Usable {
		vs := make([]delegate.Verdict, len(nodes))
		for i := range vs {
			vs[i].Accept = true
		}
		return vs, nil
	}
	s, err := c.current(ctx)
	if err != nil {
		return nil, err
	}
	req := &pluginpb.CheckNodesRequest{Model: model, Nodes: make([]int32, len(nodes))}
	for i, n := range nodes {
		req.Nodes[i] = int32(n)
	}
	resp, err := s.rpc.CheckNodes(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("check nodes: %w", c.callErr(ctx, s, "check nodes", err))
	}
	if len(resp.Verdicts) != len(nodes) {
		return nil, fmt.Errorf("check nodes: %w: %d verdicts for %d nodes", ErrMalformed, len(resp.Verdicts), len(nodes))
	}
	vs := make([]delegate.Verdict, len(nodes))
	for i, v := range resp.Verdicts {
		vs[i] = delegate.Verdict{Accept: v.Accept, Reason: v.Reason}
	}
	return vs, nil
}

// Compile sends the partition (its constants included) to the plugin,
// starting a fresh process first when the last one died.
func (c *Client) Compile(ctx context.Context, p *delegate.Partition) (delegate.Executable, error) {
	s, err := c.current(ctx)
	if err != nil {
		return nil, err
	}
	if info := c.Info(); !info.Usable {
		return nil, info.noDevice()
	}
	if len(p.Options) > 0 && s.protocol < configurableVersion {
		return nil, fmt.Errorf("%w: the plugin is too old to take options (given %s): it speaks delego plugin protocol %d, and options need protocol %d; rebuild it against this delego",
			ErrIncompatible, optionNames(p.Options), s.protocol, configurableVersion)
	}
	resp, err := s.rpc.Compile(ctx, &pluginpb.CompileRequest{Model: p.Model, Settings: p.Settings, Options: p.Options})
	if err != nil {
		return nil, c.callErr(ctx, s, "compile", err)
	}
	return &executable{c: c, s: s, handle: resp.Handle}, nil
}

// optionNames lists the names of options, sorted: "a" and "b".
func optionNames(opts map[string]string) string {
	names := slices.Sorted(maps.Keys(opts))
	if len(names) == 1 {
		return "option " + strconv.Quote(names[0])
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	return "options " + strings.Join(quoted[:len(quoted)-1], ", ") + " and " + quoted[len(quoted)-1]
}

// Close stops the plugin process (gracefully, then by force) and reaps it.
// Executables compiled by it fail from then on.
func (c *Client) Close() error {
	c.mu.Lock()
	s := c.sess
	c.sess, c.closed = nil, true
	c.mu.Unlock()
	if s != nil {
		s.close()
	}
	return nil
}

// current returns the running session, starting one when there is none or
// the last one died.
func (c *Client) current(ctx context.Context) (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if s := c.sess; s != nil {
		if s.alive() {
			return s, nil
		}
		c.sess = nil
		s.kill()
	}
	s, info, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	c.sess, c.info = s, info
	c.starts++
	return s, nil
}

// forget drops s as the current session, so that the next call starts a
// fresh process.
func (c *Client) forget(s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == s {
		c.sess = nil
	}
}

// callErr classifies a failed call on session s. A plugin that did not answer
// in time is killed (it may still be running the call, writing into shared
// memory); one whose process is gone is reaped; either way the next Compile
// starts a fresh one. An error that is not a gRPC status (a malformed
// doorbell answer) is the plugin's answer, and is returned as it is. The
// error does not start with the call's name: the caller's context (a
// delegate.Error's stage) says which call it was.
func (c *Client) callErr(ctx context.Context, s *session, call string, err error) error {
	if cerr := ctxErr(ctx); cerr != nil {
		s.kill()
		c.forget(s)
		return &killedError{cause: cerr, pid: s.pid, call: call}
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	switch {
	case !s.alive() || st.Code() == codes.Unavailable || st.Code() == codes.Canceled:
		if s.closedByClient() {
			return fmt.Errorf("%w during its %s call", ErrClosed, call)
		}
		s.kill()
		c.forget(s)
		return s.exited(fmt.Errorf("%w during its %s call (%s)", ErrCrashed, call, s.exitReport()))
	case st.Code() == codes.FailedPrecondition:
		return &remoteError{msg: st.Message(), is: delegate.ErrNoDevice}
	}
	return &remoteError{msg: st.Message()}
}

// killedError is a call that did not end before its context did: the
// plugin was killed, and is lost (delegate.ErrLost) as a crashed one is.
type killedError struct {
	cause error
	pid   int
	call  string
}

func (e *killedError) Error() string {
	when := "by its deadline"
	if errors.Is(e.cause, context.Canceled) {
		when = "when the call was canceled"
	}
	return fmt.Sprintf("killed plugin process %d, which had not answered its %s call %s (the next compile starts a fresh one)", e.pid, e.call, when)
}

func (e *killedError) Unwrap() []error { return []error{e.cause, delegate.ErrLost} }

// ExitStatus is -1 and SIGKILL: the host killed the process (see
// exitedError.ExitStatus).
func (e *killedError) ExitStatus() (code, signal int) { return -1, int(syscall.SIGKILL) }

// remoteError is an error a plugin's delegate returned: its message as the
// delegate wrote it, and the sentinel its status code carried (nil: none).
type remoteError struct {
	msg string
	is  error
}

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Unwrap() error { return e.is }

// deadlineGrace bounds how long ctxErr waits for a context whose deadline
// has passed to say so.
const deadlineGrace = time.Second

// ctxErr is ctx's error after a call under ctx failed: ctx.Err(), or, when
// ctx's deadline has passed though ctx.Err() is still nil, the error ctx is
// about to have. The two can disagree: gRPC sends the deadline to the
// plugin, whose server resets the stream when its own timer fires; on a
// loaded machine that reset can reach the host before ctx's timer has run,
// and the call fails with "stream terminated by RST_STREAM with error code:
// CANCEL" (codes.DeadlineExceeded) while ctx.Err() is nil. Taken for a
// plugin error, that left the wedged process running and let the
// interpreter, which checks ctx.Err() too, fall back to the CPU after a
// deadline. So ctxErr waits for ctx to end (it is due: the deadline has
// passed), and the caller then finds ctx ended as well.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dl, ok := ctx.Deadline()
	if !ok || time.Now().Before(dl) {
		return nil
	}
	t := time.NewTimer(deadlineGrace)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return context.DeadlineExceeded // a context that does not keep its deadline
	}
}
