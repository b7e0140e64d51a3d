// Package adapters turns a model's output tensors into results, as pycoral's
// adapters do for Coral's models: the top classes of a classifier, the
// objects of an SSD detector (TFLite_Detection_PostProcess), the poses of
// PoseNet (Coral's PosenetDecoderOp) and MoveNet, and the per-pixel classes
// of a segmentation model such as DeepLab. It also makes a model's image
// input from a picture: decoded (PNG, JPEG, BMP), resized by nearest
// neighbour as the delego command does or bilinearly as TFLite's
// label_image example does, normalised for float inputs and, when asked,
// quantized with the input's scale and zero point (ImageInputWith). And it
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
// and for an SSD detector, with its four outputs in a []adapters.Tensor:
//
//	objects, err := adapters.Objects(outs, adapters.DetectOptions{Threshold: 0.4, Frame: adapters.Frame{Width: 640, Height: 480}})
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
type Frame struct{ Width, Height int }

// scale maps a normalised (y, x) into f, or leaves it as it is for the
// zero Frame.
func (f Frame) scale(y, x float32) (float32, float32) {
	if f.Width <= 0 || f.Height <= 0 {
		return y, x
	}
	return y * float32(f.Height), x * float32(f.Width)
}
