package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/credentials"
)

// peerCheck is the plugin's transport credentials without mTLS: the
// connection stays in the clear (it never leaves the machine), but it is
// refused unless the process at the other end of the Unix socket runs as
// the plugin's own user (SO_PEERCRED), as its host does. The socket lives
// in a directory only that user can enter; this holds even where a
// plugin's socket is reached some other way.
type peerCheck struct{ uid int }

// peerCredentials are the credentials newGRPCServer adds when go-plugin's
// mTLS is off.
func peerCredentials() credentials.TransportCredentials { return peerCheck{uid: os.Geteuid()} }

func (p peerCheck) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		conn.Close()
		return nil, nil, fmt.Errorf("refused a %s connection: this plugin serves its host over a Unix socket only", conn.RemoteAddr().Network())
	}
	var cred *unix.Ucred
	rc, err := uc.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(fd uintptr) {
			cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		})
		err = errors.Join(cerr, err)
	}
	switch {
	case err != nil:
		conn.Close()
		return nil, nil, fmt.Errorf("refused a connection whose user cannot be told: %w", err)
	case int(cred.Uid) != p.uid:
		conn.Close()
		return nil, nil, fmt.Errorf("refused a connection from process %d of user %d: only user %d, who started this plugin, may use it", cred.Pid, cred.Uid, p.uid)
	}
	return conn, peerInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}, nil
}

func (peerCheck) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("peerCheck serves only")
}

func (peerCheck) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "insecure"}
}

func (p peerCheck) Clone() credentials.TransportCredentials { return p }

func (peerCheck) OverrideServerName(string) error { return nil }

// peerInfo is the AuthInfo of a connection peerCheck let in.
type peerInfo struct{ credentials.CommonAuthInfo }

func (peerInfo) AuthType() string { return "insecure" }
