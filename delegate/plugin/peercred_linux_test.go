package plugin

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPeerCheck: peerCheck lets in a connection from its user and refuses
// one from any other, naming both users and the process.
func TestPeerCheck(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	me := os.Geteuid()
	for _, c := range []struct {
		uid int
		ok  bool
	}{{me, true}, {me + 1, false}} {
		client, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		_, info, err := peerCheck{uid: c.uid}.ServerHandshake(conn)
		switch {
		case c.ok && (err != nil || info.AuthType() != "insecure"):
			t.Errorf("uid %d: %v, %v; want the connection let in", c.uid, info, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())+" of user "+strconv.Itoa(me)) ||
			!strings.Contains(err.Error(), "only user "+strconv.Itoa(c.uid))):
			t.Errorf("uid %d: %v; want a refusal naming the process and both users", c.uid, err)
		}
		client.Close()
		conn.Close()
	}
}
