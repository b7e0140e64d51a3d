// Package edgetpuinfo is what a host must know of the Edge TPU plugin
// (delego-edgetpu) without linking its USB driver: the delegate's name, the
// custom op of a model compiled for it, Coral's twin naming, and the
// environment both read.
package edgetpuinfo

import (
	"path/filepath"
	"strings"

	"github.com/delego/delego/plugins/edgetpu/executable"
)

// Name is the delegate's name: what --delegate and TFLiteSettings.delegate
// (EDGETPU, EDGETPU_CORAL) select, and the NAME of its plugin binary
// delego-NAME.
const Name = "edgetpu"

// The environment variables the delegate reads. The plugin inherits the
// host's environment, so a host that sets them (or finds them set) speaks
// for the plugin too.
const (
	// EnvDevice=sim runs the delegate on a simulated Coral USB Accelerator
	// (package tpusim) with its firmware loaded; sim-dfu on one that waits
	// for its firmware. Either may be followed by a colon and faults for
	// the simulated device to inject (tpusim.ParseFaults), e.g.
	// sim:unplug-after=3 or sim:timeout-after=1,delay-after=4:2s. A number
	// after the colon plugs in that many simulated devices (usb:0, usb:1,
	// ...), as sim:2 or sim:2:stall-after=5 (faults then strike each).
	// busy=DURATION among the faults makes each invoke take that long on
	// the device (tpusim.Config.Busy), as sim:2:busy=20ms: the simulator
	// itself takes no device time.
	EnvDevice = "DELEGO_EDGETPU_DEVICE"
	// EnvFirmware names the firmware image for a device that waits for
	// one, where coral_settings.firmware_path does not.
	EnvFirmware = "DELEGO_EDGETPU_FIRMWARE"
	// EnvTrace names a file that receives every USB operation the driver
	// makes (package usbtrace).
	EnvTrace = "DELEGO_USB_TRACE"
	// EnvTwin lists CPU twins (paths separated as in $PATH) from which a
	// simulated device computes each edgetpu-custom-op's outputs: each
	// node takes the first twin that holds tensors of its inputs' and
	// outputs' names, types and shapes, and a node that matches none fails
	// to compile. Unset, the simulated device's outputs are counters, not
	// the model's results.
	EnvTwin = "DELEGO_EDGETPU_TWIN"
)

// CPUPlugin is the plugin a simulated device computes the twins' nodes on
// (delego-cpu): the edgetpu plugin never links the CPU kernels itself.
const CPUPlugin = "cpu"

// CustomOp is the custom op Coral's compiler writes into a model compiled
// for the Edge TPU, which only the edgetpu delegate runs: a model holding
// it is such a model, and its CPU twin is named by TwinPath. What the
// delegate declares of it (versions, types) is the plugin's to say.
const CustomOp = executable.CustomOp

// compiledSuffix ends the name Coral's compiler gives its output.
const compiledSuffix = "_edgetpu.tflite"

// TwinPath returns the conventional CPU twin of an Edge TPU model file:
// foo.tflite beside foo_edgetpu.tflite, the name Coral's compiler gives its
// output. It returns "" for other names. The CPU cannot run
// edgetpu-custom-op, so the twin is what runs when the Edge TPU cannot (see
// core.Twin).
func TwinPath(path string) string {
	base := filepath.Base(path)
	if !strings.HasSuffix(base, compiledSuffix) || base == compiledSuffix {
		return ""
	}
	return strings.TrimSuffix(path, compiledSuffix) + ".tflite"
}
