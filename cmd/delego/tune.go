package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/internal/fileio"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tune"
)

const tuneUsage = `Usage: delego tune MODEL --delegate A,B,... --out DIR [flags]

Tries each delegate on MODEL and picks the fastest that is correct, as
TensorFlow Lite's mini-benchmark does on Android. Each candidate runs alone,
one after the other, in a plugin process of its own (the binary
delego-NAME; "cpu" is delego's kernels, through delego-cpu when found):
delego starts it, compiles the model, runs --warmup untimed and --runs timed
Invokes, compares the outputs with delego's CPU kernels on the same inputs
and reads the plugin's peak memory. A candidate that cannot be had, fails,
crashes, hangs past --timeout or gives outputs beyond the thresholds is
recorded and never chosen. While a candidate is tried its fallback settings
are off, so a failure shows rather than running on the CPU.

Inputs, one way or another (default: pseudo-random, as "delego bench"):
  --input FILE       raw bytes of one input tensor, one per model input
  --image PICTURE    a picture for a model with one image input (see
                     "delego run -h"; --mean, --std for FLOAT32 inputs)
  --inputs-from DIR  the regular files of DIR, sorted by name, one per input
  --mean M           mean for FLOAT32 --image inputs (default 127.5)
  --std S            standard deviation for them (default 127.5)
  --resize FILTER    resize --image with Pillow's FILTER (see "delego run -h")
  --fit FIT          stretch or letterbox --image (see "delego run -h")
` + maxPixelsHelp + `
Writes into --out DIR (created if missing):
  events.jsonl   one TFLite BenchmarkEvent (configuration.proto) per line as
                 protobuf JSON: START, then END (result: initialization and
                 inference times in us, max_memory_kb, ok, metrics) or ERROR
                 (error: stage, error_code) per candidate, with its
                 tflite_settings, boottime_us and wallclock_us. A START
                 without an END or ERROR is a run that delego itself did
                 not survive.
  settings.json  the chosen candidate's ComputeSettings, for "delego run
                 --settings", delego.Open and config.Load (not written when
                 none can be chosen). It selects the delegate by its
                 delegate field (NONE: delego's CPU kernels), or, for a
                 plugin the enum cannot name, by
                 stable_delegate_loader_settings.delegate_name, with the
                 candidate's --delegate-option values as delegate_options.
and prints a table (candidate, ok, nodes delegated, accuracy, init ms, median
ms, p90 ms, peak memory) and the decision with its reason. A candidate whose
delegate ran none of the model's nodes is never chosen: its settings would
run the model on the CPU kernels without a word. On a terminal, a progress
line per candidate goes to standard error.

Flags:
  --delegate A,B,...  the candidates, in order (required)
  --out DIR           where events.jsonl and settings.json go (required)
  --settings FILE     the base TFLiteSettings (or ComputeSettings) of every
                      candidate; each gets its own delegate field
  --delegate-option NAME:KEY=VALUE
                      an option of the candidate NAME (repeatable), for its
                      tries and its settings.json
  --runs N            timed Invokes per candidate (default 20)
  --warmup N          untimed Invokes before them (default 3)
  --max-steps N       the largest difference allowed in an integer output,
                      in steps of its type (default 0: exact)
  --max-relative-error E
                      the largest difference allowed in a FLOAT32 output,
                      relative to the largest magnitude of the CPU's
                      (default 1e-4)
  --timeout DURATION  the longest any one call to a candidate may take: its
                      start, its compile or one Invoke (default: 30s for
                      the first Invoke, then 20 times the slowest so far,
                      at least 2s; 2 minutes to compile, 30s to start)
  --threads N         goroutines for delego's CPU kernels (the reference,
                      and nodes a delegate leaves on the CPU)
  --seed S            seed of the pseudo-random inputs (default 1)
  --cpu-twin FILE     not taken: tune compares every candidate with the CPU
                      on MODEL itself, so an Edge TPU model (which the CPU
                      cannot run) cannot be tuned yet
` + pluginFlagsHelp + `  -h                  show this help

Exit status 0 when a candidate was chosen, 1 when none could be.
`

// tuneFlags are the parsed flags of "delego tune".
type tuneFlags struct {
	model      string
	inputs     stringList
	image      string
	inputsFrom string
	out        string
	runs       int
	warmup     int
	threads    int
	seed       uint
	th         tune.Thresholds
	norm       adapters.Norm
	normGiven  bool
	maxPixels  int
	resize     resizeFlags
	delegation delegationFlags
}

func (f *tuneFlags) flagSet() *flag.FlagSet {
	fs := newFlagSet("tune")
	fs.Var(&f.inputs, "input", "")
	fs.StringVar(&f.image, "image", "", "")
	fs.StringVar(&f.inputsFrom, "inputs-from", "", "")
	fs.StringVar(&f.out, "out", "", "")
	fs.IntVar(&f.runs, "runs", tune.DefaultRuns, "")
	fs.IntVar(&f.warmup, "warmup", tune.DefaultWarmup, "")
	fs.IntVar(&f.threads, "threads", 0, "")
	fs.UintVar(&f.seed, "seed", 1, "")
	fs.Int64Var(&f.th.MaxSteps, "max-steps", tune.DefaultMaxSteps, "")
	fs.Float64Var(&f.th.MaxRelativeError, "max-relative-error", tune.DefaultMaxRelativeError, "")
	fs.Float64Var(&f.norm.Mean, "mean", adapters.DefaultMean, "")
	fs.Float64Var(&f.norm.Std, "std", adapters.DefaultStd, "")
	defineMaxPixels(fs, &f.maxPixels)
	f.resize.define(fs)
	f.delegation.define(fs)
	return fs
}

func parseTuneFlags(args []string, stdout io.Writer) (*tuneFlags, error) {
	f := &tuneFlags{}
	fs := f.flagSet()
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, flagError(fs, "tune", tuneUsage, stdout, err)
	}
	set := setFlags(fs)
	f.normGiven = set["mean"] || set["std"]
	given := 0
	for _, g := range []bool{len(f.inputs) > 0, f.image != "", f.inputsFrom != ""} {
		if g {
			given++
		}
	}
	switch {
	case len(pos) != 1:
		return nil, usagef("tune", "need exactly one MODEL argument, got %d: %q", len(pos), pos)
	case len(f.delegation.delegates) == 0:
		return nil, usagef("tune", "--delegate is required: the candidates to try")
	case f.out == "":
		return nil, usagef("tune", "--out DIR is required: where events.jsonl and settings.json go")
	case given > 1:
		return nil, usagef("tune", "--input, --image and --inputs-from cannot be used together")
	case f.normGiven && f.image == "":
		return nil, usagef("tune", "--mean and --std apply to --image only")
	case f.runs < 1:
		return nil, usagef("tune", "--runs must be at least 1, got %d", f.runs)
	case f.warmup < 0:
		return nil, usagef("tune", "--warmup must not be negative, got %d", f.warmup)
	case set["threads"] && f.threads < 1:
		return nil, usagef("tune", "--threads must be at least 1, got %d", f.threads)
	case f.delegation.twin != "":
		return nil, usagef("tune", "--cpu-twin: tune compares with the CPU on MODEL itself, so it cannot tune an Edge TPU model yet")
	case f.th.MaxSteps < 0 || !(f.th.MaxRelativeError >= 0):
		return nil, usagef("tune", "--max-steps and --max-relative-error must not be negative")
	}
	if err := checkMaxPixels("tune", set, f.maxPixels, f.image); err != nil {
		return nil, err
	}
	if err := f.resize.parse("tune", set, f.image); err != nil {
		return nil, err
	}
	f.model = pos[0]
	return f, nil
}

func tuneCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return tuneWith(ctx, args, stdout, stderr, env{})
}

// tuneWith is tuneCmd with the kernels and delegates of e.
func tuneWith(ctx context.Context, args []string, stdout, stderr io.Writer, e env) (err error) {
	f, err := parseTuneFlags(args, stdout)
	if err != nil || f == nil {
		return err
	}
	cfg, err := f.delegation.configure(ctx, "tune", f.threads, e, stderr)
	if err != nil {
		return err
	}
	if len(cfg.Delegates()) == 0 {
		return usagef("tune", "--delegate %s: tune needs at least one candidate", noDelegate)
	}
	m, err := model.LoadContext(ctx, f.model)
	if err != nil {
		return err
	}
	defer m.Close()
	data, err := f.readInputs(ctx, m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	// In place: events.jsonl shows how far a run got even when delego
	// itself does not survive it.
	events, err := fileio.Create(ctx, filepath.Join(f.out, "events.jsonl"), fileio.Options{InPlace: true})
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer events.Abort()

	opts := tune.Options{
		Candidates: cfg.Delegates(), Open: tune.Opener(cfg.Opener()), Settings: cfg.Settings(), DelegateOptions: cfg.DelegateOptions(), Inputs: data,
		Runs: f.runs, Warmup: max(f.warmup, 0), Threads: f.threads, Timeout: f.delegation.timeout, Thresholds: f.th,
		Event: func(ev *config.BenchmarkEvent) error { return tune.WriteEvent(events, ev) },
		Done:  progress(stderr),
	}
	if f.warmup == 0 {
		opts.Warmup = -1
	}
	r, err := tune.Run(ctx, m, opts)
	if err != nil {
		return err
	}
	if err := events.Commit(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := r.WriteText(stdout); err != nil {
		return err
	}
	if r.Best() == nil {
		return errors.New(r.Reason)
	}
	path := filepath.Join(f.out, "settings.json")
	if err := writeSettings(ctx, path, r.ComputeSettings()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "settings: %s\n", path)
	return nil
}

// readInputs reads the inputs the flags name, or makes pseudo-random ones.
func (f *tuneFlags) readInputs(ctx context.Context, m *model.Model) ([][]byte, error) {
	switch {
	case f.image != "":
		data, _, err := imageInputs(ctx, m, picture{path: f.image, norm: f.norm, normGiven: f.normGiven, maxPixels: f.maxPixels, resize: f.resize.resize, fit: f.resize.fit})
		return data, err
	case len(f.inputs) > 0:
		return readInputFiles(ctx, m, f.inputs)
	case f.inputsFrom != "":
		files, err := regularFiles(f.inputsFrom)
		if err != nil {
			return nil, fmt.Errorf("--inputs-from: %w", err)
		}
		return readInputFiles(ctx, m, files)
	}
	return adapters.RandomInputs(m, uint32(f.seed))
}

// regularFiles lists the regular files of dir, sorted by name.
func regularFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(files)
	return files, nil
}

// writeSettings writes cs as indented protobuf JSON, atomically.
func writeSettings(ctx context.Context, path string, cs *config.ComputeSettings) error {
	b, err := tune.MarshalSettings(cs)
	if err != nil {
		return err
	}
	if err := fileio.WriteFile(ctx, path, b, fileio.Options{}); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// progress returns the Done callback: one line per candidate on stderr when
// it is a terminal, nothing otherwise.
func progress(stderr io.Writer) func(*tune.Candidate) {
	f, ok := stderr.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return func(c *tune.Candidate) {
		fmt.Fprintf(stderr, "tune: %s: %s\n", c.Name, words.OneLine(c.Verdict()))
	}
}
