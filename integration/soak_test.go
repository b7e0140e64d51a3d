package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
	"google.golang.org/protobuf/proto"
)

// soakCases are the golden cases the soak runs: integer models, one with
// state (the LSTM, whose second Invoke has its own golden output).
var soakCases = []string{"mobilenet_v1_0.25_128_quant__cat_128", "keras_lstm_mnist_ptq__digit7", "split_concat__seed1"}

// soakTally counts what the soak saw.
type soakTally struct {
	invokes, good, failed, builds, buildFailed atomic.Int64
	kills, stops, opens                        atomic.Int64
}

// TestSoak runs 8 goroutines for a while (DELEGO_SOAK, default 15s), each
// building interpreters of the golden models on the cpu plugin and
// invoking them, 4 on one shared plugin process and 4 on one of their own,
// half with fallback settings; a ninth keeps one interpreter for the whole
// soak, and a tenth opens, uses and closes a plugin of its own over and
// over; meanwhile plugins are killed (SIGKILL) and stopped (SIGSTOP, left
// for the watchdog) at random. Every output must equal the golden one, or
// the Invoke must fail with a delegate error (and never with fallback
// settings). Afterwards no plugin process is left, open files, goroutines,
// /dev/shm and the temporary directory (plugin sockets) are as before, the
// heap's objects and RSS flat against a quarter in, and the long-lived
// interpreter keeps a bounded record of its fallbacks. It logs the figures
// eight times along the way.
func TestSoak(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	d := 15 * time.Second
	if v := os.Getenv("DELEGO_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("DELEGO_SOAK=%q: %v", v, err)
		}
	}
	var cases []shared.GoldenCase
	for _, name := range soakCases {
		cases = append(cases, shared.GoldenCaseNamed(t, name))
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where plugins' sockets would be left
	debug.FreeOSMemory()
	before := procFigures(t)
	shm := shmFiles(t)

	bin := filepath.Join(binDir, "delego-cpu")
	sharedClient, err := plugin.Open(t.Context(), bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	clients := []*plugin.Client{sharedClient}
	var mu sync.Mutex // guards clients
	var tally soakTally
	ctx, stop := context.WithTimeout(t.Context(), d)
	defer stop()

	var workers sync.WaitGroup
	for g := range 8 {
		workers.Go(func() {
			c := sharedClient
			if g%2 == 1 {
				own, err := plugin.Open(ctx, bin, nil)
				if err != nil {
					t.Errorf("goroutine %d: open its plugin: %v", g, err)
					return
				}
				defer own.Close()
				mu.Lock()
				clients = append(clients, own)
				mu.Unlock()
				c = own
			}
			soakWorker(ctx, t, g, c, g%4 < 2, cases, &tally)
		})
	}
	var lasting *core.Interpreter // the ninth goroutine's, kept for the whole soak
	workers.Go(func() { lasting = soakLasting(ctx, t, sharedClient, cases[0], &tally) })
	workers.Go(func() { soakChurn(ctx, t, bin, cases[2], &tally) })
	// The figures eight times along the way; the memory the soak settles at,
	// a quarter in, to compare the end with.
	var warm figures
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for i := 1; i <= 8; i++ {
			select {
			case <-time.After(d / 8):
			case <-ctx.Done():
				return
			}
			debug.FreeOSMemory()
			f := procFigures(t)
			t.Logf("%v in: %v, %d plugin processes; %d invokes, %d plugins killed, %d stopped, %d opened and closed",
				d*time.Duration(i)/8, f, len(childrenOf(t, os.Getpid())), tally.invokes.Load(), tally.kills.Load(),
				tally.stops.Load(), tally.opens.Load())
			if i == 2 {
				warm = f
			}
		}
	}()
	chaos := make(chan struct{})
	go func() {
		defer close(chaos)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
		for ctx.Err() == nil {
			time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
			mu.Lock()
			c := clients[rng.IntN(len(clients))]
			mu.Unlock()
			pid := c.Pid()
			if pid == 0 {
				continue
			}
			if rng.IntN(2) == 0 {
				syscall.Kill(pid, syscall.SIGKILL)
				tally.kills.Add(1)
			} else {
				syscall.Kill(pid, syscall.SIGSTOP)
				tally.stops.Add(1)
			}
		}
	}()
	workers.Wait()
	<-chaos
	<-sampled
	if left := childrenOf(t, os.Getpid()); len(left) > 1 {
		t.Errorf("plugin processes beside the shared one: %v", left)
	}
	if lasting != nil {
		kept, all := len(lasting.Fallbacks()), lasting.FallbackCount()
		t.Logf("the long-lived interpreter: %d fallback events, %d kept", all, kept)
		if kept > core.KeptFallbacks+2 {
			t.Errorf("the long-lived interpreter keeps %d fallback events (of %d)", kept, all)
		}
		lasting.Close()
	}
	sharedClient.Close()
	checkNoOrphans(t)

	debug.FreeOSMemory()
	after := settledFigures(t, before)
	t.Logf("soak %v: %d interpreters built (%d failed), %d invokes: %d golden, %d reported errors; %d plugins killed, %d stopped, %d opened and closed",
		d, tally.builds.Load(), tally.buildFailed.Load(), tally.invokes.Load(), tally.good.Load(), tally.failed.Load(),
		tally.kills.Load(), tally.stops.Load(), tally.opens.Load())
	t.Logf("before: %v; a quarter in: %v; after: %v", before, warm, after)
	if tally.good.Load() == 0 || tally.kills.Load()+tally.stops.Load() == 0 {
		t.Error("the soak ran nothing, or hurt no plugin")
	}
	if after.fds > before.fds || after.goroutines > before.goroutines+2 {
		t.Errorf("left behind: %d open files (before %d), %d goroutines (before %d)",
			after.fds, before.fds, after.goroutines, before.goroutines)
	}
	if warm.rssKB > 0 && after.rssKB > warm.rssKB*3/2+16<<10 {
		t.Errorf("RSS grew from %d MB a quarter in to %d MB at the end", warm.rssKB>>10, after.rssKB>>10)
	}
	if warm.heapObjects > 0 && after.heapObjects > warm.heapObjects*3/2+20000 {
		t.Errorf("the heap grew from %d objects a quarter in to %d at the end", warm.heapObjects, after.heapObjects)
	}
	if now := shmFiles(t); now != shm {
		t.Errorf("/dev/shm: %q before, %q after", shm, now)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the temporary directory holds %d entries, e.g. %s", len(left), left[0].Name())
	}
}

// soakLasting invokes one interpreter of gc on c, with fallback settings,
// until ctx ends, checking each result, and returns it (the caller closes
// it).
func soakLasting(ctx context.Context, t *testing.T, c *plugin.Client, gc shared.GoldenCase, tally *soakTally) *core.Interpreter {
	m, err := model.Load(shared.Model(t, gc.Model))
	if err != nil {
		t.Error(err)
		return nil
	}
	t.Cleanup(func() { m.Close() })
	it, err := core.NewInterpreterContext(ctx, m, soakOptions(c, true))
	if err != nil {
		t.Errorf("the long-lived interpreter: %v", err)
		return nil
	}
	for ctx.Err() == nil {
		soakRuns(ctx, t, 8, it, gc, true, tally)
	}
	return it
}

// soakChurn opens a plugin of its own, runs gc on it a few times and
// closes it, over and over until ctx ends.
func soakChurn(ctx context.Context, t *testing.T, bin string, gc shared.GoldenCase, tally *soakTally) {
	m, err := model.Load(shared.Model(t, gc.Model))
	if err != nil {
		t.Error(err)
		return
	}
	defer m.Close()
	for ctx.Err() == nil {
		c, err := plugin.Open(ctx, bin, nil)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("churn: open: %v", err)
			}
			return
		}
		tally.opens.Add(1)
		if it, err := core.NewInterpreterContext(ctx, m, soakOptions(c, true)); err == nil {
			soakRuns(ctx, t, 9, it, gc, true, tally)
			it.Close()
		} else if ctx.Err() == nil {
			t.Errorf("churn: %v", err)
		}
		c.Close()
	}
}

// soakOptions are the interpreter options of the soak: delegate c, short
// limits, restarts that pause briefly, and fallback settings when asked.
func soakOptions(c *plugin.Client, fallback bool) *core.Options {
	var settings *config.TFLiteSettings
	if fallback {
		settings = &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{
			AllowAutomaticFallbackOnCompilationError: proto.Bool(true),
			AllowAutomaticFallbackOnExecutionError:   proto.Bool(true)}}
	}
	return &core.Options{Delegates: []delegate.Delegate{c}, Settings: settings,
		Watchdog: core.Watchdog{First: 5 * time.Second, Floor: time.Second, Compile: 5 * time.Second},
		Restarts: core.Restarts{Max: 3, Backoff: 10 * time.Millisecond, Cooldown: 500 * time.Millisecond}}
}

// soakWorker builds and runs interpreters of cases on c until ctx ends.
func soakWorker(ctx context.Context, t *testing.T, g int, c *plugin.Client, fallback bool, cases []shared.GoldenCase, tally *soakTally) {
	for i := 0; ctx.Err() == nil; i++ {
		gc := cases[(g+i)%len(cases)]
		m, err := model.Load(shared.Model(t, gc.Model))
		if err != nil {
			t.Error(err)
			return
		}
		tally.builds.Add(1)
		it, err := core.NewInterpreterContext(ctx, m, soakOptions(c, fallback))
		if err != nil {
			tally.buildFailed.Add(1)
			if _, ok := errors.AsType[*delegate.Error](err); !ok && ctx.Err() == nil {
				t.Errorf("goroutine %d: build %s: %v, want a delegate error", g, gc.Model, err)
			}
			m.Close()
			continue
		}
		soakRuns(ctx, t, g, it, gc, fallback, tally)
		it.Close()
		m.Close()
	}
}

// soakRuns invokes it 20 times on gc's inputs, resetting its state every
// second good run, and checks each result.
func soakRuns(ctx context.Context, t *testing.T, g int, it *core.Interpreter, gc shared.GoldenCase, fallback bool, tally *soakTally) {
	if err := it.AllocateTensors(); err != nil {
		t.Errorf("goroutine %d: %v", g, err)
		return
	}
	feedGolden(t, it, gc)
	want := [][]byte{shared.ReadGolden(t, gc.OutputFile), shared.ReadGolden(t, gc.OutputFile)}
	if gc.Invoke2Output != "" {
		want[1] = shared.ReadGolden(t, gc.Invoke2Output)
	}
	good := 0
	for range 20 {
		if ctx.Err() != nil {
			return
		}
		if good%2 == 0 {
			it.ResetVariables()
		}
		tally.invokes.Add(1)
		err := it.Invoke(ctx)
		switch _, isDelegate := errors.AsType[*delegate.Error](err); {
		case err == nil:
			var got []byte
			for i := range it.NumOutputs() {
				got = append(got, it.Output(i).Data()...)
			}
			if !bytes.Equal(got, want[good%2]) {
				t.Errorf("goroutine %d: %s run %d: output differs from the golden one", g, gc.Model, good)
			}
			good++
			tally.good.Add(1)
		case ctx.Err() != nil:
			return
		case !isDelegate || fallback:
			t.Errorf("goroutine %d: %s: %v (fallback %v), fallbacks %v", g, gc.Model, err, fallback, it.Fallbacks())
		default:
			tally.failed.Add(1)
		}
	}
}

// figures are what a process holds.
type figures struct {
	fds, goroutines int
	rssKB           int
	heapObjects     uint64
}

func (f figures) String() string {
	return fmt.Sprintf("%d open files, %d goroutines, RSS %d MB, %d heap objects", f.fds, f.goroutines, f.rssKB/1024, f.heapObjects)
}

func procFigures(t *testing.T) figures {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f := figures{fds: len(fds), goroutines: runtime.NumGoroutine(), heapObjects: ms.HeapObjects}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f.rssKB, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return f
}

// settledFigures waits up to 10 s for the goroutines and files of the
// plugins' connections to wind down to before's, and returns the figures.
func settledFigures(t *testing.T, before figures) figures {
	deadline := time.Now().Add(10 * time.Second)
	for {
		f := procFigures(t)
		if f.fds <= before.fds && f.goroutines <= before.goroutines+2 || time.Now().After(deadline) {
			return f
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shmFiles lists /dev/shm.
func shmFiles(t *testing.T) string {
	entries, err := os.ReadDir("/dev/shm")
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
