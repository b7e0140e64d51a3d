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
	"github.com/delego/delego/model"
	"github.com/delego/delego/pipeline"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"google.golang.org/protobuf/proto"
)

const pipelineUsage = `Usage: delego pipeline SEGMENT... (--input FILE... | --image PICTURE) [flags]

Runs a model cut into segments (edgetpu_compiler --num_segments N writes
foo_segment_0_of_N_edgetpu.tflite, ...) as a pipeline, as Coral's
PipelinedModelRunner does: each segment on its own interpreter and Edge
TPU, so that while segment 1 runs one input, segment 0 runs the next. Give
the segments in order; tensors pass from one to the next by name.

It runs the input through the segments one after the other once (which
also loads each segment's parameters onto its device), then --runs times
one after the other (the sequential run), then --runs times through the
pipeline. Every pipelined output must equal the sequential one, byte for
byte, or the command fails. It reports both throughputs and each
segment's latency in the pipeline (inputs in, Invoke, outputs out).

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
                   per input, in order (as "delego run" reads them)
  --image PICTURE  a picture for a first segment with one image input (as
                   "delego run" reads it)
  --resize FILTER  resize --image with Pillow's FILTER (see "delego run -h")
  --fit FIT        stretch or letterbox --image (see "delego run -h")
` + maxPixelsHelp + `  --runs N         inputs pushed through the pipeline, and run one after
                   the other (default 20)
  --in-flight N    the most inputs in the pipeline at once: pushing waits
                   while it holds that many (default: 2 per segment)
  --devices LIST   the Edge TPU of each segment, comma-separated, as
                   coral_settings.device names them (usb:0,usb:1)
  --json           print one JSON object instead of text
  -v               say which delegate runs where, on standard error
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
`

// pipelineFlags are the parsed flags of "delego pipeline".
type pipelineFlags struct {
	segments   []string
	inputs     stringList
	image      string
	maxPixels  int
	resize     resizeFlags
	runs       int
	inFlight   int
	devices    string
	asJSON     bool
	verbose    bool
	delegation delegationFlags
}

func parsePipelineFlags(args []string, stdout io.Writer) (*pipelineFlags, error) {
	f := &pipelineFlags{}
	fs := newFlagSet("pipeline")
	fs.Var(&f.inputs, "input", "")
	fs.StringVar(&f.image, "image", "", "")
	defineMaxPixels(fs, &f.maxPixels)
	f.resize.define(fs)
	fs.IntVar(&f.runs, "runs", 20, "")
	fs.IntVar(&f.inFlight, "in-flight", 0, "")
	fs.StringVar(&f.devices, "devices", "", "")
	fs.BoolVar(&f.asJSON, "json", false, "")
	fs.BoolVar(&f.verbose, "v", false, "")
	f.delegation.define(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, flagError(fs, "pipeline", pipelineUsage, stdout, err)
	}
	switch {
	case len(pos) == 0:
		return nil, usagef("pipeline", "need the segments, in order: SEGMENT...")
	case f.image != "" && len(f.inputs) > 0:
		return nil, usagef("pipeline", "--image and --input cannot be used together")
	case f.image == "" && len(f.inputs) == 0:
		return nil, usagef("pipeline", "need --input FILE... or --image PICTURE for the first segment")
	case f.runs < 1:
		return nil, usagef("pipeline", "--runs must be at least 1, got %d", f.runs)
	case f.inFlight < 0:
		return nil, usagef("pipeline", "--in-flight must not be negative, got %d", f.inFlight)
	}
	if err := checkMaxPixels("pipeline", setFlags(fs), f.maxPixels, f.image); err != nil {
		return nil, err
	}
	if err := f.resize.parse("pipeline", setFlags(fs), f.image); err != nil {
		return nil, err
	}
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
	var tpu []delego.Option
	if len(f.delegation.delegates) == 0 {
		tpu = append(tpu, delego.WithDefaultDelegates(edgetpuinfo.Name))
	}
	cfg, err := f.delegation.configure(ctx, "pipeline", 0, e, stderr, tpu...)
	if err != nil {
		return err
	}
	models, err := loadSegments(ctx, f.segments)
	if err != nil {
		return err
	}
	defer closeModels(models)
	data, err := segmentInputs(ctx, models[0], f)
	if err != nil {
		return err
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
	r, err := runPipeline(ctx, cores(segs), data, f)
	if err != nil {
		return nameSegment(err, f.segments)
	}
	for k := range r.Segments {
		r.Segments[k].Model, r.Segments[k].Device = f.segments[k], devices[k]
	}
	r.Simulated = noteSimulated(stderr, cfg.Delegates())
	if f.asJSON {
		return writeJSON(stdout, r)
	}
	return printPipeline(stdout, r, segs[len(segs)-1].Interpreter)
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

// segmentInputs are the first segment's inputs from --input or --image.
func segmentInputs(ctx context.Context, m *model.Model, f *pipelineFlags) ([][]byte, error) {
	if f.image != "" {
		ins, _, err := imageInputs(ctx, m, picture{path: f.image, norm: adapters.Norm{Mean: adapters.DefaultMean, Std: adapters.DefaultStd}, maxPixels: f.maxPixels, resize: f.resize.resize, fit: f.resize.fit})
		return ins, err
	}
	return readInputFiles(ctx, m, f.inputs)
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
