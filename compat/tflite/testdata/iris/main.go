// Command iris classifies the iris flowers of a CSV file (sepal length,
// sepal width, petal length, petal width in cm, one flower a line) with
// a softmax classifier, all of them in one batch: it resizes the input to
// the number of flowers, as go-tflite's ResizeInputTensor allows.
package main

import (
	"encoding/csv"
	"fmt"
	"log"
	"os"
	"strconv"

	"github.com/mattn/go-tflite"
)

func main() {
	species := []string{"setosa", "versicolor", "virginica"}
	model := tflite.NewModelFromFile(os.Args[1])
	if model == nil {
		log.Fatal("cannot load model")
	}
	defer model.Delete()

	f, err := os.Open(os.Args[2])
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		log.Fatal(err)
	}
	var features []float32
	for _, record := range records {
		for _, field := range record {
			v, err := strconv.ParseFloat(field, 32)
			if err != nil {
				log.Fatal(err)
			}
			features = append(features, float32(v))
		}
	}

	options := tflite.NewInterpreterOptions()
	defer options.Delete()
	interpreter := tflite.NewInterpreter(model, options)
	if interpreter == nil {
		log.Fatal("cannot create interpreter")
	}
	defer interpreter.Delete()

	if status := interpreter.ResizeInputTensor(0, []int32{int32(len(records)), 4}); status != tflite.OK {
		log.Fatal("resize failed")
	}
	if status := interpreter.AllocateTensors(); status != tflite.OK {
		log.Fatal("allocate failed")
	}
	input := interpreter.GetInputTensor(0)
	if status := input.CopyFromBuffer(features); status != tflite.OK {
		log.Fatal("cannot set input")
	}
	if status := interpreter.Invoke(); status != tflite.OK {
		log.Fatal("invoke failed")
	}

	output := interpreter.GetOutputTensor(0)
	if output.Dim(0) != len(records) || output.Dim(1) != len(species) {
		log.Fatalf("output shape %v", output.Shape())
	}
	probs := output.Float32s()
	for i, record := range records {
		p := probs[i*len(species) : (i+1)*len(species)]
		best := 0
		for j := range p {
			if p[j] > p[best] {
				best = j
			}
		}
		fmt.Printf("%v %s %.4f\n", record, species[best], p[best])
	}
}
