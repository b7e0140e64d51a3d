package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/delego/delego"
	"github.com/delego/delego/adapters"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/model"
)

const runUsage = `Usage: delego run MODEL (--input FILE... | --image PICTURE) [flags]
       delego run MODEL --signature NAME --input INPUT=FILE... [flags]

Runs MODEL (a .tflite file) once: on delego's CPU kernels, or with the
nodes a delegate supports on that delegate (see --delegate).

Inputs, one way or the other:
  --input FILE     raw little-endian bytes of one input tensor; give one
                   --input per model input, in the model's input order. Each
                   file must hold exactly the tensor's size. For a STRING
                   input: text with one string per line (a final newline is
                   optional, a \r before a newline is dropped), or, in a
                   file named *.json, a JSON list of strings; as many
                   strings as the tensor has elements.
  --image PICTURE  a PNG, JPEG or BMP picture for a model with one input of
                   shape [1,H,W,C], C = 1 or 3. By default (see --resize)
                   the picture is resized to HxW by nearest neighbour
                   (output pixel (y,x) = source pixel (min(h-1, y*h/H),
                   min(w-1, x*w/W)), integer division, rows from the top)
                   and taken as RGB; alpha is ignored. For C = 1 the luma
                   Y = (299 R + 587 G + 114 B + 500) / 1000 (rounded to
                   nearest) is used, or the pixels of a grayscale picture
                   as they are. Values by input type: UINT8 the pixel p,
                   INT8 p-128, FLOAT32 (p-mean)/std. --resize lanczos gives
                   the bytes pycoral's classify_image.py feeds.
  --signature NAME run the model's signature def NAME (delego inspect lists
                   them) instead of its own inputs and outputs: give each of
                   the signature's inputs as --input INPUT=FILE, INPUT its
                   name in the signature, FILE as above. Its outputs are
                   reported, written and named in the signature's order and
                   by its names. A signature over another subgraph than the
                   first runs on the CPU kernels.
  --mean M         mean for FLOAT32 image inputs (default 127.5)
  --std S          standard deviation for FLOAT32 image inputs (default 127.5)
` + resizeHelp + maxPixelsHelp + `
Outputs:
  --output FILE    write every output tensor's raw bytes, concatenated in the
                   model's output order, to FILE (a STRING output's bytes
                   are TFLite's string buffer: count, offsets, bytes). A regular file (or a new
                   one) is written to a temporary name and renamed, so a
                   failed run leaves no partial output; a FIFO (waiting for
                   its reader) or a character device such as /dev/stdout is
                   written in place; anything else is refused before the
                   model runs. Without --output, --json, --task or --top
                   (or --labels), a summary of each output is printed: name,
                   type, shape, quantization and its first values.
  --json           print every output tensor as JSON on standard output:
                   index, name, type, shape (as after Invoke), quantization,
                   all its values and, for a quantized tensor, its
                   dequantized values beside them (a STRING tensor's values
                   are its strings; float values JSON cannot
                   hold are the strings "NaN", "Inf", "-Inf"); with --task or
                   --top, "task" and "results" too.
  --task NAME      read the outputs as a common head, as pycoral's adapters
                   do, and print the results:
                     classify  the top classes of output 0 (--top, default 5)
                     detect    TFLite_Detection_PostProcess outputs (SSD): the
                               objects with class, label, score and box
                               (ymin, xmin, ymax, xmax)
                     pose      PosenetDecoderOp outputs (PoseNet), or the one
                               output of a single-pose MoveNet: the poses,
                               each with score and 17 keypoints (y, x, score)
                     segment   output 0 as per-pixel classes ([1,H,W] class
                               ids, or [1,H,W,C] scores): the classes present
                               and their areas; --json gives every pixel's
                   Boxes and keypoints are in the pixels of the --image
                   picture; without --image, boxes are normalised (0 to 1)
                   and keypoints in the model input's pixels.
  --labels FILE    labels: line N is the label of class N, or lines "ID
                   label". Alone, it means --task classify.
  --top K          the K highest classes of output 0 (--task classify): their
                   dequantized score, class index and label, highest first,
                   equal scores by higher class index first, as libcoral.
  --threshold T    the lowest score a class, object or pose needs to be
                   reported (default: every one the model gives)

Delegates:
` + delegationHelp + twinOnlyHelp + `
Other flags:
  --threads N      goroutines a kernel may use (default: the settings'
                   cpu_settings.num_threads when positive, else 1)
  -v               report timings, tensors, the plan (delegates, partitions)
                   and every fallback on standard error, and stream each
                   plugin's standard error there, its lines after its name
                   ("[xnnpack] ..."; without -v it is hidden unless the
                   plugin crashes)
  -h               show this help

When a delegate fails and the fallback settings let the CPU take over, the
run succeeds and one line on standard error says that the result came
(partly) from the CPU fallback; -v says which partition fell back and why.
For an Edge TPU model the CPU runs its twin (see --cpu-twin), and the line
names it.

Flags may come before or after MODEL.
`

// runFlags are the parsed flags of "delego run".
type runFlags struct {
	model      string
	inputs     stringList
	image      string
	threads    int
	verbose    bool
	delegation delegationFlags
	norm       adapters.Norm
	normGiven  bool
	maxPixels  int
	resize     resizeFlags
	signature  string
	resultFlags
}

// flagSet defines the flags of "delego run" on f.
func (f *runFlags) flagSet() *flag.FlagSet {
	fs := newFlagSet("run")
	fs.Var(&f.inputs, "input", "")
	fs.StringVar(&f.signature, "signature", "", "")
	fs.StringVar(&f.image, "image", "", "")
	f.resultFlags.define(fs)
	fs.IntVar(&f.threads, "threads", 0, "") // 0: not given: the settings', else 1
	fs.BoolVar(&f.verbose, "v", false, "")
	f.delegation.define(fs)
	f.delegation.defineTwinOnly(fs)
	fs.Float64Var(&f.norm.Mean, "mean", adapters.DefaultMean, "")
	fs.Float64Var(&f.norm.Std, "std", adapters.DefaultStd, "")
	defineMaxPixels(fs, &f.maxPixels)
	f.resize.define(fs)
	return fs
}

func parseRunFlags(args []string, stdout io.Writer) (*runFlags, error) {
	f := &runFlags{}
	fs := f.flagSet()
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, flagError(fs, "run", runUsage, stdout, err)
	}
	set := setFlags(fs)
	f.normGiven = set["mean"] || set["std"]
	switch {
	case len(pos) != 1:
		return nil, usagef("run", "need exactly one MODEL argument, got %d: %q", len(pos), pos)
	case f.image != "" && len(f.inputs) > 0:
		return nil, usagef("run", "--image and --input cannot be used together")
	case f.normGiven && f.image == "":
		return nil, usagef("run", "--mean and --std apply to --image only")
	case f.norm.Std == 0:
		return nil, usagef("run", "--std must not be 0")
	case set["threads"] && f.threads < 1:
		return nil, usagef("run", "--threads must be at least 1, got %d", f.threads)
	case f.signature != "" && f.image != "":
		return nil, usagef("run", "--image feeds the model's own inputs; with --signature, give --input NAME=FILE")
	case f.signature != "" && (f.task != "" || set["top"] || f.labels != ""):
		return nil, usagef("run", "--task, --top and --labels read the model's own outputs; they do not apply to --signature")
	}
	if err := checkMaxPixels("run", set, f.maxPixels, f.image); err != nil {
		return nil, err
	}
	if err := f.resize.parse("run", set, f.image); err != nil {
		return nil, err
	}
	if err := f.resultFlags.check("run", set); err != nil {
		return nil, err
	}
	f.model = pos[0]
	return f, nil
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runWith(ctx, args, stdout, stderr, env{})
}

// runWith is runCmd with the kernels and delegates of e.
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, e env) (err error) {
	f, err := parseRunFlags(args, stdout)
	if err != nil || f == nil {
		return err
	}
	stderr, logs := withPluginLogs(f.verbose, stderr)
	if f.model, err = f.delegation.model("run", f.model, stderr); err != nil {
		return err
	}
	cfg, err := f.delegation.configure(ctx, "run", f.threads, e, stderr, logs...)
	if err != nil {
		return err
	}
	r := &runner{f: f, stderr: stderr}
	m, err := r.load(ctx)
	if err != nil {
		return err
	}
	defer m.Close() // after the interpreter
	in, err := f.readInputs(ctx, m, r.logf)
	if err != nil {
		return err
	}
	out, err := f.createOutput(ctx)
	if err != nil {
		return err
	}
	if out != nil {
		defer out.Abort()
	}
	it, err := r.open(ctx, cfg, m)
	if err != nil {
		return err
	}
	defer closeAfter(&err, stderr, "closing the interpreter", it)
	outs, err := r.invoke(ctx, it, in.data)
	if err != nil {
		return err
	}
	// The task's results come first: a run whose outputs cannot be read
	// as asked fails before --output appears.
	results, err := f.results(it.Interpreter, outs, adapters.TaskOptions{Labels: in.labels, Frame: in.frame, Input: adapters.InputFrame(it.Interpreter)})
	if err != nil {
		return err
	}
	if out != nil {
		n, err := writeOutputs(out, outs)
		if err != nil {
			return err
		}
		r.logf("wrote %d bytes (%s) to %s", n, words.Plural(len(outs), "output", "outputs"), f.output)
	}
	return report(stdout, f, outs, results)
}

// runner carries one "delego run" through its steps, with its flags and
// where its log goes.
type runner struct {
	f      *runFlags
	stderr io.Writer
}

// logf writes one line of the -v log to standard error.
func (r *runner) logf(format string, a ...any) {
	if r.f.verbose {
		fmt.Fprintf(r.stderr, format+"\n", a...)
	}
}

// load loads the model file.
func (r *runner) load(ctx context.Context) (*model.Model, error) {
	start := time.Now()
	m, err := model.LoadContext(ctx, r.f.model)
	if err != nil {
		return nil, err
	}
	r.logf("loaded %s in %s", r.f.model, time.Since(start).Round(time.Microsecond))
	return m, nil
}

// open opens the interpreter of m with cfg and logs what it got.
func (r *runner) open(ctx context.Context, cfg *delego.Config, m *model.Model) (*delego.Interpreter, error) {
	start := time.Now()
	it, err := openModel(ctx, cfg, m, r.stderr)
	if err != nil {
		return nil, err
	}
	del := it.Delegates()
	r.logf("interpreter ready in %s (%d threads, arena %d bytes)", time.Since(start).Round(time.Microsecond), del.Threads, it.ArenaBytes())
	for i, d := range del.Delegates {
		r.logf("delegate %s: %s", del.Names[i], delegateOrigin(d))
	}
	if r.f.verbose {
		fmt.Fprint(r.stderr, it.Report().Outline())
	}
	return it, nil
}

// invoke sets data as the inputs, of the model or of --signature's
// runner, runs it once, says how it went and returns the outputs it gave.
func (r *runner) invoke(ctx context.Context, it *delego.Interpreter, data [][]byte) ([]adapters.Output, error) {
	invoke := it.Invoke
	outputs := func() ([]adapters.Output, error) { return adapters.Outputs(it.Interpreter), nil }
	if r.f.signature != "" {
		s, err := prepareSignature(it.Interpreter, r.f.signature, data)
		if err != nil {
			return nil, err
		}
		invoke = s.Invoke
		outputs = func() ([]adapters.Output, error) { return adapters.SignatureOutputs(s) }
	} else if err := it.SetInputs(data); err != nil {
		return nil, err
	}
	start := time.Now()
	err := invoke(ctx)
	reportOutcome(r.stderr, it, r.f.verbose)
	if err != nil {
		return nil, fmt.Errorf("invoke: %w", err)
	}
	r.logf("invoke took %s", time.Since(start).Round(time.Microsecond))
	return outputs()
}

// report prints what the run gives on stdout: the JSON report of outs, the
// task's results, or (without --output) a summary of each of outs.
func report(stdout io.Writer, f *runFlags, outs []adapters.Output, results *adapters.Results) error {
	if f.json {
		return writeJSON(stdout, runJSON{Model: f.model, Signature: f.signature, outputsJSON: f.outputsOf(outs, results)})
	}
	return f.writeText(stdout, outs, results)
}
