// Command xor runs an XOR model on the four pairs of bits and prints each
// result, as go-tflite's xor example does.
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

	options := tflite.NewInterpreterOptions()
	defer options.Delete()
	options.SetNumThread(4)
	options.SetErrorReporter(func(msg string, user_data interface{}) {
		log.Println(msg)
	}, nil)

	interpreter := tflite.NewInterpreter(model, options)
	if interpreter == nil {
		log.Fatal("cannot create interpreter")
	}
	defer interpreter.Delete()

	if status := interpreter.AllocateTensors(); status != tflite.OK {
		log.Fatal("allocate failed")
	}

	input := interpreter.GetInputTensor(0)
	output := interpreter.GetOutputTensor(0)
	for _, pair := range [][]float32{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		if err := input.SetFloat32s(pair); err != nil {
			log.Fatal(err)
		}
		if status := interpreter.Invoke(); status != tflite.OK {
			log.Fatal("invoke failed")
		}
		got := make([]float32, output.Dim(output.NumDims()-1))
		if status := output.CopyToBuffer(&got[0]); status != tflite.OK {
			log.Fatal("output failed")
		}
		fmt.Printf("%v xor %v = %.0f\n", pair[0], pair[1], got[0])
	}
}
