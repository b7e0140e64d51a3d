package delego_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/delego/delego"
	"github.com/delego/delego/adapters"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// classify puts the picture at image into the interpreter's input, runs
// it and prints the top class.
func classify(ctx context.Context, it *delego.Interpreter, image string) {
	img, err := adapters.LoadImage(image)
	if err != nil {
		log.Fatal(err)
	}
	in := it.Input(0)
	pixels, err := adapters.ImageInput(img, in.Type(), in.Shape(), adapters.Norm{Mean: adapters.DefaultMean, Std: adapters.DefaultStd})
	if err != nil {
		log.Fatal(err)
	}
	if err := in.CopyFrom(pixels); err != nil {
		log.Fatal(err)
	}
	if err := it.Invoke(ctx); err != nil {
		log.Fatal(err)
	}
	labels, err := adapters.ReadLabels("../shared/models/imagenet_labels.txt")
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range adapters.Classes(it.Output(0), 1, 0, labels) {
		fmt.Printf("%s %.2f\n", c.Label, c.Score)
	}
}

// Classify a picture on the CPU: no delegate, delego's own kernels.
func Example_classify() {
	ctx := context.Background()
	it, err := delego.Open(ctx, "../shared/models/mobilenet_v1_0.25_128_quant.tflite", delego.WithThreads(2))
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	classify(ctx, it, "../shared/models/cat.bmp")
	// Output:
	// Egyptian cat 0.27
}

// Classify on an Edge TPU, with the CPU twin as fallback: when the edgetpu
// delegate cannot run (here no delego-edgetpu plugin is found; elsewhere
// no Coral device may be plugged in) and the settings allow a fallback on
// a compilation error, the twin (mobilenet_v1_0.25_128_quant.tflite beside
// the _edgetpu model) runs instead. With the plugin built and
// DELEGO_EDGETPU_DEVICE=sim, a simulated device runs the model.
func Example_edgeTPU() {
	ctx := context.Background()
	it, err := delego.Open(ctx, "../shared/models/mobilenet_v1_0.25_128_quant_edgetpu.tflite",
		delego.WithDelegates("edgetpu"),
		delego.WithSettingsData([]byte(`{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)),
		delego.WithPluginDirs(), // no plugins: the fallback shows
	)
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	if tw := it.Twin(); tw != nil {
		fmt.Println("the CPU twin runs:", tw.Path)
	}
	classify(ctx, it, "../shared/models/cat.bmp")
	// Output:
	// the CPU twin runs: ../shared/models/mobilenet_v1_0.25_128_quant.tflite
	// Egyptian cat 0.27
}

// Settings come from TensorFlow Lite's configuration.proto: this file asks
// for XNNPACK and allows the CPU to take over when it cannot run; without
// WithDelegates, its delegate field picks the delegate.
func Example_settingsFile() {
	ctx := context.Background()
	it, err := delego.Open(ctx, "../shared/models/mobilenet_v1_0.25_128_quant.tflite",
		delego.WithSettingsFile("delegate/config/testdata/fallback_allowed.json"),
		delego.WithPluginDirs(), // no plugins: the fallback shows
	)
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	fmt.Println("delegates:", it.Delegates().Names)
	classify(ctx, it, "../shared/models/cat.bmp")
	for _, f := range it.Fallbacks() {
		fmt.Println("fell back:", f.Delegate)
	}
	// Output:
	// delegates: [xnnpack]
	// Egyptian cat 0.27
	// fell back: xnnpack
}

// Detect objects with an SSD model compiled for the Edge TPU: the
// adapters read the four outputs of its TFLite_Detection_PostProcess.
func Example_detect() {
	ctx := context.Background()
	it, err := delego.Open(ctx, "ssd_mobilenet_v2_coco_quant_postprocess_edgetpu.tflite",
		delego.WithDelegates("edgetpu"))
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	img, err := adapters.LoadImage("grace_hopper.bmp")
	if err != nil {
		log.Fatal(err)
	}
	in := it.Input(0)
	pixels, err := adapters.ImageInput(img, in.Type(), in.Shape(), adapters.Norm{Mean: adapters.DefaultMean, Std: adapters.DefaultStd})
	if err != nil {
		log.Fatal(err)
	}
	if err := in.CopyFrom(pixels); err != nil {
		log.Fatal(err)
	}
	if err := it.Invoke(ctx); err != nil {
		log.Fatal(err)
	}
	labels, err := adapters.ReadLabels("coco_labels.txt")
	if err != nil {
		log.Fatal(err)
	}
	var outs []adapters.Tensor
	for i := range it.NumOutputs() {
		outs = append(outs, it.Output(i))
	}
	b := img.Bounds()
	objects, err := adapters.Objects(outs, adapters.DetectOptions{Threshold: 0.4, Labels: labels, Frame: adapters.Frame{Width: b.Dx(), Height: b.Dy()}})
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range objects {
		fmt.Printf("%s %.2f %+v\n", o.Label, o.Score, o.BBox)
	}
}

// Run a model on strings: a STRING input takes a []string (one per
// element of its shape), a STRING output gives one back. The model here,
// built on the spot, gathers words by index and compares them with "cat".
func Example_strings() {
	b := modelbuild.New()
	words := b.Tensor("words", tensor.String, []int{3})
	pos := b.Tensor("pos", tensor.Int32, []int{2})
	picked := b.Tensor("picked", tensor.String, []int{2})
	cat := b.ConstStrings("cat", []int{1}, []string{"cat"})
	isCat := b.Tensor("is_cat", tensor.Bool, []int{2})
	b.Op(schema.BuiltinOperatorGATHER, 1, []int{words, pos}, []int{picked},
		modelbuild.Options(schema.BuiltinOptionsGatherOptions, &schema.GatherOptionsT{}))
	b.Op(schema.BuiltinOperatorEQUAL, 3, []int{picked, cat}, []int{isCat}, nil)
	b.Inputs(words, pos)
	b.Outputs(picked, isCat)
	dir, err := os.MkdirTemp("", "strings")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "strings.tflite")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	it, err := delego.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	if err := it.Input(0).SetStrings([]string{"dog", "cat", "fish"}); err != nil {
		log.Fatal(err)
	}
	copy(it.Input(1).Int32s(), []int32{1, 2})
	if err := it.Invoke(ctx); err != nil {
		log.Fatal(err)
	}
	got, err := it.Output(0).Strings()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got, tensor.FormatValues(tensor.Bool, it.Output(1).Data(), 2))
	// Output:
	// [cat fish] true false
}
