package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// This file prints what "delego run" computed: every output tensor as
// JSON (--json), and the outputs read as a common head (--task, --top),
// through the adapters package.

// The tasks of --task.
const (
	taskClassify = "classify"
	taskDetect   = "detect"
	taskPose     = "pose"
	taskSegment  = "segment"
)

// noThreshold keeps every result, NaN scores included.
func noThreshold() float32 { return float32(math.Inf(-1)) }

// runJSON is the report of "delego run --json".
type runJSON struct {
	Model   string       `json:"model"`
	Outputs []outputJSON `json:"outputs"`
	Task    string       `json:"task,omitempty"`
	// Results is the task's: classes, objects, poses, or a segmentation.
	Results any `json:"results,omitempty"`
}

// outputJSON is one output tensor with its values. Float values that JSON
// cannot hold are the strings "NaN", "Inf" and "-Inf".
type outputJSON struct {
	Index        int                 `json:"index"`
	Name         string              `json:"name"`
	Type         string              `json:"type"`
	Shape        []int               `json:"shape"`
	Quantization *model.QuantSummary `json:"quantization,omitempty"`
	Values       json.RawMessage     `json:"values"`
	Dequantized  json.RawMessage     `json:"dequantized,omitempty"`
}

// segmentJSON is the result of --task segment.
type segmentJSON struct {
	Height  int                  `json:"height"`
	Width   int                  `json:"width"`
	Areas   []adapters.ClassArea `json:"areas"`
	Classes []int                `json:"classes"` // row by row
}

// outputsJSON describes every output of it as it is after Invoke.
func outputsJSON(it *core.Interpreter) []outputJSON {
	outs := make([]outputJSON, it.NumOutputs())
	for i := range outs {
		t := it.Output(i)
		o := outputJSON{Index: i, Name: t.Name(), Type: t.Type().String(), Shape: t.Shape(), Values: valuesJSON(t.Type(), t.Data())}
		if o.Shape == nil {
			o.Shape = []int{}
		}
		if q := t.Quantization(); q != nil && len(q.Scale) > 0 {
			o.Quantization = &model.QuantSummary{Scale: q.Scale, ZeroPoint: q.ZeroPoint, Axis: q.Axis, PerChannel: q.PerChannel()}
			if t.Type() != tensor.Float32 {
				if v := t.Dequantize(); v != nil {
					o.Dequantized = floatsJSON(v)
				}
			}
		}
		outs[i] = o
	}
	return outs
}

// valuesJSON writes little-endian tensor data as a JSON array of numbers
// (booleans for BOOL); data of a type without a fixed size (STRING) or
// without a number form (complex) is a string of hex bytes.
func valuesJSON(typ tensor.DType, data []byte) json.RawMessage {
	size := typ.Size()
	if size == 0 || typ == tensor.Complex64 || typ == tensor.Complex128 {
		return json.RawMessage(strconv.Quote(fmt.Sprintf("%x", data)))
	}
	le := binary.LittleEndian
	b := []byte{'['}
	for i := 0; i+size <= len(data); i += size {
		if i > 0 {
			b = append(b, ',')
		}
		e := data[i : i+size]
		switch typ {
		case tensor.Float32:
			b = appendFloat(b, float64(math.Float32frombits(le.Uint32(e))), 32)
		case tensor.Float64:
			b = appendFloat(b, math.Float64frombits(le.Uint64(e)), 64)
		case tensor.Float16:
			b = appendFloat(b, float64(tensor.Float16ToFloat32(le.Uint16(e))), 32)
		default:
			b = append(b, tensor.FormatValue(typ, e)...)
		}
	}
	return append(b, ']')
}

// floatsJSON writes float32 values as a JSON array.
func floatsJSON(v []float32) json.RawMessage {
	b := []byte{'['}
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, float64(f), 32)
	}
	return append(b, ']')
}

// appendFloat appends f in its shortest form for its precision, or as the
// string "NaN", "Inf" or "-Inf".
func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// taskInput is what a task needs beyond the outputs.
type taskInput struct {
	top       int
	threshold float32
	labels    adapters.Labels
	input     adapters.Frame // the model input's size
	frame     adapters.Frame // where coordinates go: the picture, else zero
}

// outputTensors returns every output of it for the adapters.
func outputTensors(it *core.Interpreter) []adapters.Tensor {
	outs := make([]adapters.Tensor, it.NumOutputs())
	for i := range outs {
		outs[i] = it.Output(i)
	}
	return outs
}

// taskResults reads the outputs of it as task's head.
func taskResults(task string, it *core.Interpreter, in taskInput) (any, error) {
	r, err := readTask(task, it, in)
	if err != nil {
		return nil, fmt.Errorf("--task %s: %w", task, err)
	}
	return r, nil
}

// readTask is taskResults without the error's prefix.
func readTask(task string, it *core.Interpreter, in taskInput) (any, error) {
	outs := outputTensors(it)
	if len(outs) == 0 {
		return nil, errors.New("the model has no outputs")
	}
	switch task {
	case taskClassify:
		scores := outs[0].Dequantize()
		if scores == nil {
			return nil, fmt.Errorf("output 0 %q is %s, which has no numeric scores", it.Output(0).Name(), it.Output(0).Type())
		}
		return adapters.TopClasses(scores, in.top, in.threshold, in.labels), nil
	case taskDetect:
		objs, err := adapters.Objects(outs, adapters.DetectOptions{Threshold: in.threshold, Labels: in.labels, Frame: in.frame})
		if objs == nil {
			objs = []adapters.Object{}
		}
		return objs, err
	case taskPose:
		return poseResults(outs, in)
	case taskSegment:
		seg, err := adapters.Segment(outs[0])
		if err != nil {
			return nil, err
		}
		return segmentJSON{Height: seg.Height, Width: seg.Width, Areas: seg.Areas(in.labels), Classes: seg.Classes}, nil
	}
	return nil, fmt.Errorf("unknown task %q", task)
}

// poseResults reads PoseNet's decoder outputs, or a single MoveNet output.
// Keypoints are in the picture's pixels, else in the input's.
func poseResults(outs []adapters.Tensor, in taskInput) ([]adapters.Pose, error) {
	frame := in.frame
	if frame == (adapters.Frame{}) {
		frame = in.input
	}
	opts := adapters.PoseOptions{Threshold: in.threshold, Input: in.input, Frame: frame}
	if len(outs) == 1 {
		p, err := adapters.MoveNetPose(outs[0], opts)
		if err != nil || !(p.Score >= in.threshold) {
			return []adapters.Pose{}, err
		}
		return []adapters.Pose{p}, nil
	}
	poses, err := adapters.Poses(outs, opts)
	if poses == nil {
		poses = []adapters.Pose{}
	}
	return poses, err
}

// printResults prints a task's results as a table.
func printResults(w io.Writer, results any, numScores, numLabels int) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	switch r := results.(type) {
	case []adapters.Class:
		printTopK(w, r, numScores, numLabels)
		return nil
	case []adapters.Object:
		fmt.Fprintf(tw, "%d objects\n", len(r))
		fmt.Fprintln(tw, "rank\tid\tscore\tlabel\tymin\txmin\tymax\txmax")
		for i, o := range r {
			b := o.BBox
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, o.ID, fmtScore(o.Score), o.Label, fmtCoord(b.YMin), fmtCoord(b.XMin), fmtCoord(b.YMax), fmtCoord(b.XMax))
		}
	case []adapters.Pose:
		fmt.Fprintf(tw, "%d poses\n", len(r))
		for i, p := range r {
			fmt.Fprintf(tw, "pose %d\tscore %s\n", i, fmtScore(p.Score))
			fmt.Fprintln(tw, "  keypoint\ty\tx\tscore")
			for _, k := range p.Keypoints {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", k.Name, fmtCoord(k.Y), fmtCoord(k.X), fmtScore(k.Score))
			}
		}
	case segmentJSON:
		fmt.Fprintf(tw, "segmentation %dx%d: %d classes present\n", r.Width, r.Height, len(r.Areas))
		fmt.Fprintln(tw, "class\tpixels\tshare\tlabel")
		for _, a := range r.Areas {
			fmt.Fprintf(tw, "%d\t%d\t%.1f%%\t%s\n", a.ID, a.Pixels, 100*float64(a.Pixels)/float64(r.Width*r.Height), a.Label)
		}
	}
	return tw.Flush()
}

// printTopK prints classes with their labels; numScores and numLabels
// are the sizes of the scores and of the labels file (0: none given).
func printTopK(w io.Writer, classes []adapters.Class, numScores, numLabels int) {
	if numLabels > 0 && numLabels != numScores {
		// Common and harmless (e.g. a background class); say so, go on.
		fmt.Fprintf(w, "note: %d labels for %d classes\n", numLabels, numScores)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tclass\tscore\tlabel")
	for r, c := range classes {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\n", r+1, c.ID, fmtScore(c.Score), c.Label)
	}
	tw.Flush()
}

func fmtScore(s float32) string { return strconv.FormatFloat(float64(s), 'g', 6, 32) }

func fmtCoord(v float32) string { return strconv.FormatFloat(float64(v), 'f', 4, 32) }
