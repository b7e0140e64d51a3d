package integration

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/delego/delego"
	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/delegatetest"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/delegate/plugin/pluginpb"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// cppPluginName is the delegate examples/cpp-plugin serves; its binary is
// delego-cppexample, whose process name (comm) the kernel cuts to 15 bytes.
const (
	cppPluginName = "cppexample"
	cppPluginComm = "delego-cppexamp"
)

// buildCppPlugin builds examples/cpp-plugin with its Makefile into a new
// temporary folder, which it returns. Missing compilers or Debian packages
// fail the test, naming what is missing and scripts/deps.sh.
func buildCppPlugin(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"make", "g++", "pkg-config", "protoc", "grpc_cpp_plugin", "flatc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("building the C++ example plugin needs %s, which is not installed: run scripts/deps.sh", tool)
		}
	}
	if out, err := exec.Command("pkg-config", "--exists", "--print-errors", "grpc++", "protobuf", "flatbuffers").CombinedOutput(); err != nil {
		t.Fatalf("building the C++ example plugin needs the gRPC, protobuf and flatbuffers development packages: run scripts/deps.sh (pkg-config: %s)",
			strings.TrimSpace(string(out)))
	}
	dir := t.TempDir()
	out, err := exec.Command("make", "-s", "-j2", "-C", "../examples/cpp-plugin", "BUILD="+dir).CombinedOutput()
	if err != nil {
		t.Fatalf("make examples/cpp-plugin: %v\n%s", err, out)
	}
	return dir
}

// arithModel is a graph of ADD and MUL on float32 inputs x (shape) and y
// (x's last dimension, broadcast), with a constant, every fused activation
// the C++ plugin runs, and two outputs:
//
//	a = RELU(x + c)   b = a * y   out0 = RELU6(b + x)   out1 = RELU_N1_TO_1(x * x)
func arithModel(shape []int) []byte {
	last := shape[len(shape)-1]
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, shape)
	y := b.Tensor("y", tensor.Float32, []int{last})
	c := b.Const("c", tensor.Float32, []int{1, last}, float32Bytes(randomFloats(last, 7)))
	a := b.Tensor("a", tensor.Float32, shape)
	m := b.Tensor("b", tensor.Float32, shape)
	out0 := b.Tensor("out0", tensor.Float32, shape)
	out1 := b.Tensor("out1", tensor.Float32, shape)
	act := func(code schema.BuiltinOperator, f schema.ActivationFunctionType) *schema.BuiltinOptionsT {
		if code == schema.BuiltinOperatorMUL {
			return modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{FusedActivationFunction: f})
		}
		return modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{FusedActivationFunction: f})
	}
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, c}, []int{a}, act(schema.BuiltinOperatorADD, schema.ActivationFunctionTypeRELU))
	b.Op(schema.BuiltinOperatorMUL, 1, []int{a, y}, []int{m}, act(schema.BuiltinOperatorMUL, schema.ActivationFunctionTypeNONE))
	b.Op(schema.BuiltinOperatorADD, 2, []int{m, x}, []int{out0}, act(schema.BuiltinOperatorADD, schema.ActivationFunctionTypeRELU6))
	b.Op(schema.BuiltinOperatorMUL, 3, []int{x, x}, []int{out1}, act(schema.BuiltinOperatorMUL, schema.ActivationFunctionTypeRELU_N1_TO_1))
	b.Inputs(x, y)
	b.Outputs(out0, out1)
	return b.Bytes()
}

// tanhModel is one ADD with the fused activation TANH, which the C++
// plugin declares (ADD on float32) but refuses when it compiles.
func tanhModel() []byte {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, []int{2, 3})
	c := b.Const("c", tensor.Float32, []int{3}, float32Bytes(randomFloats(3, 3)))
	out := b.Tensor("out", tensor.Float32, []int{2, 3})
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, c}, []int{out},
		modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeTANH}))
	b.Inputs(x)
	b.Outputs(out)
	return b.Bytes()
}

// randomFloats is n values in [-4, 4) from a fixed seed.
func randomFloats(n int, seed uint32) []float32 {
	out := make([]float32, n)
	for i := range out {
		seed = seed*1664525 + 1013904223
		out[i] = float32(seed>>8)/float32(1<<24)*8 - 4
	}
	return out
}

func float32Bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// runArith opens model file path with opts and runs it as invokeArith
// does, returning the outputs and the interpreter, still open.
func runArith(t *testing.T, path string, seed uint32, opts ...delego.Option) ([][][]byte, *delego.Interpreter) {
	t.Helper()
	it, err := delego.Open(t.Context(), path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := invokeArith(t.Context(), it.Interpreter, seed)
	if err != nil {
		it.Close()
		t.Fatal(err)
	}
	return runs, it
}

// invokeArith allocates its tensors, sets its inputs from seed and invokes
// it twice (new inputs the second time), returning both runs' outputs.
func invokeArith(ctx context.Context, it *core.Interpreter, seed uint32) ([][][]byte, error) {
	if err := it.AllocateTensors(); err != nil {
		return nil, err
	}
	var runs [][][]byte
	for run := range 2 {
		for i := range it.NumInputs() {
			in := it.Input(i)
			if err := in.CopyFrom(float32Bytes(randomFloats(in.NumElements(), seed+uint32(10*run+i)))); err != nil {
				return nil, err
			}
		}
		if err := it.Invoke(ctx); err != nil {
			return nil, fmt.Errorf("invoke %d: %w", run+1, err)
		}
		var outs [][]byte
		for i := range it.NumOutputs() {
			outs = append(outs, slices.Clone(it.Output(i).Data()))
		}
		runs = append(runs, outs)
	}
	return runs, nil
}

// sameFloats says where two runs' float32 outputs differ (equal values,
// so +0 and -0 are the same), or "" when they do not.
func sameFloats(got, want [][][]byte) string {
	for r := range want {
		for o := range want[r] {
			g, w := got[r][o], want[r][o]
			if len(g) != len(w) {
				return fmt.Sprintf("invoke %d, output %d: %d bytes, want %d", r+1, o, len(g), len(w))
			}
			for i := 0; i < len(w); i += 4 {
				gv := math.Float32frombits(binary.LittleEndian.Uint32(g[i:]))
				wv := math.Float32frombits(binary.LittleEndian.Uint32(w[i:]))
				if gv != wv && !(gv != gv && wv != wv) {
					return fmt.Sprintf("invoke %d, output %d, element %d: %v, want %v", r+1, o, i/4, gv, wv)
				}
			}
		}
	}
	return ""
}

// cppPluginPid is the pid of the one running C++ example plugin process
// that this test process started.
func cppPluginPid(t *testing.T) int {
	t.Helper()
	var pids []int
	for _, c := range childrenOf(t, os.Getpid()) {
		if f := strings.Fields(c); len(f) == 3 && f[1] == cppPluginComm && f[2] != "(Z)" {
			pid, _ := strconv.Atoi(f[0])
			pids = append(pids, pid)
		}
	}
	if len(pids) != 1 {
		t.Fatalf("%d running %s processes, want 1", len(pids), cppPluginComm)
	}
	return pids[0]
}

// TestCppPlugin builds the C++ example plugin (examples/cpp-plugin) and runs
// graphs of ADD and MUL through it with delego.Open: small ones, whose
// tensors travel inline, and large ones, whose tensors travel through a
// shared memory region the plugin maps. Its outputs must equal the CPU
// kernels', a partition it refuses at compile falls back to the CPU, and
// Close leaves no plugin process behind.
func TestCppPlugin(t *testing.T) {
	dir := buildCppPlugin(t)
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	onPlugin := []delego.Option{delego.WithDelegates(cppPluginName), delego.WithPluginDirs(dir)}
	onCPU := []delego.Option{delego.WithDelegates(), delego.WithPluginDirs()}

	for _, tc := range []struct {
		name   string
		shape  []int
		region bool // the tensors are above the shared memory threshold
	}{
		{"inline", []int{1, 4, 4, 8}, false},
		{"region", []int{1, 64, 64, 8}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "arith.tflite")
			if err := os.WriteFile(path, arithModel(tc.shape), 0o644); err != nil {
				t.Fatal(err)
			}
			want, cpu := runArith(t, path, 11, onCPU...)
			cpu.Close()
			got, it := runArith(t, path, 11, onPlugin...)
			defer it.Close()
			if p := it.Plan(); len(p.Partitions) != 1 || p.Partitions[0].Delegate != cppPluginName || len(p.CPUNodes) != 0 {
				t.Fatalf("the plan should be one %s partition of every node:\n%s", cppPluginName, it.Report().Text())
			}
			if ev := it.Fallbacks(); len(ev) != 0 {
				t.Fatalf("unexpected fallbacks: %v", ev)
			}
			if diff := sameFloats(got, want); diff != "" {
				t.Errorf("the C++ plugin's outputs differ from the CPU kernels': %s", diff)
			}
			// A region the plugin mapped shows in its maps as the host's
			// (unlinked) delego-shm file. (Small tensors too go through a
			// region on the first invoke, where the host offers the
			// doorbell; the plugin declines it, and from the second invoke
			// on they travel inline.)
			maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", cppPluginPid(t)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.region && !strings.Contains(string(maps), "delego-shm-") {
				t.Errorf("the plugin has no shared memory region mapped; its maps:\n%s", maps)
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if left := childrenOf(t, os.Getpid()); slices.ContainsFunc(left, func(c string) bool { return strings.Contains(c, cppPluginComm) }) {
				t.Errorf("Close left plugin processes: %v", left)
			}
		})
	}

	// The go-plugin handshake, started by hand: the line on stdout names
	// the newest protocol version both sides speak, and the Unix socket in
	// the folder the host named.
	t.Run("handshake", func(t *testing.T) {
		for offered, want := range map[string]string{"1": "1", "2": "2", "1,2": "2", "2,1": "2", "3": "2"} {
			sockDir := t.TempDir()
			cmd := exec.Command(filepath.Join(dir, plugin.Prefix+cppPluginName))
			cmd.Env = append(os.Environ(), plugin.MagicCookieKey+"="+plugin.MagicCookieValue,
				"PLUGIN_PROTOCOL_VERSIONS="+offered, "PLUGIN_UNIX_SOCKET_DIR="+sockDir)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			cmd.Process.Kill()
			cmd.Wait()
			if err != nil {
				t.Fatalf("offered %s: reading the handshake: %v", offered, err)
			}
			f := strings.Split(strings.TrimSpace(line), "|")
			if len(f) != 5 || f[0] != "1" || f[1] != want || f[2] != "unix" || filepath.Dir(f[3]) != sockDir || f[4] != "grpc" {
				t.Errorf("offered protocols %s: handshake %q, want 1|%s|unix|%s/...|grpc", offered, line, want, sockDir)
			}
		}
		// Without the cookie it says what it is on stderr, and nothing on
		// stdout.
		var stdout, stderr strings.Builder
		cmd := exec.Command(filepath.Join(dir, plugin.Prefix+cppPluginName))
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, plugin.MagicCookieKey+"=") })
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err == nil || stdout.Len() != 0 || !strings.Contains(stderr.String(), "delego delegate plugin") {
			t.Errorf("started without the cookie: %v, stdout %q, stderr %q; want exit status 1, nothing on stdout and a word on stderr",
				err, stdout.String(), stderr.String())
		}
	})

	// Without mTLS the plugin answers only its own user (SO_PEERCRED), even
	// where its socket is open to everyone.
	t.Run("other-user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("connecting as another user needs root")
		}
		sockDir := t.TempDir()
		for d := sockDir; d != "/"; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o011 != 0o011 {
				// Let the other user through to the socket (it keeps root's groups).
				os.Chmod(d, st.Mode().Perm()|0o011)
			}
		}
		if err := os.Chmod(sockDir, 0o777); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(dir, plugin.Prefix+cppPluginName))
		cmd.Env = append(os.Environ(), plugin.MagicCookieKey+"="+plugin.MagicCookieValue,
			"PLUGIN_PROTOCOL_VERSIONS=1", "PLUGIN_UNIX_SOCKET_DIR="+sockDir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		old := syscall.Umask(0)
		err = cmd.Start()
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			cmd.Process.Kill()
			cmd.Wait()
		}()
		line, err := bufio.NewReader(stdout).ReadString('\n')
		f := strings.Split(strings.TrimSpace(line), "|")
		if err != nil || len(f) != 5 {
			t.Fatalf("handshake %q: %v", line, err)
		}
		if st, err := os.Stat(f[3]); err != nil || st.Mode().Perm() != 0o777 {
			t.Fatalf("socket %s: %v, %v; want one open to everyone", f[3], st.Mode(), err)
		}
		if err := describeCppAs(t, f[3], 0); err != nil {
			t.Fatalf("its own user: %v", err)
		}
		switch err := describeCppAs(t, f[3], 65534); {
		case err == nil:
			t.Error("user 65534 got an answer from root's plugin")
		case status.Code(err) != codes.Unavailable:
			t.Errorf("user 65534: %v; want the connection refused by the plugin", err)
		}
	})

	// One plugin process serves several interpreters at once, each with
	// its own partition and region (concurrent Invokes on different
	// executables).
	t.Run("shared", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "arith.tflite")
		if err := os.WriteFile(path, arithModel([]int{1, 32, 32, 8}), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := plugin.Open(t.Context(), filepath.Join(dir, plugin.Prefix+cppPluginName), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// In protocol 2 it declares that it reads no settings and takes no
		// options.
		if info := c.Info(); info.Protocol != plugin.ProtocolVersion || !info.Configurable || len(info.Honours) != 0 || len(info.Options) != 0 {
			t.Errorf("Describe: protocol %d, configurable %v, honours %q, options %v; want protocol %d, configurable, nothing honoured, no options",
				info.Protocol, info.Configurable, info.Honours, info.Options, plugin.ProtocolVersion)
		}
		m, err := model.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		const n = 4
		wants := make([][][][]byte, n)
		for g := range n {
			want, cpu := runArith(t, path, uint32(100*(g+1)), onCPU...)
			cpu.Close()
			wants[g] = want
		}
		var wg sync.WaitGroup
		for g := range n {
			wg.Go(func() {
				it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{c}})
				if err != nil {
					t.Error(err)
					return
				}
				defer it.Close()
				if p := it.Plan(); len(p.Partitions) != 1 || len(p.CPUNodes) != 0 {
					t.Errorf("interpreter %d: the plan should be one partition of every node:\n%s", g, it.Report().Text())
					return
				}
				got, err := invokeArith(t.Context(), it, uint32(100*(g+1)))
				if err != nil {
					t.Errorf("interpreter %d: %v", g, err)
				} else if diff := sameFloats(got, wants[g]); diff != "" {
					t.Errorf("interpreter %d: the C++ plugin's outputs differ from the CPU kernels': %s", g, diff)
				}
			})
		}
		wg.Wait()
		if c.Starts() != 1 {
			t.Errorf("%d plugin processes started, want 1", c.Starts())
		}
	})

	t.Run("refused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "tanh.tflite")
		if err := os.WriteFile(path, tanhModel(), 0o644); err != nil {
			t.Fatal(err)
		}
		const why = "operator 0 has the fused activation TANH"
		// Without fallback the plugin's refusal reaches the caller.
		if it, err := delego.Open(t.Context(), path, onPlugin...); err == nil || !strings.Contains(err.Error(), why) {
			if err == nil {
				it.Close()
			}
			t.Fatalf("Open without fallback: %v, want the plugin's refusal (%s)", err, why)
		}
		// With fallback the partition runs on the CPU kernels.
		want, cpu := runArith(t, path, 5, onCPU...)
		cpu.Close()
		fallback := delego.WithSettingsData([]byte(`{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`))
		got, it := runArith(t, path, 5, append(onPlugin, fallback)...)
		defer it.Close()
		ev := it.Fallbacks()
		if len(ev) != 1 || ev[0].Delegate != cppPluginName || !strings.Contains(ev[0].Err.Error(), why) {
			t.Fatalf("fallbacks %v, want one of %s's partition, refused because %s", ev, cppPluginName, why)
		}
		if diff := sameFloats(got, want); diff != "" {
			t.Errorf("after the fallback, outputs differ from the CPU kernels': %s", diff)
		}
	})

	// The conformance kit, as delego conform runs it (issue 33's
	// acceptance: the C++ plugin passes it, integers and floats exact).
	t.Run("conform", func(t *testing.T) {
		delegatetest.Run(t, filepath.Join(dir, plugin.Prefix+cppPluginName))
	})
}

// describeCppAs connects to the plugin's socket with effective user uid
// (the connection keeps the user it was made with) and asks it to describe
// itself.
func describeCppAs(t *testing.T, sock string, uid int) error {
	t.Helper()
	if err := syscall.Setresuid(-1, uid, -1); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("unix", sock)
	if err := syscall.Setresuid(-1, 0, -1); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("user %d cannot connect: %v", uid, err)
	}
	cc, err := grpc.NewClient("passthrough:plugin", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return conn, nil }))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = pluginpb.NewDelegateClient(cc).Describe(ctx, &pluginpb.DescribeRequest{})
	return err
}
