// Command delego-xnnpack is the xnnpack delegate (the XNNPACK library
// through cgo) served out of process as a delego plugin. The delego host
// starts it; run by hand it says it is a plugin and exits. Built without cgo
// it still serves, describing itself as unusable here, with the reason.
package main

import (
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/xnnpack"
)

func main() { plugin.Serve(xnnpack.New()) }
