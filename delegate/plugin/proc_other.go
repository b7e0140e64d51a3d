//go:build !linux

package plugin

import "os/exec"

// setProcAttr does nothing here: without Pdeathsig, Serve's parent watch
// ends a plugin whose host died.
func setProcAttr(*exec.Cmd) {}
