package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// TestInterpreterCloseReapsOwnedPlugin: an interpreter given its delegates
// (Options.OwnDelegates) stops and reaps the plugin process on Close; one
// that does not own them leaves the shared process to its owner.
func TestInterpreterCloseReapsOwnedPlugin(t *testing.T) {
	m, err := model.Load(shared.Model(t, "split_concat.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	for _, own := range []bool{false, true} {
		t.Run(fmt.Sprintf("own=%t", own), func(t *testing.T) {
			c, err := plugin.Open(t.Context(), filepath.Join(binDir, "delego-cpu"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{c}, OwnDelegates: own})
			if err != nil {
				t.Fatal(err)
			}
			if err := it.AllocateTensors(); err != nil {
				t.Fatal(err)
			}
			if err := it.Invoke(t.Context()); err != nil {
				t.Fatal(err)
			}
			pid := c.Pid()
			if pid <= 0 {
				t.Fatal("no plugin process")
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			wait := 300 * time.Millisecond // long enough to see a wrong kill
			if own {
				wait = 5 * time.Second
			}
			gone := processGone(pid, wait)
			if own && !gone {
				t.Errorf("plugin process %d still exists after the owning interpreter's Close", pid)
			}
			if !own && gone {
				t.Errorf("plugin process %d ended with an interpreter that did not own it", pid)
			}
		})
	}
	checkNoOrphans(t)
}

// processGone waits up to d for pid to vanish: reaped, not even a zombie.
func processGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
