// Command xnnpack runs an XOR model with the XNNPACK delegate, as
// go-tflite's programs add it, and prints each result.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/mattn/go-tflite"
	"github.com/mattn/go-tflite/delegates/xnnpack"
)

func main() {
	model := tflite.NewModelFromFile(os.Args[1])
	if model == nil {
		log.Fatal("cannot load model")
	}
	defer model.Delete()

	d := xnnpack.New(xnnpack.DelegateOptions{NumThreads: 2})
	if d == nil {
		log.Fatal("cannot create the XNNPACK delegate")
	}
	defer d.Delete()
	options := tflite.NewInterpreterOptions()
	options.AddDelegate(d)
	defer options.Delete()

	interpreter := tflite.NewInterpreter(model, options)
	if interpreter == nil {
		log.Fatal("cannot create interpreter")
	}
	defer interpreter.Delete()
	if interpreter.AllocateTensors() != tflite.OK {
		log.Fatal("allocate failed")
	}
	input, output := interpreter.GetInputTensor(0), interpreter.GetOutputTensor(0)
	for _, pair := range [][]float32{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		copy(input.Float32s(), pair)
		if interpreter.Invoke() != tflite.OK {
			log.Fatal("invoke failed")
		}
		fmt.Printf("%v xor %v = %.0f\n", pair[0], pair[1], output.Float32s()[0])
	}
}
