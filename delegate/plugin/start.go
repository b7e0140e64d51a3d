package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin/pluginpb"
)

// How a plugin process starts.
//
// The host makes a private directory (mode 0700) for the plugin's Unix
// socket and names it in go-plugin's $PLUGIN_UNIX_SOCKET_DIR, so that no
// other user can reach the socket whatever the umask; once the host is
// connected, the directory goes (see session.removeSocketDir). Where it can
// (Linux), it hands the plugin one end of a socket pair, the region
// channel, over which shared memory regions travel as file descriptors
// (regionfd_linux.go). A pinned binary (Options.Checksum) is opened once,
// hashed from that open file and executed from the same open file, as
// /proc/self/fd/N: the bytes that run are the bytes that were hashed, even
// if the file at the path is replaced in between (pin_linux.go).

// envSocketDir is go-plugin's variable for the directory a plugin makes its
// Unix socket in.
const envSocketDir = "PLUGIN_UNIX_SOCKET_DIR"

// start starts a process and describes it. ctx bounds both.
func (c *Client) start(ctx context.Context) (*session, Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, Info{}, fmt.Errorf("start plugin %s: %w", c.path, err)
	}
	timeout := c.opts.StartTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(min(timeout, time.Until(dl)), time.Millisecond)
	}
	s, err := c.launch(timeout)
	if err != nil {
		return nil, Info{}, fmt.Errorf("start plugin %s: %w", c.path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	info, err := c.describe(ctx, s)
	if err != nil {
		s.kill()
		if out := s.stderr.String(); out != "" && !errors.As(err, new(*startExitError)) {
			err = fmt.Errorf("%w; its stderr: %s", err, out)
		}
		return nil, Info{}, fmt.Errorf("start plugin %s: %w", c.path, err)
	}
	s.removeSocketDir()
	return s, info, nil
}

// launch starts the plugin process and waits for go-plugin's handshake.
func (c *Client) launch(timeout time.Duration) (*session, error) {
	var pinned *os.File
	var secure *goplugin.SecureConfig
	if c.opts.Checksum != nil {
		var err error
		if pinned, secure, err = pin(c.path, c.opts.Checksum); err != nil {
			return nil, err
		}
		if pinned != nil {
			defer pinned.Close() // the child has its own copy
		}
	}
	if c.starts == 0 {
		sweepSocketDirs(time.Now()) // once per Client: restarts need not read the directory again
	}
	sockDir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", socketDirPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("make its socket directory: %w", err)
	}
	regions, child, err := newRegionChannel()
	if err != nil {
		os.RemoveAll(sockDir)
		return nil, err
	}
	cmd := exec.Command(c.path)
	env := []string{envSocketDir + "=" + sockDir}
	if child != nil {
		defer child.Close() // the child has its own copy
		cmd.ExtraFiles = append(cmd.ExtraFiles, child)
		env = append(env, envRegionFD+"="+strconv.Itoa(2+len(cmd.ExtraFiles)))
	}
	if pinned != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, pinned)
		cmd.Path = fmt.Sprintf("/proc/self/fd/%d", 2+len(cmd.ExtraFiles))
	}
	cmd.Env = append(hostEnv(), env...)
	setProcAttr(cmd)

	tail := &tailWriter{max: 16 << 10}
	var stderr, forwarded io.Writer = tail, tail
	var lines []*stderrLines
	if c.opts.Stderr != nil {
		fd2, fwd := newStderrLines(c.opts.Stderr, c.path)
		stderr, forwarded, lines = io.MultiWriter(tail, fd2), io.MultiWriter(tail, fwd), []*stderrLines{fd2, fwd}
	}
	cfg := &goplugin.ClientConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: versionedPlugins(func(v int) *grpcPlugin { return &grpcPlugin{version: v} }),
		Cmd:              cmd,
		SkipHostEnv:      true, // cmd.Env has it, less what is the host's own
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         c.opts.AutoMTLS,
		StartTimeout:     timeout,
		Stderr:           stderr,
		SyncStderr:       forwarded,
		Logger:           hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Off}),
		SecureConfig:     secure,
	}
	s := &session{gp: goplugin.NewClient(cfg), cmd: cmd, stderr: tail, lines: lines, sockDir: sockDir, regions: regions, ended: make(chan struct{})}
	proto, err := s.gp.Client()
	if err != nil {
		return nil, c.startErr(s, err, timeout)
	}
	s.pid, s.protocol = cmd.Process.Pid, s.gp.NegotiatedVersion()
	raw, err := proto.Dispense(pluginName)
	if err != nil {
		s.kill()
		return nil, err
	}
	rpc, ok := raw.(pluginpb.DelegateClient)
	if !ok {
		s.kill()
		return nil, fmt.Errorf("%w: dispensed %T", ErrIncompatible, raw)
	}
	s.rpc = rpc
	return s, nil
}

// socketDirPrefix begins the name of a plugin's socket directory, followed
// by the pid of the host that made it: delego-plugin-PID-RANDOM.
const socketDirPrefix = "delego-plugin-"

// staleAfter is how old a socket directory must be before another host may
// take it for a dead host's: older than any start.
const staleAfter = 5 * time.Minute

// sweepSocketDirs removes the socket directories that hosts of this user
// killed while a plugin started (before they could remove them) left in
// the temporary directory: those whose host is gone, made over staleAfter
// before now.
func sweepSocketDirs(now time.Time) {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), socketDirPrefix)
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < staleAfter || !ownedByMe(info) || !processGone(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
}

// hostEnv is the host's environment for a plugin, less the variables that
// describe this plugin's start, which launch sets.
func hostEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != envSocketDir && k != envRegionFD {
			env = append(env, kv)
		}
	}
	return env
}

// describe asks the started plugin to describe itself and checks its
// answer. A plugin whose process ended meanwhile is a *startExitError.
func (c *Client) describe(ctx context.Context, s *session) (Info, error) {
	resp, err := s.rpc.Describe(ctx, &pluginpb.DescribeRequest{})
	if err != nil {
		if cerr := ctxErr(ctx); cerr != nil {
			return Info{}, fmt.Errorf("describe: %w", cerr)
		}
		if status.Code(err) == codes.Unavailable && s.waitExit(time.Second) {
			return Info{}, exitedDuringStart(s)
		}
		return Info{}, fmt.Errorf("describe: %s", status.Convert(err).Message())
	}
	if int(resp.ProtocolVersion) != s.protocol {
		return Info{}, fmt.Errorf("%w: the plugin describes protocol %d, but its handshake agreed on protocol %d", ErrIncompatible, resp.ProtocolVersion, s.protocol)
	}
	sup, err := supportFromPB(resp.Builtins, resp.Custom)
	if err != nil {
		return Info{}, fmt.Errorf("describe: %w", err)
	}
	opts, err := optionsFromPB(resp.Options)
	if err != nil {
		return Info{}, fmt.Errorf("describe: %w", err)
	}
	info := Info{Name: resp.Name, Version: resp.Version, Protocol: s.protocol, Path: c.path,
		Support: sup, Usable: resp.Usable, Reason: resp.Reason, HasChecker: resp.HasChecker,
		Configurable: resp.Configurable, Honours: resp.Honours, Options: opts}
	if info.Name == "" {
		info.Name = strings.TrimPrefix(filepath.Base(c.path), Prefix)
	}
	for _, d := range resp.Devices {
		info.Devices = append(info.Devices, delegate.Device{Name: d.Name, Description: d.Description})
	}
	if !resp.RegionFds || c.opts.regionsByPath {
		s.regions.close() // the plugin takes regions by path
		s.regions = nil
	}
	return info, nil
}

// waitExit reports whether the process ends within d (go-plugin notices an
// exit a moment after the connection breaks).
func (s *session) waitExit(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !s.gp.Exited() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

var pluginVersionRE = regexp.MustCompile(`Plugin version: (\d+)`)

// startErr explains why go-plugin could not start the plugin of session s,
// and ends the session.
func (c *Client) startErr(s *session, err error, timeout time.Duration) error {
	// Reap it first: go-plugin may report the exit (its stdout closing)
	// before it has copied the last of its stderr into the tail.
	s.kill()
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n") // go-plugin goes on with generic advice
	switch {
	case errors.Is(err, goplugin.ErrChecksumsDoNotMatch):
		return fmt.Errorf("%w: its SHA-256 is not the pinned %x", err, c.opts.Checksum)
	case strings.Contains(s.stderr.String(), "$"+EnvFault+"="):
		// It refused the faults asked of it: its words say it all.
		return errors.New(s.stderr.String())
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("it did not finish starting within %v (it may be stopped or hung), so it was killed",
			timeout.Round(time.Millisecond))
	case strings.Contains(msg, "incompatible API version"):
		v := "another"
		if m := pluginVersionRE.FindStringSubmatch(msg); m != nil {
			v = m[1]
		}
		return fmt.Errorf("%w: the plugin speaks delego plugin protocol %s, this delego speaks %s; rebuild the plugin against this delego", ErrIncompatible, v, spokenVersions())
	case strings.Contains(msg, "plugin exited before we could connect"), strings.Contains(msg, "Failed to read any lines"):
		// It closed its standard output without a handshake: it ended.
		return exitedDuringStart(s)
	case strings.Contains(msg, "Unrecognized remote plugin message"), strings.Contains(msg, "incompatible core API"),
		strings.Contains(msg, "unsupported plugin protocol"):
		return fmt.Errorf("%w: not a delego plugin, or it failed at start: %s", ErrIncompatible, first)
	}
	return err
}

// exitedDuringStart is the error of a plugin process that ended before it
// finished starting; s has ended.
func exitedDuringStart(s *session) error {
	<-s.ended
	return &startExitError{state: s.cmd.ProcessState, stderr: s.stderr.String()}
}

// startExitError is a plugin process that ended while it started: killed by
// a signal, or exited. It is ErrCrashed, except a plugin that exited with
// status 0 before serving, which is no delego plugin (ErrIncompatible).
type startExitError struct {
	state  *os.ProcessState // nil when it was not reaped
	stderr string
}

func (e *startExitError) Error() string {
	how := "for a reason not known"
	if e.state != nil {
		how = e.state.String()
	}
	msg := "plugin exited during start: " + how
	if e.stderr != "" {
		msg += "; its stderr: " + e.stderr
	}
	return msg
}

func (e *startExitError) Unwrap() error {
	if e.state != nil && e.state.ExitCode() == 0 {
		return ErrIncompatible
	}
	return ErrCrashed
}

// ExitStatus is how the process ended (see exitedError.ExitStatus).
func (e *startExitError) ExitStatus() (code, signal int) {
	return (&exitedError{state: e.state}).ExitStatus()
}
