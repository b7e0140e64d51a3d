package plugin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The region channel: shared memory without a name.
//
// A region made as a file in /dev/shm exists in the file system from its
// creation until Attach returns and the host unlinks it; a host killed in
// between (while a stopped plugin keeps Attach waiting, say) leaves the
// file behind. So on Linux the host makes each region with memfd_create,
// which never has a name, and hands the plugin the descriptor itself: at
// start it passes the plugin one end of a SOCK_SEQPACKET socket pair (named
// by $DELEGO_PLUGIN_REGION_FD), and for each Attach sends the region's
// descriptor over it (SCM_RIGHTS) in a message of 8 bytes, a token, which
// the AttachRequest then names (fd_token). The message is in the plugin's
// queue before the Attach call is sent, so the plugin takes it from the
// queue without waiting. The host seals the region's size: a plugin cannot
// shrink it under the host's mapping (which would fault the host).

// envRegionFD names, in a plugin's environment, its end of the region
// channel.
const envRegionFD = "DELEGO_PLUGIN_REGION_FD"

// maxHeldRegions bounds the descriptors a plugin keeps for Attach calls
// that have not come (a host that sent one and then gave up on the call).
const maxHeldRegions = 64

// errNoMemfd: the kernel would not make a memfd (too old, or a sandbox
// forbids it); the region is then made as a file.
var errNoMemfd = errors.New("shared memory: memfd_create")

// regionSender is the host's end of a plugin's region channel.
type regionSender struct {
	conn *os.File
	next atomic.Uint64 // the last token sent
}

// newRegionChannel makes a region channel: the host's end, and the
// plugin's to pass to the process (the caller closes it once the process
// has started).
func newRegionChannel() (*regionSender, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("make its region channel: %w", err)
	}
	return &regionSender{conn: os.NewFile(uintptr(fds[0]), "region channel")}, os.NewFile(uintptr(fds[1]), "plugin's region channel"), nil
}

// close closes the host's end; a nil channel is fine.
func (c *regionSender) close() {
	if c != nil {
		c.conn.Close()
	}
}

// create makes a region of size bytes in a memfd, maps it and sends it to
// the plugin; the AttachRequest names it by the token returned.
func (c *regionSender) create(size int) (*region, uint64, error) {
	fd, err := unix.MemfdCreate("delego-region", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", errNoMemfd, err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		return nil, 0, fmt.Errorf("shared memory: size %d: %w", size, err)
	}
	if err := unix.Fchmod(fd, 0o600); err != nil {
		return nil, 0, fmt.Errorf("shared memory: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return nil, 0, fmt.Errorf("shared memory: seal its size: %w", err)
	}
	data, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, 0, fmt.Errorf("shared memory: map %d bytes: %w", size, err)
	}
	token := c.next.Add(1)
	if err := c.send(token, fd); err != nil {
		unix.Munmap(data)
		return nil, 0, err
	}
	return &region{data: data}, token, nil
}

// send sends fd to the plugin in a message that carries token.
func (c *regionSender) send(token uint64, fd int) error {
	msg := binary.LittleEndian.AppendUint64(nil, token)
	rc, err := c.conn.SyscallConn()
	if err != nil {
		return fmt.Errorf("shared memory: region channel: %w", err)
	}
	var serr error
	if err := rc.Control(func(s uintptr) {
		serr = unix.Sendmsg(int(s), msg, unix.UnixRights(fd), nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
	}); err != nil {
		return fmt.Errorf("shared memory: region channel: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("shared memory: send the region to the plugin: %w", serr)
	}
	return nil
}

// regionInbox is a plugin's end of the region channel.
type regionInbox struct {
	mu   sync.Mutex
	conn *os.File
	held map[uint64]int // received for Attach calls not seen yet
}

// regionInboxFromEnv is the region channel the host passed, or nil when it
// passed none (then regions come by path).
func regionInboxFromEnv() (*regionInbox, error) {
	v, ok := os.LookupEnv(envRegionFD)
	if !ok {
		return nil, nil
	}
	fd, err := strconv.Atoi(v)
	var st unix.Stat_t
	if err == nil && fd > 2 {
		err = unix.Fstat(fd, &st)
	}
	if err != nil || fd <= 2 || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, fmt.Errorf("$%s=%s is not a socket this process holds", envRegionFD, v)
	}
	unix.CloseOnExec(fd) // not for the plugin's own children
	return &regionInbox{conn: os.NewFile(uintptr(fd), "region channel"), held: map[uint64]int{}}, nil
}

// region maps the region sent with token, of size bytes.
func (b *regionInbox) region(token uint64, size int) (*region, error) {
	fd, err := b.take(token)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return mapRegion(fd, "the region sent as a file descriptor", size)
}

// take returns the descriptor sent with token: held already, or next in
// the channel's queue. The host sends it before it calls Attach, so it is
// there unless the host never sent it.
func (b *regionInbox) take(token uint64) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if fd, ok := b.held[token]; ok {
		delete(b.held, token)
		return fd, nil
	}
	for {
		got, fd, err := b.receive()
		if err != nil {
			return -1, err
		}
		if got == token {
			return fd, nil
		}
		if len(b.held) >= maxHeldRegions {
			unix.Close(fd)
			return -1, fmt.Errorf("shared memory: %d regions sent and never attached", len(b.held))
		}
		b.held[got] = fd
	}
}

// receive reads the next message of the channel without waiting: its token
// and descriptor.
func (b *regionInbox) receive() (uint64, int, error) {
	rc, err := b.conn.SyscallConn()
	if err != nil {
		return 0, -1, fmt.Errorf("shared memory: region channel: %w", err)
	}
	buf, oob := make([]byte, 8), make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var rerr error
	if err := rc.Control(func(s uintptr) {
		for {
			n, oobn, _, _, rerr = unix.Recvmsg(int(s), buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
			if rerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return 0, -1, fmt.Errorf("shared memory: region channel: %w", err)
	}
	switch {
	case errors.Is(rerr, unix.EAGAIN):
		return 0, -1, errors.New("shared memory: the host sent no region for this Attach")
	case rerr != nil:
		return 0, -1, fmt.Errorf("shared memory: region channel: %w", rerr)
	case n == 0 && oobn == 0:
		return 0, -1, errors.New("shared memory: the host closed the region channel")
	}
	var fds []int
	if cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range cmsgs {
			if r, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, r...)
			}
		}
	}
	if n != 8 || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return 0, -1, fmt.Errorf("shared memory: malformed region message (%d bytes, %d descriptors)", n, len(fds))
	}
	return binary.LittleEndian.Uint64(buf), fds[0], nil
}
