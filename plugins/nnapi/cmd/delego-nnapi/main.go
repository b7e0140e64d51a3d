// Command delego-nnapi is the nnapi delegate (Android's Neural Networks
// API, opened at run time) served out of process as a delego plugin. The
// delego host starts it; run by hand it says it is a plugin and exits. Off
// Android, or wherever libneuralnetworks.so does not open, it still serves,
// describing itself as unusable here, with the reason.
package main

import (
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/nnapi"
)

func main() { plugin.Serve(nnapi.New()) }
