package plugin

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/delego/delego/delegate/plugin/pluginpb"
)

// session is one plugin process.
type session struct {
	gp  *goplugin.Client
	cmd *exec.Cmd
	rpc pluginpb.DelegateClient
	pid int
	// protocol is the protocol version negotiated in the handshake.
	protocol int
	stderr   *tailWriter
	// lines pass its stderr on to Options.Stderr line by line; none
	// without one.
	lines []*stderrLines
	// sockDir is the private directory (mode 0700) the plugin makes its
	// Unix socket in; it is removed once the host has connected, and at
	// the latest when the process ends.
	sockDir string
	// regions sends shared memory regions to the plugin as file
	// descriptors; nil when this platform or the plugin cannot (regions
	// then go by path).
	regions *regionSender

	once   sync.Once
	ended  chan struct{} // closed once end began
	closed bool          // ended by Client.Close; set before ended is closed
}

// alive reports whether the process is (as far as we know) running.
func (s *session) alive() bool {
	select {
	case <-s.ended:
		return false
	default:
	}
	return !s.gp.Exited()
}

// closedByClient reports whether the session was ended by Client.Close
// (rather than killed or found dead).
func (s *session) closedByClient() bool {
	select {
	case <-s.ended:
		return s.closed
	default:
		return false
	}
}

// kill ends the process by force (SIGKILL at once) and waits until it is
// reaped; a session already ended stays as it is.
func (s *session) kill() { s.end(false) }

// close stops the process gracefully (go-plugin's shutdown, SIGKILL after
// 2 s), for Client.Close, and waits until it is reaped.
func (s *session) close() { s.end(true) }

// gracefulStop bounds a graceful close: go-plugin's shutdown call waits
// for an answer with no deadline of its own, and a stopped (SIGSTOP)
// plugin never answers.
const gracefulStop = 2 * time.Second

// end stops the process once, as kill or close do, and removes what the
// session left: its socket directory and its end of the region channel.
func (s *session) end(closed bool) {
	s.once.Do(func() {
		s.closed = closed
		close(s.ended)
		switch {
		case s.cmd.Process == nil:
		case closed:
			force := time.AfterFunc(gracefulStop, func() { s.cmd.Process.Kill() })
			defer force.Stop()
		default:
			s.cmd.Process.Kill() // an error means it is gone already
		}
		s.gp.Kill() // waits for the copy of its file descriptor 2
		for _, l := range s.lines {
			l.flush()
		}
		s.removeSocketDir()
		s.regions.close()
	})
}

// removeSocketDir removes the directory of the plugin's Unix socket. Once
// the host is connected the socket's name is no longer needed (gRPC keeps
// the connection it has), so it goes then: a host or plugin killed later
// leaves nothing behind in the file system.
func (s *session) removeSocketDir() {
	if s.sockDir != "" {
		os.RemoveAll(s.sockDir)
	}
}

// exited wraps err, the error of a call to the process that died, with the
// way it ended (ExitStatus). Call it after end.
func (s *session) exited(err error) error {
	<-s.ended
	return &exitedError{err: err, state: s.cmd.ProcessState}
}

// exitedError is the error of a plugin process that died; it unwraps to
// the call's error (ErrCrashed).
type exitedError struct {
	err   error
	state *os.ProcessState // nil when the process was never reaped
}

func (e *exitedError) Error() string { return e.err.Error() }
func (e *exitedError) Unwrap() error { return e.err }

// ExitStatus is how the process ended: its exit code, or -1 and the signal
// that killed it; -1 and 0 when that is not known. A caller finds it with
// errors.As and an interface{ ExitStatus() (code, signal int) }.
func (e *exitedError) ExitStatus() (code, signal int) {
	if e.state == nil {
		return -1, 0
	}
	if ws, ok := e.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, int(ws.Signal())
	}
	return e.state.ExitCode(), 0
}

// exitReport describes how the process ended, with the tail of its stderr.
// Call it after end.
func (s *session) exitReport() string {
	<-s.ended
	r := fmt.Sprintf("pid %d", s.pid)
	if ps := s.cmd.ProcessState; ps != nil {
		r += ", " + ps.String()
	}
	if out := s.stderr.String(); out != "" {
		r += "; its stderr: " + out
	}
	return r
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

// String sums the tail up for an error message: from the last line that
// starts a Go panic or fatal error, its first four lines; else the last five
// lines.
func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(string(w.buf), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	from := max(0, len(lines)-5)
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "panic: ") || strings.HasPrefix(lines[i], "fatal error: ") {
			from = i
			break
		}
	}
	lines = lines[from:min(len(lines), from+4)]
	return strings.Join(lines, " | ")
}
