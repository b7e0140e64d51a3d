// Command delego-edgetpu is the edgetpu delegate (the Coral USB Accelerator
// driver) served out of process as a delego plugin. It reads the same
// environment as the in-process delegate (DELEGO_EDGETPU_DEVICE,
// DELEGO_EDGETPU_FIRMWARE, DELEGO_USB_TRACE), which the host passes on; a
// setting it cannot use makes it an unavailable delegate that says why. The
// delego host starts it; run by hand it says it is a plugin and exits.
package main

import (
	"os"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/edgetpu"
)

func main() {
	opts, err := edgetpu.EnvOptions(os.LookupEnv)
	if err != nil {
		plugin.Serve(delegate.Unavailable(edgetpu.Name, err))
		return
	}
	plugin.Serve(edgetpu.New(opts...))
}
