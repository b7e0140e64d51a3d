// Command gen runs flowmodels' cases through TensorFlow Lite 2.9 and
// records what it answers, for the interpreter's tests to compare with
// without the library:
//
//	gcc -O2 -o /tmp/tflite29_invoke testdata/gen/tflite29_invoke.c \
//	    -I$T/include -L$T/lib -ltensorflowlite_c -Wl,-rpath,$T/lib
//	go run ./core/internal/flowmodels/gen /tmp/tflite29_invoke core/testdata/controlflow_tflite29.json
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/delego/delego/core/internal/flowmodels"
	"github.com/delego/delego/model/schema"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gen TFLITE29_INVOKE OUT.json")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(runner, out string) error {
	dir, err := os.MkdirTemp("", "flowmodels")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var recs []flowmodels.Record
	for _, c := range flowmodels.Cases() {
		m := c.Model()
		sum := sha256.Sum256(m)
		modelPath := filepath.Join(dir, c.Name+".tflite")
		inPath := filepath.Join(dir, c.Name+".in")
		if err := os.WriteFile(modelPath, m, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(inPath, runnerInputs(m, c.Inputs), 0o644); err != nil {
			return err
		}
		cmd := exec.Command(runner, modelPath, inPath, strconv.Itoa(c.Invokes), strconv.Itoa(c.ResetAt))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		rec := flowmodels.Record{Name: c.Name, ModelSHA256: hex.EncodeToString(sum[:])}
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			rec.Exit, rec.Stderr = exit.ExitCode(), stderr.String()
		case err != nil:
			return fmt.Errorf("%s: %w", c.Name, err)
		default:
			for _, line := range bytes.Split(bytes.TrimSpace(stdout), []byte("\n")) {
				var outs []flowmodels.Output
				if err := json.Unmarshal(line, &outs); err != nil {
					return fmt.Errorf("%s: runner printed %q: %w", c.Name, line, err)
				}
				rec.Invokes = append(rec.Invokes, outs)
			}
		}
		recs = append(recs, rec)
	}
	b, err := json.MarshalIndent(recs, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

// runnerInputs is the runner's input file: the inputs' bytes concatenated,
// a STRING input's string buffer preceded by its size (uint32,
// little-endian), which the runner needs to size the tensor.
func runnerInputs(model []byte, ins [][]byte) []byte {
	m := schema.GetRootAsModel(model, 0)
	var sg schema.SubGraph
	m.Subgraphs(&sg, 0)
	var out []byte
	for i, in := range ins {
		var t schema.Tensor
		sg.Tensors(&t, int(sg.Inputs(i)))
		if t.Type() == schema.TensorTypeSTRING {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(in)))
		}
		out = append(out, in...)
	}
	return out
}
