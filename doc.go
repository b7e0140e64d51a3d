// Package delego opens a TensorFlow Lite model ready to run, in one call,
// with its delegates started as the delego command starts them:
//
//	it, err := delego.Open(ctx, "mobilenet_v1_0.25_128_quant_edgetpu.tflite",
//		delego.WithDelegates("edgetpu"),
//		delego.WithSettingsFile("edgetpu_fallback.json"))
//	if err != nil { ... }
//	defer it.Close() // stops and reaps every plugin it started
//	err = it.Input(0).CopyFrom(pixels)
//	err = it.Invoke(ctx)
//	scores := it.Output(0).Dequantize()
//
// A delegate is found by name: the plugin binary delego-NAME in the
// plugin search directories (plugin.SearchDirs unless WithPluginDirs says
// otherwise), started as its own process so that a crash in an
// accelerator's driver never takes the application down. Without its
// binary, "cpu" runs delego's own kernels in process; any other delegate
// is then unavailable, which the interpreter treats as a compilation error
// that the settings' fallback_settings decide. A binary another user could
// replace (one writable by every user, owned by someone other than the
// user running delego and root, or in such a directory), or one found
// through a relative search directory, is refused and unavailable the
// same way, "cpu" included, unless WithInsecurePlugins. An Edge TPU model
// falls back to its CPU twin (foo.tflite beside foo_edgetpu.tflite, or
// WithCPUTwin).
//
// Configure resolves the options once, for a caller that opens several
// models with them or reads its inputs before the delegates start (the
// delego command does both): a Config opens a model (Open), one the caller
// loaded (OpenModel), or plans it (Plan: where each node would run, and
// why, whatever the devices here). Plugins finds and starts plugins as
// Open does, for a caller that lists them.
package delego
