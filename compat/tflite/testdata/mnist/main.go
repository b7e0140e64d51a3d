// Command mnist classifies a 28x28 digit with a quantized LSTM model, as
// go-tflite's mnist example does, three times: the LSTM keeps its state
// between invokes until ResetVariableTensors clears it. It prints the
// scores and the top digit of each run.
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
	interpreter := tflite.NewInterpreter(model, tflite.NewInterpreterOptions())
	if interpreter == nil {
		log.Fatal("cannot create interpreter")
	}
	defer interpreter.Delete()
	if interpreter.AllocateTensors() != tflite.OK {
		log.Fatal("allocate failed")
	}

	digit, err := os.ReadFile(os.Args[2])
	if err != nil {
		log.Fatal(err)
	}
	if err := interpreter.GetInputTensor(0).SetUint8s(digit); err != nil {
		log.Fatal(err)
	}
	for run := 1; run <= 3; run++ {
		if run == 3 && interpreter.ResetVariableTensors() != tflite.OK {
			log.Fatal("reset failed")
		}
		if interpreter.Invoke() != tflite.OK {
			log.Fatal("invoke failed")
		}
		scores := interpreter.GetOutputTensor(0).UInt8s()
		top := 0
		for i, s := range scores {
			if s > scores[top] {
				top = i
			}
		}
		fmt.Printf("run %d %v top %d\n", run, scores, top)
	}
}
