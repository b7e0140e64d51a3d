// Command delego-example is the example accelerator's plugin binary. delego
// starts it when a user selects the delegate "example"; run by hand, it says
// it is a plugin and exits.
package main

import (
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/examples/plugin/example"
)

func main() { plugin.Serve(example.New()) }
