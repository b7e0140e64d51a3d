package plugin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// ProtocolVersion is the version of delego's plugin protocol that this
// package speaks, sent in the go-plugin handshake and in Describe. A plugin
// built for another version is refused.
const ProtocolVersion = 1

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

// Handshake is the go-plugin handshake of ProtocolVersion.
func Handshake() goplugin.HandshakeConfig {
	return goplugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// grpcPlugin is delego's go-plugin plugin: impl is the delegate served (nil
// in the host), compile what compiles its partitions (impl, or the fault
// layer the plugin started with around it), or faultErr why the faults
// planned for it cannot be read.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	impl     delegate.Delegate
	compile  compiler
	faultErr error
	regions  *regionInbox // the region channel from the host; nil: none
}

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	if p.faultErr != nil {
		return p.faultErr
	}
	pluginpb.RegisterDelegateServer(s, newServer(p.impl, p.compile, p.regions))
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
