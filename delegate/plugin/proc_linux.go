package plugin

import (
	"os/exec"
	"syscall"
)

// setProcAttr asks the kernel to SIGKILL the plugin when the host dies, so
// that a host killed without a chance to clean up leaves no plugin behind.
// (Pdeathsig fires when the thread that started the child exits; the Go
// runtime only ends threads whose goroutine exits while locked to them,
// which the goroutines starting plugins never are.)
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
