// Command fizzbuzz plays FizzBuzz from 1 to 100 with a model that takes a
// number as 10 bits, least significant first, and scores the four answers:
// the number, Fizz, Buzz, FizzBuzz.
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
	options.SetNumThread(1)
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
	bits := input.Float32s()
	for n := 1; n <= 100; n++ {
		for i := range bits {
			bits[i] = float32(n >> i & 1)
		}
		if status := interpreter.Invoke(); status != tflite.OK {
			log.Fatal("invoke failed")
		}
		scores := output.Float32s()
		best := 0
		for i := range scores {
			if scores[i] > scores[best] {
				best = i
			}
		}
		fmt.Println([]string{fmt.Sprint(n), "Fizz", "Buzz", "FizzBuzz"}[best])
	}
}
