package main

import (
	"context"
	"io"
)

const opsUsage = `Usage: delego ops [--json] [--plugin-checksums FILE] [--plugin-mtls] [--allow-insecure-plugins]

Lists every op TensorFlow Lite 2.9's builtin resolver registers and every op
a runtime here declares, by the name models carry (builtins by their schema
name, custom ops such as TFLite_Detection_PostProcess, Mfcc or MediaPipe's
Convolution2DTransposeBias by theirs), with the versions TensorFlow Lite
registers and, for delego's CPU kernels ("kernels") and each plugin found
(as "delego plugins" finds them), the versions and element types it runs.
For the kernels the types are those of the op's main tensor (its data
input); for a plugin, those of every non-constant tensor of the node; "any"
when it takes every type, "-" when it does not declare the op. A plugin
that cannot run here (no device) still lists what it declares.

Flags:
  --json           print JSON
` + pluginFlagsHelp + `  -h               show this help

JSON fields (stable):
  tflite           the TensorFlow Lite release measured against ("2.9")
  runtimes[]       {name ("kernels" or the plugin's NAME), path ("" for the
                   kernels), usable, reason (why it cannot run here)}
  ops[]            builtins by name, then custom ops by name:
    op, custom     the op's name as models carry it, and whether it is custom
    tflite         {min, max}: the versions TensorFlow Lite registers; null
                   when it registers none
    support[]      one per runtime that declares the op: {runtime,
                   min_version, max_version, types[] (empty: any)}
`

func opsCmd(ctx context.Context, args []string, stdout, _ io.Writer) error {
	return pluginReportCmd(ctx, "ops", opsUsage, args, stdout, pluginHost.Ops)
}
