// Command labelimage classifies a picture given as raw pixels (already the
// input's size) with a quantized MobileNet and prints the top class, its
// score and the model's tensors, as go-tflite's label_image example does
// after decoding and resizing.
package main

import (
	"fmt"
	"log"
	"os"
	"sort"

	"github.com/mattn/go-tflite"
)

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	model := tflite.NewModel(data)
	if model == nil {
		log.Fatal("cannot load model")
	}
	defer model.Delete()

	options := tflite.NewInterpreterOptions()
	options.SetNumThread(2)
	defer options.Delete()
	interpreter := tflite.NewInterpreter(model, options)
	if interpreter == nil {
		log.Fatal("cannot create interpreter")
	}
	defer interpreter.Delete()
	if interpreter.AllocateTensors() != tflite.OK {
		log.Fatal("allocate failed")
	}

	input := interpreter.GetInputTensor(0)
	fmt.Printf("input %s %v %v %d bytes\n", input.Name(), input.Type(), input.Shape(), input.ByteSize())
	pixels, err := os.ReadFile(os.Args[2])
	if err != nil {
		log.Fatal(err)
	}
	if input.CopyFromBuffer(pixels) != tflite.OK {
		log.Fatal("cannot set input")
	}
	if interpreter.Invoke() != tflite.OK {
		log.Fatal("invoke failed")
	}

	output := interpreter.GetOutputTensor(0)
	q := output.QuantizationParams()
	scores := output.UInt8s()
	classes := make([]int, len(scores))
	for i := range classes {
		classes[i] = i
	}
	sort.SliceStable(classes, func(a, b int) bool { return scores[classes[a]] > scores[classes[b]] })
	top := classes[0]
	fmt.Printf("output %s %v %v scale %g zero %d\n", output.Name(), output.Type(), output.Shape(), q.Scale, q.ZeroPoint)
	fmt.Printf("top %d %.4f\n", top, q.Scale*float64(int(scores[top])-q.ZeroPoint))
}
