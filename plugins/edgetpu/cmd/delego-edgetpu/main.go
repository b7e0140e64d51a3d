// Command delego-edgetpu is the edgetpu delegate (the Coral USB Accelerator
// driver) served out of process as a delego plugin. It reads the same
// environment as the in-process delegate (DELEGO_EDGETPU_DEVICE,
// DELEGO_EDGETPU_FIRMWARE, DELEGO_USB_TRACE), which the host passes on; a
// setting it cannot use makes it an unavailable delegate that says why. The
// delego host starts it; run by hand it says it is a plugin and exits.
//
// Run as "delego-edgetpu devices" it lists the Coral USB Accelerators it
// sees as JSON and exits (edgetpuinfo.DevicesCommand): "delego devices"
// asks it so, and so learns of the devices without linking libusb.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == edgetpuinfo.DevicesCommand {
		os.Exit(devices())
	}
	opts, err := edgetpu.EnvOptions(os.LookupEnv)
	if err != nil {
		plugin.Serve(delegate.Unavailable(edgetpuinfo.Name, err))
		return
	}
	d := edgetpu.New(opts...)
	plugin.Serve(d)
	// The host stopped the plugin: close the devices, and the delego-cpu
	// a simulated device computes on, so that no process outlives this one.
	if err := d.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

// devices prints the devices (edgetpu.WriteDevices) and returns the exit
// status: 1 when they cannot be listed, and why on standard error.
func devices() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := edgetpu.WriteDevices(ctx, os.Stdout, os.LookupEnv); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
