// Package serve is delego's model server: it serves TensorFlow Lite models
// over the REST half of the Open Inference Protocol (KServe's "v2"
// protocol, which Triton, Seldon MLServer and OpenVINO Model Server also
// speak), so that KServe's and Triton's clients, and plain curl, run them.
//
// Models come from a model repository laid out as Triton's
// (REPO/NAME/VERSION/model.tflite, with an optional REPO/NAME/config.json)
// or are named one by one (ParseModel). Every version of a model is opened
// on the library's one path, delego.Config.OpenModel, once per instance,
// and the instances share the mapped model file. A bounded queue per model
// version refuses the requests beyond its instances and queue with
// ErrOverloaded (HTTP 503) rather than buffering them without bound.
//
// Inputs and outputs are matched by the model's tensor names (those
// "delego inspect" shows and the model metadata lists). Every request is
// checked against the model's inputs (name, datatype, shape, byte count)
// before an instance is taken and before anything is copied into it, and
// every Invoke starts from reset variable tensors, so that a request's
// answer never depends on the requests an instance ran before.
package serve
