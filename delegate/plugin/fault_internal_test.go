package plugin

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
	"github.com/delego/delego/tensor"
)

// TestFaultFor: which of $DELEGO_PLUGIN_FAULT's faults a plugin takes.
func TestFaultFor(t *testing.T) {
	for _, c := range []struct{ env, plugin, want string }{
		{"", "cpu", ""},
		{"crash-after=1", "cpu", "crash-after=1"},
		{"xnnpack:crash-after=1", "cpu", ""},
		{"hang-after=2,cpu:garbage-after=0", "cpu", "cpu:garbage-after=0"},
		{"cpu:garbage-after=0,hang-after=2", "cpu", "cpu:garbage-after=0"},
		{"cpu:garbage-after=0,hang-after=2", "xnnpack", "hang-after=2"},
	} {
		f, err := faultFor(c.plugin, c.env)
		got := ""
		if f != nil {
			got = f.spec
		}
		if err != nil || got != c.want {
			t.Errorf("%q for %s: %q, %v; want %q", c.env, c.plugin, got, err, c.want)
		}
	}
}

// copier is a delegate whose executables copy their one input to their one
// output, and fail when the input's first byte is 0xff: enough of a
// delegate to serve, and to tell its own executables from the fault
// layer's.
type copier struct{}

func (copier) Name() string                                       { return "cpu" }
func (copier) Support(context.Context) (*delegate.Support, error) { return &delegate.Support{}, nil }
func (copier) Close() error                                       { return nil }
func (copier) Compile(context.Context, *delegate.Partition) (delegate.Executable, error) {
	return copyExe{}, nil
}

type copyExe struct{}

func (copyExe) Invoke(_ context.Context, ins, outs []*tensor.Tensor) error {
	if ins[0].Data[0] == 0xff {
		return errors.New("copier: refuses 0xff")
	}
	copy(outs[0].Data, ins[0].Data)
	return nil
}

func (copyExe) Close() error { return nil }

// served returns a server of copier started as opts ask (with
// $DELEGO_PLUGIN_FAULT as the test set it).
func served(t *testing.T, opts ...ServeOption) *server {
	t.Helper()
	p := newestPlugin(ServeConfig(copier{}, opts...))
	if p.faultErr != nil {
		t.Fatal(p.faultErr)
	}
	return newServer(p.version, p.impl, p.compile, nil)
}

// newestPlugin is the plugin a ServeConfig serves in ProtocolVersion.
func newestPlugin(cfg *goplugin.ServeConfig) *grpcPlugin {
	return cfg.VersionedPlugins[ProtocolVersion][pluginName].(*grpcPlugin)
}

// compiled compiles a partition on s, and returns its handle and the
// executable its Invokes run.
func compiled(t *testing.T, s *server) (uint64, delegate.Executable) {
	t.Helper()
	resp, err := s.Compile(t.Context(), &pluginpb.CompileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	part, err := s.part(resp.Handle)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Handle, part.exe
}

// invokeReq asks partition h to copy in into a 4-byte output of shape [1 4].
func invokeReq(h uint64, in byte) *pluginpb.InvokeRequest {
	return &pluginpb.InvokeRequest{Handle: h,
		Inputs:  []*pluginpb.Tensor{{Type: int32(tensor.Uint8), Shape: []int64{1, 4}, Bytes: 4, Data: &pluginpb.Tensor_Inline{Inline: []byte{in, 2, 3, 4}}}},
		Outputs: []*pluginpb.Tensor{{Type: int32(tensor.Uint8), Shape: []int64{1, 4}, Bytes: 4}},
	}
}

// TestServeWithoutFaults: a plugin started without faults (none in
// $DELEGO_PLUGIN_FAULT, none for it, or WithFaults("") over the variable's)
// builds no fault layer: its partitions run the delegate's own executables.
func TestServeWithoutFaults(t *testing.T) {
	for _, c := range []struct {
		name, env string
		opts      []ServeOption
	}{
		{"no variable", "", nil},
		{"another plugin's", "xnnpack:crash-after=0", nil},
		{"WithFaults none", "crash-after=0", []ServeOption{WithFaults("")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvFault, c.env)
			s := served(t, c.opts...)
			h, exe := compiled(t, s)
			if _, ok := s.compile.(copier); !ok {
				t.Errorf("partitions compiled by %T, want the delegate itself", s.compile)
			}
			if _, ok := exe.(copyExe); !ok {
				t.Errorf("Invokes run %T, want the delegate's own executable", exe)
			}
			for range 2 {
				if resp, err := s.Invoke(t.Context(), invokeReq(h, 1)); err != nil || !bytes.Equal(resp.Outputs[0].GetInline(), []byte{1, 2, 3, 4}) {
					t.Errorf("Invoke: %v, %v", resp, err)
				}
			}
		})
	}
}

// TestGarbageStrikes: garbage-after=N answers garbage from Invoke N+1 on,
// counting the successful Invokes of every partition the process serves;
// the answer has every output the request asked for, each of another
// shape, inline.
func TestGarbageStrikes(t *testing.T) {
	t.Setenv(EnvFault, "garbage-after=2")
	s := served(t)
	var handles [2]uint64
	for i := range handles {
		var exe delegate.Executable
		handles[i], exe = compiled(t, s)
		if _, ok := exe.(*faultyExecutable); !ok {
			t.Fatalf("Invokes run %T, want the fault layer's executable", exe)
		}
	}
	for i, c := range []struct {
		part    int
		in      byte
		garbage bool
	}{{0, 1, false}, {1, 0xff, false}, {1, 1, false}, {0, 1, true}, {1, 1, true}} {
		req := invokeReq(handles[c.part], c.in)
		resp, err := s.Invoke(t.Context(), req)
		switch {
		case c.in == 0xff:
			if err == nil || !strings.Contains(err.Error(), "copier: refuses 0xff") {
				t.Errorf("invoke %d: %v, want the delegate's error", i+1, err)
			}
		case err != nil:
			t.Errorf("invoke %d: %v", i+1, err)
		case c.garbage:
			o := resp.Outputs[0]
			if len(resp.Outputs) != 1 || o.Type != req.Outputs[0].Type || !slices.Equal(o.Shape, []int64{1, 4, 3}) ||
				o.Bytes != 7 || string(o.GetInline()) != "garbage" {
				t.Errorf("invoke %d: %v, want garbage", i+1, resp)
			}
		default:
			if !bytes.Equal(resp.Outputs[0].GetInline(), []byte{1, 2, 3, 4}) {
				t.Errorf("invoke %d: %v, want the input copied", i+1, resp)
			}
		}
	}
	outs := []*tensor.Tensor{{Shape: []int{1, 8}, Data: make([]byte, 32)}, {Data: make([]byte, 1)}}
	garbageOutputs(outs)
	if len(outs[0].Shape) != 3 || len(outs[1].Shape) != 1 {
		t.Errorf("garbage shapes %v, %v", outs[0].Shape, outs[1].Shape)
	}
}

// TestServeConfigFault: ServeConfig plans faults as Serve does, from
// $DELEGO_PLUGIN_FAULT or WithFaults in its place; a malformed list fails
// go-plugin's start, naming where it came from.
func TestServeConfigFault(t *testing.T) {
	d := delegate.Unavailable("cpu", errors.New("none here"))
	layer := func(opts ...ServeOption) *faultLayer {
		l, _ := newestPlugin(ServeConfig(d, opts...)).compile.(*faultLayer)
		return l
	}
	t.Setenv(EnvFault, "cpu:crash-after=3")
	if l := layer(); l == nil || l.fault.after != 3 || l.fault.asked != `$DELEGO_PLUGIN_FAULT="cpu:crash-after=3"` {
		t.Errorf("fault layer %+v", l)
	}
	if l := layer(WithFaults("hang-after=1,xnnpack:garbage-after=0")); l == nil || l.fault.kind != faultHang ||
		l.fault.asked != `plugin.WithFaults("hang-after=1")` {
		t.Errorf("fault layer %+v, want WithFaults' hang in place of the variable's crash", l)
	}
	for _, c := range []struct {
		env  string
		opts []ServeOption
		want string
	}{
		{"cpu:crash-after=three", nil, `$DELEGO_PLUGIN_FAULT="cpu:crash-after=three": fault "cpu:crash-after=three": "three" is not a number`},
		{"", []ServeOption{WithFaults("hang-after")}, `plugin.WithFaults("hang-after"): fault "hang-after": want [PLUGIN:]crash-after=N`},
	} {
		t.Setenv(EnvFault, c.env)
		err := newestPlugin(ServeConfig(d, c.opts...)).GRPCServer(nil, grpc.NewServer())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("GRPCServer: %v, want it to say %q", err, c.want)
		}
	}
}
