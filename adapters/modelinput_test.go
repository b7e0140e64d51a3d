package adapters

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

// FuzzReadInput writes arbitrary bytes to a file and reads them as an input
// tensor of want bytes, as --input does: the read succeeds exactly when the
// file holds want bytes, and gives them; otherwise the error says how many
// bytes the tensor needs.
func FuzzReadInput(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{1, 2, 3}, uint16(3))
	f.Add([]byte{1, 2, 3}, uint16(2))
	f.Add(bytes.Repeat([]byte{7}, 600), uint16(599))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, want uint16) {
		path := filepath.Join(dir, "input.raw")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadInput(t.Context(), path, int(want))
		switch {
		case len(data) == int(want) && (err != nil || !bytes.Equal(got, data)):
			t.Errorf("%d bytes for a %d-byte tensor: %v", len(data), want, err)
		case len(data) != int(want) && (err == nil || !strings.Contains(err.Error(), "needs")):
			t.Errorf("%d bytes for a %d-byte tensor: %v, want an error saying what the tensor needs", len(data), want, err)
		}
	})
}

// TestRandomInputsMatchGoldenSeed1: seed 1 gives the golden data's inputs.
func TestRandomInputsMatchGoldenSeed1(t *testing.T) {
	for _, c := range []struct{ model, golden string }{
		{"split_concat.tflite", "split_concat__seed1.input.raw"},
		{"mobilenet_v1_0.25_128_quant.tflite", "mobilenet_v1_0.25_128_quant__seed1.input.raw"},
		{"keras_lstm_mnist_ptq.tflite", "keras_lstm_mnist_ptq__seed1.input.raw"},
	} {
		m, err := model.Load(shared.Model(t, c.model))
		if err != nil {
			t.Fatal(err)
		}
		data, err := RandomInputs(m, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := bytes.Join(data, nil), shared.ReadGolden(t, c.golden); !bytes.Equal(got, want) {
			t.Errorf("%s: %s", c.model, firstDiff(got, want))
		}
	}
}

// TestReadInputs: one file per input, each of the input's size; another
// count is an *InputCountError naming the inputs, another size an error
// naming the input.
func TestReadInputs(t *testing.T) {
	m, err := model.Load(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	golden := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__seed1.input.raw")
	dir := t.TempDir()
	good, short := writeFile(t, dir, "in.raw", golden), writeFile(t, dir, "short.raw", golden[1:])
	data, err := ReadInputs(t.Context(), m, []string{good})
	if err != nil || len(data) != 1 || !bytes.Equal(data[0], golden) {
		t.Fatalf("ReadInputs = %d inputs, %v", len(data), err)
	}
	_, err = ReadInputs(t.Context(), m, []string{good, good})
	ce, ok := errors.AsType[*InputCountError](err)
	if !ok || ce.Files != 2 || len(ce.Inputs) != 1 || !strings.Contains(err.Error(), "the model needs 1 input files ("+ce.Names()+", in that order), got 2") {
		t.Errorf("two files: %v", err)
	}
	in := ModelInputs(m)[0]
	want := fmt.Sprintf("%s: file %s is %d bytes long; the tensor needs %d", in.Describe("input"), short, len(golden)-1, len(golden))
	if _, err := ReadInputs(t.Context(), m, []string{short}); err == nil || err.Error() != want {
		t.Errorf("short file: %v, want %s", err, want)
	}
}
