// Command delego-cpu is the cpu delegate (delego's own CPU kernels) served
// out of process as a delego plugin. The delego host starts it; run by hand
// it says it is a plugin and exits.
package main

import (
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/cpu"
)

func main() { plugin.Serve(cpu.New()) }
