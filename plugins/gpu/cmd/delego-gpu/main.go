// Command delego-gpu is the gpu delegate (OpenCL, opened at run time
// without cgo) served out of process as a delego plugin. The delego host
// starts it; run by hand it says it is a plugin and exits. On a machine
// without OpenCL it still serves, describing itself as unusable here, with
// the reason.
package main

import (
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/gpu"
)

func main() { plugin.Serve(gpu.New()) }
