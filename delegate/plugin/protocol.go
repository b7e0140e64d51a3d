package plugin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The versions of delego's plugin protocol that this package speaks: the
// newest, ProtocolVersion, and every one back to OldestProtocolVersion (the
// compatibility policy: a release speaks the current version and the one
// before it). The host offers them all in the go-plugin handshake and the
// plugin answers with the newest it shares (Serve speaks them all too, so a
// plugin built now also works with a host of the previous version); a plugin
// sharing none is refused with ErrIncompatible. docs/protocol.md says what
// each version adds.
const (
	// ProtocolVersion is the newest version: 2 adds what a delegate
	// honours and takes (delegate.Configurable) to Describe, and the
	// options (delegate.Partition.Options) to Compile.
	ProtocolVersion = 2
	// OldestProtocolVersion is the oldest version still spoken.
	OldestProtocolVersion = 1
)

// configurableVersion is the first protocol version that carries what a
// delegate honours and takes, and the options given to Compile.
const configurableVersion = 2

// The go-plugin magic cookie: a plugin binary started without it says it is
// a plugin and exits.
const (
	MagicCookieKey   = "DELEGO_PLUGIN_COOKIE"
	MagicCookieValue = "delego-delegate-plugin-4b1f2c9e"
)

// pluginName is the name of delego's one plugin in the go-plugin plugin set.
const pluginName = "delegate"

// Errors of plugin processes, for errors.Is.
var (
	// ErrIncompatible: the binary is not a delego plugin of this protocol version.
	ErrIncompatible = errors.New("incompatible plugin")
	// ErrCrashed: the plugin process exited or crashed. It is also
	// delegate.ErrLost: compiling again starts a fresh process.
	ErrCrashed error = lostError("plugin process died")
	// ErrMalformed: the plugin answered something that breaks the protocol.
	ErrMalformed = errors.New("malformed plugin result")
	// ErrClosed: the delegate or executable was closed.
	ErrClosed = errors.New("plugin closed")
	// ErrChecksum: the binary's SHA-256 is not the pinned one.
	ErrChecksum = goplugin.ErrChecksumsDoNotMatch
)

// Handshake is the go-plugin handshake of ProtocolVersion (the versions
// spoken are in the plugin sets of versionedPlugins).
func Handshake() goplugin.HandshakeConfig {
	return goplugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// versionedPlugins are the go-plugin plugin sets of every version spoken,
// for both sides: p(v) is delego's plugin of version v.
func versionedPlugins(p func(version int) *grpcPlugin) map[int]goplugin.PluginSet {
	sets := map[int]goplugin.PluginSet{}
	for v := OldestProtocolVersion; v <= ProtocolVersion; v++ {
		sets[v] = goplugin.PluginSet{pluginName: p(v)}
	}
	return sets
}

// spokenVersions says which versions this package speaks, newest first:
// "2 and 1".
func spokenVersions() string {
	s := strconv.Itoa(ProtocolVersion)
	for v := ProtocolVersion - 1; v >= OldestProtocolVersion; v-- {
		sep := ", "
		if v == OldestProtocolVersion {
			sep = " and "
		}
		s += sep + strconv.Itoa(v)
	}
	return s
}

// grpcPlugin is delego's go-plugin plugin of one protocol version: impl is
// the delegate served (nil in the host), compile what compiles its
// partitions (impl, or the fault layer the plugin started with around it),
// or faultErr why the faults planned for it cannot be read.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	version  int
	impl     delegate.Delegate
	compile  compiler
	faultErr error
	regions  *regionInbox // the region channel from the host; nil: none
}

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	if p.faultErr != nil {
		return p.faultErr
	}
	pluginpb.RegisterDelegateServer(s, newServer(p.version, p.impl, p.compile, p.regions))
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginpb.NewDelegateClient(c), nil
}

// newGRPCServer is the plugin's gRPC server: partitions and tensors may be
// far larger than gRPC's default 4 MiB message limit. Without go-plugin's
// mTLS (whose client certificate the host passes in $PLUGIN_CLIENT_CERT),
// it lets in only connections from its own user (peerCredentials).
func newGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.MaxRecvMsgSize(math.MaxInt32), grpc.MaxSendMsgSize(math.MaxInt32))
	if creds := peerCredentials(); creds != nil && os.Getenv("PLUGIN_CLIENT_CERT") == "" {
		opts = append(opts, grpc.Creds(creds))
	}
	return grpc.NewServer(opts...)
}

// supportToPB declares s on the wire.
func supportToPB(s *delegate.Support) (builtins, custom []*pluginpb.OpSupport) {
	if s == nil {
		return nil, nil
	}
	types := func(ts []tensor.DType) []int32 {
		var out []int32
		for _, t := range ts {
			out = append(out, int32(t))
		}
		return out
	}
	for op, o := range s.Builtins {
		builtins = append(builtins, &pluginpb.OpSupport{Builtin: int32(op),
			MinVersion: int32(o.Versions.Min), MaxVersion: int32(o.Versions.Max), Types: types(o.Types)})
	}
	for name, o := range s.Custom {
		custom = append(custom, &pluginpb.OpSupport{Custom: name,
			MinVersion: int32(o.Versions.Min), MaxVersion: int32(o.Versions.Max), Types: types(o.Types)})
	}
	slices.SortFunc(builtins, func(a, b *pluginpb.OpSupport) int { return int(a.Builtin) - int(b.Builtin) })
	slices.SortFunc(custom, func(a, b *pluginpb.OpSupport) int {
		switch {
		case a.Custom < b.Custom:
			return -1
		case a.Custom > b.Custom:
			return 1
		}
		return 0
	})
	return builtins, custom
}

// supportFromPB reads a plugin's declared support.
func supportFromPB(builtins, custom []*pluginpb.OpSupport) (*delegate.Support, error) {
	s := &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{}, Custom: map[string]delegate.OpSupport{}}
	conv := func(o *pluginpb.OpSupport) (delegate.OpSupport, error) {
		r := tensor.VersionRange{Min: int(o.MinVersion), Max: int(o.MaxVersion)}
		if r.Min < 1 || r.Max < r.Min {
			return delegate.OpSupport{}, fmt.Errorf("%w: version range %d-%d", ErrMalformed, r.Min, r.Max)
		}
		out := delegate.OpSupport{Versions: r}
		for _, t := range o.Types {
			out.Types = append(out.Types, tensor.DType(t))
		}
		return out, nil
	}
	for _, o := range builtins {
		op, err := conv(o)
		if err != nil {
			return nil, fmt.Errorf("builtin op %d: %w", o.Builtin, err)
		}
		s.Builtins[schema.BuiltinOperator(o.Builtin)] = op
	}
	for _, o := range custom {
		op, err := conv(o)
		if err != nil {
			return nil, fmt.Errorf("custom op %q: %w", o.Custom, err)
		}
		s.Custom[o.Custom] = op
	}
	return s, nil
}

// configurableToPB declares what d honours and takes on the wire
// (protocol 2), when d declares it.
func configurableToPB(d delegate.Delegate, r *pluginpb.DescribeResponse) {
	c, ok := d.(delegate.Configurable)
	if !ok {
		return
	}
	r.Configurable, r.Honours = true, c.Honours()
	for _, o := range c.Options() {
		r.Options = append(r.Options, &pluginpb.Option{Name: o.Name, Description: o.Description})
	}
}

// optionsFromPB reads the options a plugin declared.
func optionsFromPB(pb []*pluginpb.Option) ([]delegate.Option, error) {
	var out []delegate.Option
	for i, o := range pb {
		if o.Name == "" {
			return nil, fmt.Errorf("%w: option %d has no name", ErrMalformed, i)
		}
		out = append(out, delegate.Option{Name: o.Name, Description: o.Description})
	}
	return out, nil
}

// shapeToPB and shapeFromPB convert tensor shapes.
func shapeToPB(shape []int) []int64 {
	out := make([]int64, len(shape))
	for i, d := range shape {
		out[i] = int64(d)
	}
	return out
}

func shapeFromPB(shape []int64) ([]int, error) {
	out := make([]int, len(shape))
	for i, d := range shape {
		if d < 0 || d > math.MaxInt32 {
			return nil, fmt.Errorf("%w: dimension %d of shape %v", ErrMalformed, i, shape)
		}
		out[i] = int(d)
	}
	return out, nil
}

// lostError is an error that is also delegate.ErrLost.
type lostError string

func (e lostError) Error() string { return string(e) }

func (e lostError) Is(target error) bool { return target == delegate.ErrLost }
