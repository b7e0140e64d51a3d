package plugin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
	"github.com/delego/delego/tensor"
)

// Serve serves d as a delego plugin on the go-plugin handshake and never
// returns: it is all a plugin binary's main does. Started by hand (without
// the host's magic cookie), the binary says it is a plugin and exits 1. It
// exits by itself when the process that started it goes away. It reads
// the fault $DELEGO_PLUGIN_FAULT (EnvFault), or WithFaults, plans for d
// once, as it starts, and puts it into d's executables; a malformed one
// is said on stderr, and the process exits 1 without serving.
func Serve(d delegate.Delegate, opts ...ServeOption) {
	fault, err := plannedFault(d.Name(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "delego plugin %s: %v\n", d.Name(), err)
		os.Exit(1)
	}
	go watchParent(os.Getppid(), time.Second)
	nameProcess()
	goplugin.Serve(serveConfig(d, fault, nil))
}

// ServeConfig is the go-plugin configuration Serve uses, for a plugin that
// wants to change something (its logger) and call goplugin.Serve itself. It
// serves every protocol version this package speaks, one plugin set each in
// VersionedPlugins (HandshakeConfig.ProtocolVersion does not choose). It
// plans faults as Serve does, except that a malformed list fails
// go-plugin's start (which logs the error and returns) rather than exiting.
func ServeConfig(d delegate.Delegate, opts ...ServeOption) *goplugin.ServeConfig {
	fault, err := plannedFault(d.Name(), opts)
	return serveConfig(d, fault, err)
}

// serveConfig is ServeConfig with the planned fault (nil: none) or the
// error reading it.
func serveConfig(d delegate.Delegate, fault *pluginFault, faultErr error) *goplugin.ServeConfig {
	regions, err := regionInboxFromEnv()
	if err != nil {
		// Regions then come by path, if the host sends them at all.
		fmt.Fprintf(os.Stderr, "delego plugin %s: %v\n", d.Name(), err)
	}
	compile := withFault(d, fault)
	return &goplugin.ServeConfig{
		HandshakeConfig: Handshake(),
		VersionedPlugins: versionedPlugins(func(v int) *grpcPlugin {
			return &grpcPlugin{version: v, impl: d, compile: compile, faultErr: faultErr, regions: regions}
		}),
		GRPCServer: newGRPCServer,
		// The host keeps the tail of the plugin's stderr for its error
		// messages: warnings and errors only.
		Logger: hclog.New(&hclog.LoggerOptions{Name: "delego-plugin", Level: hclog.Warn, Output: os.Stderr}),
	}
}

// watchParent exits the process once its parent is no longer ppid: the host
// died and the plugin was handed to another parent.
func watchParent(ppid int, every time.Duration) {
	for range time.Tick(every) {
		if os.Getppid() != ppid {
			fmt.Fprintf(os.Stderr, "delego plugin: host process %d went away; exiting\n", ppid)
			os.Exit(3)
		}
	}
}

// server is the plugin side of the protocol, of the version negotiated.
type server struct {
	pluginpb.UnimplementedDelegateServer
	version int               // the protocol version negotiated
	impl    delegate.Delegate // what the plugin serves
	compile compiler          // compiles its partitions: impl, or the fault layer around it
	regions *regionInbox      // the region channel; nil: regions come by path

	mu    sync.Mutex
	next  uint64
	parts map[uint64]*servedPart
}

// servedPart is one compiled partition and its shared memory.
type servedPart struct {
	handle uint64

	mu       sync.Mutex // Attach, Invoke and Release take turns
	exe      delegate.Executable
	region   *region
	bell     *bellAnswerer // answers the region's doorbell, when the host asked for one
	released bool
}

// newServer serves d in protocol version v; c compiles its partitions.
func newServer(v int, d delegate.Delegate, c compiler, regions *regionInbox) *server {
	return &server{version: v, impl: d, compile: c, regions: regions, parts: map[uint64]*servedPart{}}
}

// statusOf turns a delegate's error into a gRPC status: FailedPrecondition
// for "cannot run here", Unknown for everything else. The message is the
// delegate's own: the host knows which call failed.
func statusOf(err error) error {
	code := codes.Unknown
	if errors.Is(err, delegate.ErrNoDevice) {
		code = codes.FailedPrecondition
	}
	return status.Error(code, err.Error())
}

func (s *server) Describe(ctx context.Context, _ *pluginpb.DescribeRequest) (*pluginpb.DescribeResponse, error) {
	r := &pluginpb.DescribeResponse{Name: s.impl.Name(), Version: pluginVersion(s.impl), ProtocolVersion: uint32(s.version),
		Usable: true, RegionFds: s.regions != nil}
	sup, err := s.impl.Support(ctx)
	switch {
	case errors.Is(err, delegate.ErrNoDevice):
		// Not usable here; what it declares beside the error still goes,
		// so that the host can plan for it.
		r.Usable, r.Reason = false, err.Error()
	case err != nil:
		return nil, statusOf(err)
	}
	r.Builtins, r.Custom = supportToPB(sup)
	if dl, ok := s.impl.(delegate.DeviceLister); ok {
		devs, err := dl.Devices(ctx)
		switch {
		case errors.Is(err, delegate.ErrNoDevice):
			// Nothing to list: Support has said why, or will at Compile.
		case err != nil:
			return nil, statusOf(err)
		}
		for _, d := range devs {
			r.Devices = append(r.Devices, &pluginpb.Device{Name: d.Name, Description: d.Description})
		}
	}
	_, r.HasChecker = s.impl.(delegate.Checker)
	if s.version >= configurableVersion {
		configurableToPB(s.impl, r)
	}
	return r, nil
}

// releaseVersion is the version scripts/release.sh stamps into a release
// build of a plugin (-ldflags -X
// github.com/delego/delego/delegate/plugin.releaseVersion=...): git
// describe's; empty otherwise.
var releaseVersion string

// pluginVersion is the delegate's Version() when it has one, else the
// release version stamped into the binary, else the plugin binary's module
// version and VCS revision.
func pluginVersion(d delegate.Delegate) string {
	if v, ok := d.(interface{ Version() string }); ok {
		return v.Version()
	}
	if releaseVersion != "" {
		return releaseVersion
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}

func (s *server) CheckNodes(ctx context.Context, req *pluginpb.CheckNodesRequest) (*pluginpb.CheckNodesResponse, error) {
	c, ok := s.impl.(delegate.Checker)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this delegate has no finer support check")
	}
	nodes := make([]int, len(req.Nodes))
	for i, n := range req.Nodes {
		nodes[i] = int(n)
	}
	vs, err := c.CheckNodes(ctx, req.Model, nodes)
	if err != nil {
		return nil, statusOf(err)
	}
	r := &pluginpb.CheckNodesResponse{}
	for _, v := range vs {
		r.Verdicts = append(r.Verdicts, &pluginpb.Verdict{Accept: v.Accept, Reason: v.Reason})
	}
	return r, nil
}

func (s *server) Compile(ctx context.Context, req *pluginpb.CompileRequest) (*pluginpb.CompileResponse, error) {
	exe, err := s.compile.Compile(ctx, &delegate.Partition{Model: req.Model, Settings: req.Settings, Options: req.Options})
	if err != nil {
		return nil, statusOf(err)
	}
	if exe == nil {
		return nil, status.Error(codes.Internal, "compile returned no executable")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.parts[s.next] = &servedPart{handle: s.next, exe: exe}
	return &pluginpb.CompileResponse{Handle: s.next}, nil
}

func (s *server) part(h uint64) (*servedPart, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.parts[h]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no compiled partition %d", h)
	}
	return p, nil
}

func (s *server) Attach(_ context.Context, req *pluginpb.AttachRequest) (*pluginpb.AttachResponse, error) {
	p, err := s.part(req.Handle)
	if err != nil {
		return nil, err
	}
	if req.Size > math.MaxInt32*4 {
		return nil, status.Errorf(codes.InvalidArgument, "shared memory region of %d bytes", req.Size)
	}
	r, err := s.openRegion(req)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	bell := req.Doorbell && doorbellSupported && len(r.data) >= doorbellSize
	p.mu.Lock()
	if p.released {
		p.mu.Unlock()
		r.close()
		return nil, status.Errorf(codes.NotFound, "no compiled partition %d", req.Handle)
	}
	old, oldBell := p.region, p.bell
	p.region, p.bell = r, nil
	if bell {
		p.bell = p.answerRings(r)
	}
	p.mu.Unlock()
	// The old doorbell's answerer takes p.mu to answer: stop it unlocked.
	oldBell.stop()
	if err := old.close(); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pluginpb.AttachResponse{Doorbell: bell}, nil
}

// openRegion maps the region an AttachRequest names: sent over the region
// channel, or a file.
func (s *server) openRegion(req *pluginpb.AttachRequest) (*region, error) {
	switch {
	case req.FdToken == 0:
		return openRegion(req.Path, int(req.Size))
	case s.regions == nil:
		return nil, errors.New("shared memory: a region was sent as a file descriptor, but this plugin has no region channel")
	}
	return s.regions.region(req.FdToken, int(req.Size))
}

func (s *server) Invoke(ctx context.Context, req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
	p, err := s.part(req.Handle)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.invoke(ctx, p.region, req)
}

// answerRings starts answering the rings of r's doorbell; p.mu is held.
func (p *servedPart) answerRings(r *region) *bellAnswerer {
	threads := 0
	if t, ok := p.exe.(delegate.Threaded); ok {
		threads = t.Threads()
	}
	return answerBell(doorbellOf(r), threads, func(req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
		return p.rung(r, req)
	})
}

// rung runs a request rung on r's doorbell as Invoke runs one that came by
// gRPC.
func (p *servedPart) rung(r *region, req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if req.Handle != p.handle {
		return nil, status.Errorf(codes.InvalidArgument, "doorbell of partition %d rung for partition %d", p.handle, req.Handle)
	}
	// The host enforces its deadline by killing the process.
	return p.invoke(context.Background(), r, req)
}

// invoke runs req on the partition, its shared tensors in region r; p.mu is
// held. It serves gRPC Invokes and doorbell rings alike.
func (p *servedPart) invoke(ctx context.Context, r *region, req *pluginpb.InvokeRequest) (*pluginpb.InvokeResponse, error) {
	if p.released {
		return nil, status.Errorf(codes.NotFound, "no compiled partition %d", req.Handle)
	}
	var err error
	ins := make([]*tensor.Tensor, len(req.Inputs))
	for i, t := range req.Inputs {
		if ins[i], err = r.tensor(t, false); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "input %d: %v", i, err)
		}
	}
	outs := make([]*tensor.Tensor, len(req.Outputs))
	for i, t := range req.Outputs {
		if outs[i], err = r.tensor(t, true); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "output %d: %v", i, err)
		}
	}
	if err := p.exe.Invoke(ctx, ins, outs); err != nil {
		return nil, statusOf(err)
	}
	resp := &pluginpb.InvokeResponse{Outputs: make([]*pluginpb.Tensor, len(outs))}
	for i, t := range outs {
		o := &pluginpb.Tensor{Type: int32(t.Type), Shape: shapeToPB(t.Shape), Bytes: uint64(len(t.Data))}
		// An output still in the region the host gave goes back as that
		// region; anything else (the delegate swapped the slice) inline.
		if ref := req.Outputs[i].GetShm(); ref != nil && len(t.Data) > 0 && uint64(len(t.Data)) == ref.Length &&
			unsafe.SliceData(t.Data) == &r.data[ref.Offset] {
			o.Data = &pluginpb.Tensor_Shm{Shm: ref}
		} else {
			o.Data = &pluginpb.Tensor_Inline{Inline: t.Data}
		}
		resp.Outputs[i] = o
	}
	return resp, nil
}

// tensor is the delegate's view of a tensor on the wire: its bytes inline,
// in the region, or (an output to send back inline) a new buffer.
func (r *region) tensor(t *pluginpb.Tensor, output bool) (*tensor.Tensor, error) {
	shape, err := shapeFromPB(t.Shape)
	if err != nil {
		return nil, err
	}
	kt := &tensor.Tensor{Type: tensor.DType(t.Type), Shape: shape}
	switch d := t.Data.(type) {
	case *pluginpb.Tensor_Inline:
		kt.Data = d.Inline
	case *pluginpb.Tensor_Shm:
		if kt.Data, err = r.slice(d.Shm.Offset, d.Shm.Length); err != nil {
			return nil, err
		}
	case nil:
		if !output {
			return nil, errors.New("no data")
		}
		if t.Bytes > math.MaxInt32 {
			return nil, fmt.Errorf("%d bytes", t.Bytes)
		}
		kt.Data = make([]byte, t.Bytes)
	}
	if uint64(len(kt.Data)) != t.Bytes {
		return nil, fmt.Errorf("%d bytes of data for a %d-byte tensor", len(kt.Data), t.Bytes)
	}
	return kt, nil
}

func (s *server) Release(_ context.Context, req *pluginpb.ReleaseRequest) (*pluginpb.ReleaseResponse, error) {
	s.mu.Lock()
	p, ok := s.parts[req.Handle]
	delete(s.parts, req.Handle)
	s.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no compiled partition %d", req.Handle)
	}
	p.mu.Lock()
	b := p.bell
	p.bell, p.released = nil, true
	p.mu.Unlock()
	b.stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	err := errors.Join(p.exe.Close(), p.region.close())
	p.region = nil
	if err != nil {
		return nil, status.Error(codes.Unknown, err.Error())
	}
	return &pluginpb.ReleaseResponse{}, nil
}
