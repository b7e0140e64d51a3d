// Package adapters turns a model's output tensors into results, as pycoral's
// adapters do for Coral's models: the top classes of a classifier, the
// objects of an SSD detector (TFLite_Detection_PostProcess), the poses of
// PoseNet (Coral's PosenetDecoderOp) and MoveNet, and the per-pixel classes
// of a segmentation model such as DeepLab. It also makes a model's image
// input from a picture: decoded (PNG, JPEG, BMP), resized by nearest
// neighbour as the delego command does by default, bilinearly as TFLite's
// label_image example does, or with Pillow's filters byte for byte as
// pycoral's examples do (PILLanczos, PILNearest, ...), stretched or
// letterboxed as pycoral's set_resized_input (Letterbox, with a Frame that
// takes results back to the picture's pixels), normalised for float inputs
// and, when asked, quantized with the input's scale and zero point
// (ImageInputWith). And it
// reads a model's inputs from raw files (ReadInputs), or a signature def's
// in the signature's order (FindSignature, ReadSignatureInputs), or makes
// them from the golden data's generator (RandomInputs).
//
// What "delego run" prints is the adapters' too: ReadTask reads the outputs
// as one of the heads above (TaskClassify, TaskDetect, TaskPose,
// TaskSegment) into Results, whose JSON and WriteText forms the command
// line prints; ValuesOf and WriteOutputs give every output's values, as
// JSON and as a summary, and WriteRaw their bytes. Outputs and
// SignatureOutputs list an interpreter's outputs, or a signature runner's
// under the signature's names, for them; SignatureNamed names an
// interpreter's outputs as its model's one signature def does (Objects
// reads a detector's outputs by those names), and TensorOutputs makes
// Outputs of tensors held apart from an interpreter, such as a pipeline's.
//
// Where pycoral and libcoral differ, the results follow libcoral's C++
// (coral/classification/adapter.cc, coral/detection/adapter.cc): equal
// class scores rank the higher class first, a box's ymin and xmin are
// raised to 0 and its ymax and xmax lowered to 1, and a detection's class
// is the nearest id; a MoveNet pose scores 1.
//
// The adapters read tensors through the small Tensor interface, which
// *core.Tensor satisfies; they never run a model themselves:
//
//	img, err := adapters.LoadImage("cat.bmp")
//	in := it.Input(0)
//	pixels, err := adapters.ImageInput(img, in.Type(), in.Shape(), adapters.Norm{Mean: adapters.DefaultMean, Std: adapters.DefaultStd})
//	err = in.CopyFrom(pixels)
//	err = it.Invoke(ctx)
//	classes := adapters.Classes(it.Output(0), 5, 0.1, labels)
//
// or, resized bilinearly and quantized with the input's own parameters:
//
//	pixels, err := adapters.ImageInputWith(img, in.Type(), in.Shape(), adapters.InputOptions{
//		Resize: adapters.Bilinear, Norm: adapters.Norm{Mean: 127.5, Std: 127.5}, Quant: in.Quantization()})
//
// and for an SSD detector fed as pycoral's detect_image.py feeds it
// (Pillow's LANCZOS, letterboxed), with its four outputs in a
// []adapters.Tensor and boxes in the picture's pixels:
//
//	opts := adapters.InputOptions{Resize: adapters.PILLanczos, Fit: adapters.Letterbox}
//	pixels, err := adapters.ImageInputWith(img, in.Type(), in.Shape(), opts)
//	...
//	objects, err := adapters.Objects(outs, adapters.DetectOptions{Threshold: 0.4, Frame: opts.Frame(img, in.Shape())})
package adapters

// Tensor is what the adapters read of an output tensor; *core.Tensor
// satisfies it.
type Tensor interface {
	// Shape is the tensor's shape after Invoke.
	Shape() []int
	// Dequantize returns the values as float32: quantized values through
	// their scale and zero point, others converted.
	Dequantize() []float32
}

// Frame is the size, Width by Height pixels, that coordinates are given in: the model's
// input or the original picture. The zero Frame asks for normalised
// coordinates (0 to 1 across the input).
type Frame struct {
	Width, Height int
	// Scale, when positive, is the scale of a letterboxed picture
	// (Letterbox): the picture was scaled by Scale into the top-left
	// corner of an input of Width by Height pixels, and coordinates go to
	// the picture's pixels as pycoral's detect.get_objects takes them
	// there: a normalised y times Height/Scale, an x times Width/Scale.
	// InputOptions.Frame makes such a Frame.
	Scale float64
}

// scale maps a normalised (y, x) into f, or leaves it as it is for the
// zero Frame.
func (f Frame) scale(y, x float32) (float32, float32) {
	switch {
	case f.Width <= 0 || f.Height <= 0:
		return y, x
	case f.Scale > 0:
		return float32(float64(y) * (float64(f.Height) / f.Scale)), float32(float64(x) * (float64(f.Width) / f.Scale))
	}
	return y * float32(f.Height), x * float32(f.Width)
}
