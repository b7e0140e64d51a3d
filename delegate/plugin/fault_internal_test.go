package plugin

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
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
		f, err := faultFor(c.plugin, func(string) (string, bool) { return c.env, true })
		got := ""
		if f != nil {
			got = f.fault.spec
		}
		if err != nil || got != c.want {
			t.Errorf("%q for %s: %q, %v; want %q", c.env, c.plugin, got, err, c.want)
		}
	}
}

// TestGarbageStrikes: garbage-after=N answers garbage from Invoke N+1 on,
// counting successful Invokes only; the answer has every output the
// request asked for, each of another shape.
func TestGarbageStrikes(t *testing.T) {
	f, err := faultFor("cpu", func(string) (string, bool) { return "garbage-after=2", true })
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true, true} {
		if got := f.strike(); got != want {
			t.Errorf("invoke %d: garbage %v, want %v", i+1, got, want)
		}
		if !want {
			f.succeeded()
		}
	}
	req := &pluginpb.InvokeRequest{Outputs: []*pluginpb.Tensor{{Type: 1, Shape: []int64{1, 8}, Bytes: 32}, {Type: 3, Bytes: 1}}}
	resp := garbageAnswer(req)
	if len(resp.Outputs) != 2 || len(resp.Outputs[0].Shape) != 3 || len(resp.Outputs[1].Shape) != 1 {
		t.Errorf("garbage %v", resp)
	}
}

// TestServeConfigFault: ServeConfig honours $DELEGO_PLUGIN_FAULT as Serve
// does; a malformed one fails go-plugin's start, naming the variable.
func TestServeConfigFault(t *testing.T) {
	d := delegate.Unavailable("cpu", errors.New("none here"))
	t.Setenv(EnvFault, "cpu:crash-after=3")
	if p := ServeConfig(d).Plugins[pluginName].(*grpcPlugin); p.fault == nil || p.fault.fault.after != 3 || p.faultErr != nil {
		t.Errorf("plugin %+v", p)
	}
	t.Setenv(EnvFault, "cpu:crash-after=three")
	err := ServeConfig(d).Plugins[pluginName].(*grpcPlugin).GRPCServer(nil, grpc.NewServer())
	if err == nil || !strings.Contains(err.Error(), `$DELEGO_PLUGIN_FAULT="cpu:crash-after=three"`) {
		t.Errorf("GRPCServer: %v", err)
	}
}
