//go:build !linux

package plugin

import (
	"os"
	"os/exec"
)

// setProcAttr does nothing here: without Pdeathsig, Serve's parent watch
// ends a plugin whose host died.
func setProcAttr(*exec.Cmd) {}

// nameProcess does nothing here.
func nameProcess() {}

// processGone is false here: sweepSocketDirs leaves everything.
func processGone(int) bool { return false }

func ownedByMe(os.FileInfo) bool { return false }
