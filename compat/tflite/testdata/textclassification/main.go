// Command textclassification tells whether each sentence on its command
// line is negative or positive, as TensorFlow Lite's text classification
// example does: words become ids by a vocabulary file ("word id" per
// line), the ids fill a fixed-length int32 input after <START>, padded with
// <PAD>, and the model scores [negative, positive].
package main

import (
	"bufio"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-tflite"
)

func main() {
	if len(os.Args) < 4 {
		log.Fatal("usage: textclassification MODEL VOCABULARY SENTENCE...")
	}
	vocab, err := loadVocabulary(os.Args[2])
	if err != nil {
		log.Fatal(err)
	}
	model := tflite.NewModelFromFile(os.Args[1])
	if model == nil {
		log.Fatal("cannot load model")
	}
	defer model.Delete()
	options := tflite.NewInterpreterOptions()
	defer options.Delete()
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
	for _, sentence := range os.Args[3:] {
		ids := input.Int32s()
		for i := range ids {
			ids[i] = vocab["<PAD>"]
		}
		ids[0] = vocab["<START>"]
		for i, word := range strings.Fields(strings.ToLower(sentence)) {
			if i+1 >= len(ids) {
				break
			}
			id, ok := vocab[word]
			if !ok {
				id = vocab["<UNKNOWN>"]
			}
			ids[i+1] = id
		}
		if status := interpreter.Invoke(); status != tflite.OK {
			log.Fatal("invoke failed")
		}
		scores := output.Float32s()
		label := "negative"
		if scores[1] > scores[0] {
			label = "positive"
		}
		fmt.Printf("%s: negative %.6f positive %.6f: %s\n", label, scores[0], scores[1], sentence)
	}
}

func loadVocabulary(path string) (map[string]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vocab := map[string]int32{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) != 2 {
			continue
		}
		id, err := strconv.Atoi(fields[1])
		if err != nil {
			return nil, err
		}
		vocab[fields[0]] = int32(id)
	}
	return vocab, s.Err()
}
