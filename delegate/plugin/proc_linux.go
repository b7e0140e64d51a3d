package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setProcAttr asks the kernel to SIGKILL the plugin when the host dies, so
// that a host killed without a chance to clean up leaves no plugin behind.
// (Pdeathsig fires when the thread that started the child exits; the Go
// runtime only ends threads whose goroutine exits while locked to them,
// which the goroutines starting plugins never are.)
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// nameProcess gives the plugin process the name of its binary (argv[0]),
// which ps, top and pgrep show: a pinned plugin is executed as
// /proc/self/fd/N (see pinBinary), which would otherwise name it "N".
func nameProcess() {
	name := filepath.Base(os.Args[0])
	if len(name) > 15 {
		name = name[:15] // the kernel keeps 15 bytes
	}
	b := append([]byte(name), 0)
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
	runtime.KeepAlive(b)
}

// processGone reports whether no process pid exists.
func processGone(pid int) bool { return unix.Kill(pid, 0) == unix.ESRCH }

// ownedByMe reports whether the file belongs to this process's user.
func ownedByMe(info os.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
