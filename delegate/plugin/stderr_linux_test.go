package plugin_test

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/testsupport/shared"
)

// lineChan is an Options.Stderr that hands each Write on to a channel.
type lineChan chan string

func (c lineChan) Write(p []byte) (int, error) {
	c <- string(p)
	return len(p), nil
}

// TestStderrLines: with Options.Stderr, a plugin's stderr comes as it is
// written, a whole line per Write after the plugin's name: what it wrote
// on its file descriptor 2 as it started, and what it writes through
// os.Stderr while it serves (which go-plugin forwards in pieces), each
// line as soon as it is ended, and nothing else. Once the plugin is
// closed, the host holds no more file descriptors or goroutines than
// before it started it (the second time: the first start makes what the
// process keeps, such as the network poller).
func TestStderrLines(t *testing.T) {
	chatty(t)
	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	chatty(t)
	if n := openFDs(t); n > fds {
		t.Errorf("%d file descriptors open after the plugin closed, %d before", n, fds)
	}
	// go-plugin's copy of the forwarded stderr ends as the connection
	// closes, a moment after Close returns: wait for it, within a bound.
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > goroutines && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after the plugin closed, %d before", n, goroutines)
	}
}

// openFDs counts the file descriptors the test process holds.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("count open files: %v", err)
	}
	return len(es)
}

// chatty runs the chatty fault plugin twice and closes it, checking the
// lines its stderr gives.
func chatty(t *testing.T) {
	t.Helper()
	lines := make(lineChan, 64)
	p := open(t, "fault-chatty", &plugin.Options{Stderr: lines})
	it, err := interp(t, shared.GoldenCaseNamed(t, "split_concat__seed1"), nil, p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"[fault-chatty] chatty plugin starting\n": false}
	// await takes lines until it has had every one of want.
	await := func(after string, more ...string) {
		t.Helper()
		for _, m := range more {
			want["[fault-chatty] "+m+"\n"] = false
		}
		deadline := time.After(20 * time.Second) // a failure's bound, not a synchronisation
		for !allSeen(want) {
			select {
			case l := <-lines:
				if seen, ok := want[l]; !ok || seen {
					t.Errorf("after %s: stderr line %q, want one of %v", after, l, want)
				}
				want[l] = true
			case <-deadline:
				t.Fatalf("after %s: still waiting for the lines marked false in %v", after, want)
			}
		}
	}
	for n, more := range [][]string{{"invoke 1"}, {"unfinished", "invoke 2"}} {
		if err := it.Invoke(t.Context()); err != nil {
			t.Fatal(err)
		}
		await("invoke "+string(rune('1'+n)), more...)
	}
	it.Close()
	p.Close()
	for {
		select {
		case l := <-lines:
			// The last "unfinished" may still be on its way when the
			// plugin stops; if it came, it came ended.
			if l != "[fault-chatty] unfinished\n" {
				t.Errorf("after Close: stderr line %q", l)
			}
		default:
			return
		}
	}
}

// allSeen reports whether every line of want was seen.
func allSeen(want map[string]bool) bool {
	for _, seen := range want {
		if !seen {
			return false
		}
	}
	return true
}
