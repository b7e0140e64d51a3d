package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/delego/delego"
	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/model"
	"github.com/delego/delego/pipeline"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"google.golang.org/protobuf/proto"
)

const pipelineUsage = `Usage: delego pipeline SEGMENT... (--input FILE... | --image PICTURE...) [flags]

Runs a model cut into segments (edgetpu_compiler --num_segments N writes
foo_segment_0_of_N_edgetpu.tflite, ...) as a pipeline, as Coral's
PipelinedModelRunner does: each segment on its own interpreter and Edge
TPU, so that while segment 1 runs one input, segment 0 runs the next. Give
the segments in order; tensors pass from one to the next by name.

The inputs are a stream: several --image pictures, or --input files in
groups of the first segment's inputs, each group one input of the stream,
in order. It runs each input through the segments one after the other once
(which also loads each segment's parameters onto its device), then --runs
inputs one after the other (the sequential run), then --runs inputs through
the pipeline, run i taking input i of the stream (after the last input,
the first again). Every
pipelined output must equal its input's sequential one, byte for byte, or
the command fails. It reports both throughputs, each segment's latency in
the pipeline (inputs in, Invoke, outputs out), and the last segment's
outputs for each input of the stream, in order, as --output, --json and
--task say.

Devices: the delegate is edgetpu unless --delegate or the settings say
otherwise. Segment K runs on Edge TPU usb:K (coral_settings.device); with
fewer devices than segments, on usb:(K mod D), segments sharing a device
taking turns on it. --devices names them instead. The edgetpu delegate is
one plugin process for every segment. DELEGO_EDGETPU_DEVICE=sim:N
simulates N devices (the outputs are then the simulator's); a simulated
device takes no time of its own unless asked, as sim:2:busy=20ms does
(each invoke 20 ms on its device), so only then do its figures show what
several devices give.

Flags:
  --input FILE     raw bytes of one input of the first segment; one --input
                   per input, in order (as "delego run" reads them), and
                   again for each further input of the stream
  --image PICTURE  a picture for a first segment with one image input (as
                   "delego run" reads it); one --image per input of the
                   stream
  --resize FILTER  resize --image with Pillow's FILTER (see "delego run -h")
  --fit FIT        stretch or letterbox --image (see "delego run -h")
` + maxPixelsHelp + `  --runs N         inputs pushed through the pipeline, and run one after
                   the other (default 20, or the stream's length when it is
                   longer; at least the stream's length)
  --in-flight N    the most inputs in the pipeline at once: pushing waits
                   while it holds that many (default: 2 per segment)
  --devices LIST   the Edge TPU of each segment, comma-separated, as
                   coral_settings.device names them (usb:0,usb:1)
  --output FILE    write the last segment's output tensors' raw bytes, for
                   each input of the stream in order, concatenated, to FILE
  --json           print one JSON object instead of text, with every output
                   of each input of the stream
  --task NAME      read each input's outputs as a common head and print the
                   results: classify, detect, pose or segment
  --labels FILE, --top K, --threshold T
                   as "delego run" takes them. --output, --json, --task and
                   these read the last segment's outputs as "delego run"
                   reads a model's (see "delego run -h"); boxes and
                   keypoints are in the pixels of each input's --image
                   picture
  -v               say which delegate runs where, on standard error, and
                   stream each plugin's standard error there, its lines
                   after its name ("[edgetpu] ...")
  -h               show this help

Delegates:
` + delegationHelp + `
JSON fields (stable):
  segments[]        model, device, runs, mean_ms, min_ms, max_ms
  runs, max_in_flight
  sequential        runs, seconds, per_second: the segments one after the
                    other
  pipelined         runs, seconds, per_second
  speedup           pipelined per_second over sequential per_second
  simulated         DELEGO_EDGETPU_DEVICE when it simulates the devices
  outputs[]         the last segment's outputs: name, type, shape
  items[]           each input of the stream, in order: inputs (its files),
                    outputs (as "delego run --json" gives them), and with
                    --task, task and results
`

// pipelineFlags are the parsed flags of "delego pipeline".
type pipelineFlags struct {
	segments   []string
	inputs     stringList
	images     stringList
	maxPixels  int
	resize     resizeFlags
	runs       int
	runsGiven  bool
	inFlight   int
	devices    string
	verbose    bool
	delegation delegationFlags
	resultFlags
}

func parsePipelineFlags(args []string, stdout io.Writer) (*pipelineFlags, error) {
	f := &pipelineFlags{}
	fs := newFlagSet("pipeline")
	fs.Var(&f.inputs, "input", "")
	fs.Var(&f.images, "image", "")
	defineMaxPixels(fs, &f.maxPixels)
	f.resize.define(fs)
	fs.IntVar(&f.runs, "runs", 20, "")
	fs.IntVar(&f.inFlight, "in-flight", 0, "")
	fs.StringVar(&f.devices, "devices", "", "")
	fs.BoolVar(&f.verbose, "v", false, "")
	f.delegation.define(fs)
	f.resultFlags.define(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, flagError(fs, "pipeline", pipelineUsage, stdout, err)
	}
	switch {
	case len(pos) == 0:
		return nil, usagef("pipeline", "need the segments, in order: SEGMENT...")
	case len(f.images) > 0 && len(f.inputs) > 0:
		return nil, usagef("pipeline", "--image and --input cannot be used together")
	case len(f.images) == 0 && len(f.inputs) == 0:
		return nil, usagef("pipeline", "need --input FILE... or --image PICTURE... for the first segment")
	case f.runs < 1:
		return nil, usagef("pipeline", "--runs must be at least 1, got %d", f.runs)
	case f.inFlight < 0:
		return nil, usagef("pipeline", "--in-flight must not be negative, got %d", f.inFlight)
	}
	set := setFlags(fs)
	if err := checkMaxPixels("pipeline", set, f.maxPixels, f.images.String()); err != nil {
		return nil, err
	}
	if err := f.resize.parse("pipeline", set, f.images.String()); err != nil {
		return nil, err
	}
	if err := f.resultFlags.check("pipeline", set); err != nil {
		return nil, err
	}
	f.runsGiven = set["runs"]
	f.segments = pos
	return f, nil
}

// pipelineReport is what "delego pipeline" prints.
type pipelineReport struct {
	Segments    []segmentReport     `json:"segments"`
	Runs        int                 `json:"runs"`
	MaxInFlight int                 `json:"max_in_flight"`
	Sequential  pipeline.Throughput `json:"sequential"`
	Pipelined   pipeline.Throughput `json:"pipelined"`
	Speedup     float64             `json:"speedup"`
	Simulated   string              `json:"simulated,omitempty"`
	Outputs     []pipelineOutput    `json:"outputs"`
	Items       []itemJSON          `json:"items,omitempty"`
}

// itemJSON is one input of the stream in the JSON report: its files, and
// the last segment's outputs for it as "delego run --json" gives them.
type itemJSON struct {
	Inputs []string `json:"inputs"`
	outputsJSON
}

type segmentReport struct {
	Model  string  `json:"model"`
	Device string  `json:"device,omitempty"`
	Runs   int     `json:"runs"`
	MeanMs float64 `json:"mean_ms"`
	MinMs  float64 `json:"min_ms"`
	MaxMs  float64 `json:"max_ms"`
}

type pipelineOutput struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Shape []int  `json:"shape"`
}

func pipelineCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return pipelineWith(ctx, args, stdout, stderr, env{})
}

// pipelineWith is pipelineCmd with the kernels and delegates of e.
func pipelineWith(ctx context.Context, args []string, stdout, stderr io.Writer, e env) (err error) {
	f, err := parsePipelineFlags(args, stdout)
	if err != nil || f == nil {
		return err
	}
	stderr, more := withPluginLogs(f.verbose, stderr)
	if len(f.delegation.delegates) == 0 {
		more = append(more, delego.WithDefaultDelegates(edgetpuinfo.Name))
	}
	cfg, err := f.delegation.configure(ctx, "pipeline", 0, e, stderr, more...)
	if err != nil {
		return err
	}
	models, err := loadSegments(ctx, f.segments)
	if err != nil {
		return err
	}
	defer closeModels(models)
	stream, err := streamInputs(ctx, models[0], f)
	if err != nil {
		return err
	}
	if err := f.setRuns(len(stream)); err != nil {
		return err
	}
	labels, err := f.prepare(ctx, models[len(models)-1])
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
	devices, err := segmentDevices(ctx, f, len(models), cfg, e)
	if err != nil {
		return err
	}
	segs, err := openSegments(ctx, cfg, models, devices, stderr)
	for k, s := range segs {
		defer closeAfter(&err, stderr, fmt.Sprintf("closing segment %d", k), s)
	}
	if err != nil {
		return err
	}
	its := cores(segs)
	r, outs, err := runPipeline(ctx, its, stream, f)
	if err != nil {
		return nameSegment(err, f.segments)
	}
	for k := range r.Segments {
		r.Segments[k].Model, r.Segments[k].Device = f.segments[k], devices[k]
	}
	r.Simulated = noteSimulated(stderr, cfg.Delegates())
	results, err := f.streamResults(its, stream, outs, labels)
	if err != nil {
		return err
	}
	if out != nil {
		if _, err := writeOutputs(out, outs...); err != nil {
			return err
		}
	}
	return f.report(stdout, r, stream, outs, results)
}

// setRuns makes --runs cover a stream of n inputs: when not given, 20 or
// n, whichever is more; given, it must be at least n.
func (f *pipelineFlags) setRuns(n int) error {
	if !f.runsGiven {
		f.runs = max(f.runs, n)
	} else if f.runs < n {
		return usagef("pipeline", "--runs %d is fewer than the %d inputs of the stream: each input needs a run", f.runs, n)
	}
	return nil
}

// cores are the interpreters of segs.
func cores(segs []*delego.Interpreter) []*core.Interpreter {
	its := make([]*core.Interpreter, len(segs))
	for k, s := range segs {
		its[k] = s.Interpreter
	}
	return its
}

// openSegments makes each segment's interpreter, its Edge TPU nodes on its
// device; it returns those it made, the last of which may have failed.
func openSegments(ctx context.Context, cfg *delego.Config, models []*model.Model, devices []string, stderr io.Writer) ([]*delego.Interpreter, error) {
	var segs []*delego.Interpreter
	for k, m := range models {
		it, err := openModel(ctx, cfg.OnSettings(onDevice(cfg.Settings(), devices[k])), m, stderr)
		if err != nil {
			return segs, fmt.Errorf("segment %d (%s): %w", k, m.Path(), err)
		}
		segs = append(segs, it)
	}
	return segs, nil
}

// noteSimulated says on stderr when the edgetpu delegate runs on simulated
// devices, and returns DELEGO_EDGETPU_DEVICE then ("" otherwise).
func noteSimulated(stderr io.Writer, delegates []string) string {
	dev := os.Getenv(edgetpuinfo.EnvDevice)
	if !strings.HasPrefix(dev, "sim") || !slices.Contains(delegates, edgetpuinfo.Name) {
		return ""
	}
	fmt.Fprintf(stderr, "delego: the Edge TPUs are simulated (%s=%s): the outputs of edgetpu-custom-op are the simulator's, not the model's results\n",
		edgetpuinfo.EnvDevice, dev)
	return dev
}

// nameSegment prefixes the error of a segment that failed with its file.
func nameSegment(err error, paths []string) error {
	var serr *pipeline.SegmentError
	if errors.As(err, &serr) && serr.Segment < len(paths) {
		return fmt.Errorf("%s: %w", paths[serr.Segment], err)
	}
	return err
}

// loadSegments loads the segment models; on an error it closes those loaded.
func loadSegments(ctx context.Context, paths []string) ([]*model.Model, error) {
	var models []*model.Model
	for k, p := range paths {
		m, err := model.LoadContext(ctx, p)
		if err != nil {
			closeModels(models)
			return nil, fmt.Errorf("segment %d: %w", k, err)
		}
		models = append(models, m)
	}
	return models, nil
}

func closeModels(models []*model.Model) {
	for _, m := range models {
		m.Close()
	}
}

// streamInput is one input of the stream: the files it comes from, the
// first segment's inputs and, for an --image, the picture's frame.
type streamInput struct {
	files []string
	data  [][]byte
	frame adapters.Frame
}

// streamInputs are the inputs of the stream, in order: one per --image, or
// one per group of --input files, as many files as m, the first segment,
// has inputs.
func streamInputs(ctx context.Context, m *model.Model, f *pipelineFlags) ([]streamInput, error) {
	var stream []streamInput
	for _, path := range f.images {
		data, frame, err := imageInputs(ctx, m, picture{path: path, norm: adapters.Norm{Mean: adapters.DefaultMean, Std: adapters.DefaultStd}, maxPixels: f.maxPixels, resize: f.resize.resize, fit: f.resize.fit})
		if err != nil {
			return nil, err
		}
		stream = append(stream, streamInput{files: []string{path}, data: data, frame: frame})
	}
	n := len(adapters.ModelInputs(m))
	if len(f.inputs) > 0 && (n == 0 || len(f.inputs)%n != 0) {
		return nil, fmt.Errorf("the first segment takes %s, so --input files come in groups of %d, one group per input of the stream; got %s",
			words.Plural(n, "input", "inputs"), n, words.Plural(len(f.inputs), "file", "files"))
	}
	for group := range slices.Chunk([]string(f.inputs), max(n, 1)) {
		data, err := readInputFiles(ctx, m, group)
		if err != nil {
			return nil, err
		}
		stream = append(stream, streamInput{files: group, data: data})
	}
	return stream, nil
}

// segmentDevices are the coral_settings.device of each segment: --devices,
// else usb:K, or usb:(K mod D) when D devices are found and fewer than the
// segments. Without the edgetpu delegate in sel, none.
func segmentDevices(ctx context.Context, f *pipelineFlags, n int, cfg *delego.Config, e env) ([]string, error) {
	devices := make([]string, n)
	if f.devices != "" {
		names := strings.Split(f.devices, ",")
		if len(names) != n {
			return nil, usagef("pipeline", "--devices names %d devices for %d segments", len(names), n)
		}
		return names, nil
	}
	if !slices.Contains(cfg.Delegates(), edgetpuinfo.Name) {
		return devices, nil
	}
	host, err := f.delegation.plugins.host()
	if err != nil {
		return nil, err
	}
	found, err := e.listDevices(ctx, host)
	if err != nil {
		return nil, err
	}
	d := max(len(found.Devices), 1)
	for k := range devices {
		devices[k] = fmt.Sprintf("usb:%d", k%min(d, n))
	}
	return devices, nil
}

// onDevice is settings with coral_settings.device set to device ("": as
// they are).
func onDevice(settings *config.TFLiteSettings, device string) *config.TFLiteSettings {
	if device == "" {
		return settings
	}
	s := proto.CloneOf(settings)
	if s.CoralSettings == nil {
		s.CoralSettings = &config.CoralSettings{}
	}
	s.CoralSettings.Device = proto.String(device)
	return s
}
