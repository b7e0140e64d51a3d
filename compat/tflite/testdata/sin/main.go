// Command sin evaluates a sine model (TFLite Micro's hello_world task) on
// points of [-1.5, 1.5] and prints x and the model's sin(x) on each line.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/mattn/go-tflite"
)

func main() {
	model := tflite.NewModelFromFile(os.Args[1])
	if model == nil {
		log.Fatal("cannot load model")
	}
	defer model.Delete()

	interpreter := tflite.NewInterpreter(model, nil)
	if interpreter == nil {
		log.Fatal("cannot create interpreter")
	}
	defer interpreter.Delete()
	if interpreter.AllocateTensors() != tflite.OK {
		log.Fatal("allocate failed")
	}

	input := interpreter.GetInputTensor(0)
	if input.Type() != tflite.Float32 {
		log.Fatalf("input is %v, want Float32", input.Type())
	}
	for x := float32(-1.5); x <= 1.5; x += 0.25 {
		input.Float32s()[0] = x
		if interpreter.Invoke() != tflite.OK {
			log.Fatal("invoke failed")
		}
		fmt.Printf("%.2f %.6f\n", x, interpreter.GetOutputTensor(0).Float32s()[0])
	}
}
