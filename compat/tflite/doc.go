// Package tflite is a drop-in replacement for github.com/mattn/go-tflite,
// the cgo binding of libtensorflowlite_c, on delego's pure-Go interpreter:
// a program written for go-tflite builds and runs with only its import
// paths changed, with CGO_ENABLED=0 and no TensorFlow Lite library to
// cross-compile.
//
//	model := tflite.NewModelFromFile("mobilenet_v1_0.25_128_quant.tflite")
//	defer model.Delete()
//	options := tflite.NewInterpreterOptions()
//	options.SetNumThread(4)
//	defer options.Delete()
//	interpreter := tflite.NewInterpreter(model, options)
//	defer interpreter.Delete()
//	interpreter.AllocateTensors()
//	copy(interpreter.GetInputTensor(0).UInt8s(), pixels)
//	interpreter.Invoke()
//	scores := interpreter.GetOutputTensor(0).UInt8s()
//
// Delegates (packages delegates/edgetpu and delegates/xnnpack) are delego
// plugin processes instead of C libraries; Delete a delegate after the
// interpreters that use it, as in go-tflite, to stop its process.
//
// As in go-tflite, failures are a nil result or a Status, and their
// messages go to the error reporter (SetErrorReporter), or to standard
// error as TensorFlow Lite's default reporter does. What of go-tflite is
// not here, and why, is in the README's "go-tflite compatibility".
//
// For new code, packages core and model give the same interpreter with
// errors as values and contexts.
package tflite
