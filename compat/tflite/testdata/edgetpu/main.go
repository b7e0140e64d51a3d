// Command edgetpu lists the Edge TPUs, runs an Edge TPU-compiled
// classifier on the first one and prints the devices and the top class, as
// go-tflite's edgetpu example does.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/mattn/go-tflite"
	"github.com/mattn/go-tflite/delegates/edgetpu"
)

func main() {
	devices, err := edgetpu.DeviceList()
	if err != nil {
		log.Fatal(err)
	}
	if len(devices) == 0 {
		log.Fatal("no edge TPU devices found")
	}
	for _, d := range devices {
		fmt.Printf("device %d %s\n", d.Type, d.Path)
	}

	model := tflite.NewModelFromFile(os.Args[1])
	if model == nil {
		log.Fatal("cannot load model")
	}
	defer model.Delete()

	d := edgetpu.New(devices[0])
	if d == nil {
		log.Fatal("cannot create the Edge TPU delegate")
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

	pixels, err := os.ReadFile(os.Args[2])
	if err != nil {
		log.Fatal(err)
	}
	copy(interpreter.GetInputTensor(0).UInt8s(), pixels)
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
	fmt.Printf("classes %d top %d\n", len(scores), top)
}
