package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/delego/delego/internal/fileio"
	"github.com/delego/delego/model/modelbuild"
)

const exampleUsage = `Usage: delego example [--dir DIR]

Writes delego's built-in example model, a tiny float32 image classifier
(CONV_2D, MAX_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX), with an input
picture and its labels, then runs it as

  delego run DIR/example.tflite --input DIR/input.raw --labels DIR/labels.txt --top 4

Flags:
  --dir DIR   keep the files in DIR (created if missing); by default they go
              to a temporary directory that is removed afterwards
`

func exampleCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("example")
	dir := fs.String("dir", "", "")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagError(fs, "example", exampleUsage, stdout, err)
	}
	if len(pos) > 0 {
		return usagef("example", "unexpected argument %q", pos[0])
	}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "delego-example-")
		if err != nil {
			return fmt.Errorf("example: %w", err)
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	} else if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("example: %w", err)
	}
	model, input, labels := modelbuild.Example()
	files := map[string][]byte{
		"example.tflite": model,
		"input.raw":      input,
		"labels.txt":     []byte(strings.Join(labels, "\n") + "\n"),
	}
	for name, data := range files {
		if err := fileio.WriteFile(ctx, filepath.Join(*dir, name), data, fileio.Options{}); err != nil {
			return fmt.Errorf("example: %w", err)
		}
	}
	fmt.Fprintf(stdout, "wrote the example model, input and labels to %s\n", *dir)
	return runCmd(ctx, []string{
		filepath.Join(*dir, "example.tflite"),
		"--input", filepath.Join(*dir, "input.raw"),
		"--labels", filepath.Join(*dir, "labels.txt"),
		"--top", "4",
	}, stdout, stderr)
}
