package adapters

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/delego/delego/tensor"
)

// Task names a common head that ReadTask reads a model's outputs as.
type Task string

// The tasks ReadTask knows.
const (
	TaskClassify Task = "classify" // the top classes of output 0 (Classes)
	TaskDetect   Task = "detect"   // TFLite_Detection_PostProcess's outputs (Objects)
	TaskPose     Task = "pose"     // PosenetDecoderOp's outputs (Poses), or one MoveNet output (MoveNetPose)
	TaskSegment  Task = "segment"  // per-pixel classes of output 0 (Segment)
)

// TaskOptions say what ReadTask keeps and where its coordinates go.
type TaskOptions struct {
	Top       int     // TaskClassify: the most classes kept (all for Top < 0)
	Threshold float32 // the lowest score of a class, object or pose kept
	Labels    Labels  // names of the class ids; may be nil
	Input     Frame   // the model input's size (PoseNet's keypoints are in its pixels)
	// Frame is where boxes and keypoints go (the picture's pixels); zero:
	// boxes normalised, keypoints in the Input's pixels.
	Frame Frame
}

// Results are what ReadTask reads: the field of the Task, set. Their JSON
// form is that field's ("delego run --json"'s "results"), and WriteText
// prints them as a table.
type Results struct {
	Task         Task
	Classes      []Class       // TaskClassify
	Objects      []Object      // TaskDetect
	Poses        []Pose        // TaskPose
	Segmentation *Segmentation // TaskSegment
	Areas        []ClassArea   // TaskSegment: the classes present, largest first
	// NumScores and NumLabels are the sizes of the classifier's scores and
	// of its labels (0: none), which WriteText notes when they differ.
	NumScores, NumLabels int
}

// ReadTask reads outs, a model's outputs after Invoke, as task's head.
func ReadTask(task Task, outs []Output, opts TaskOptions) (*Results, error) {
	if len(outs) == 0 {
		return nil, errors.New("the model has no outputs")
	}
	r := &Results{Task: task}
	var err error
	switch task {
	case TaskClassify:
		scores := outs[0].Dequantize()
		if scores == nil {
			return nil, fmt.Errorf("output 0 %q is %s, which has no numeric scores", outs[0].Name(), outs[0].Type())
		}
		r.Classes = TopClasses(scores, opts.Top, opts.Threshold, opts.Labels)
		r.NumScores, r.NumLabels = tensor.NumElements(outs[0].Shape()), len(opts.Labels)
	case TaskDetect:
		r.Objects, err = Objects(tensors(outs), DetectOptions{Threshold: opts.Threshold, Labels: opts.Labels, Frame: opts.Frame})
		if r.Objects == nil {
			r.Objects = []Object{}
		}
	case TaskPose:
		r.Poses, err = readPoses(tensors(outs), opts)
	case TaskSegment:
		var seg Segmentation
		if seg, err = Segment(outs[0]); err != nil {
			return nil, err
		}
		r.Segmentation, r.Areas = &seg, seg.Areas(opts.Labels)
	default:
		return nil, fmt.Errorf("unknown task %q", task)
	}
	return r, err
}

// tensors are outs as Tensors.
func tensors(outs []Output) []Tensor {
	ts := make([]Tensor, len(outs))
	for i, o := range outs {
		ts[i] = o
	}
	return ts
}

// readPoses reads PoseNet's decoder outputs, or a single MoveNet output.
// Keypoints are in opts.Frame's pixels, else in the input's.
func readPoses(outs []Tensor, opts TaskOptions) ([]Pose, error) {
	frame := opts.Frame
	if frame == (Frame{}) {
		frame = opts.Input
	}
	po := PoseOptions{Threshold: opts.Threshold, Input: opts.Input, Frame: frame}
	if len(outs) == 1 {
		p, err := MoveNetPose(outs[0], po)
		if err != nil || !(p.Score >= opts.Threshold) {
			return []Pose{}, err
		}
		return []Pose{p}, nil
	}
	poses, err := Poses(outs, po)
	if poses == nil {
		poses = []Pose{}
	}
	return poses, err
}

// MarshalJSON writes the results of r's Task: the classes, objects or
// poses as a list, a segmentation as its height, width, areas and the
// class of every pixel (row by row).
func (r *Results) MarshalJSON() ([]byte, error) {
	switch r.Task {
	case TaskClassify:
		return json.Marshal(r.Classes)
	case TaskDetect:
		return json.Marshal(r.Objects)
	case TaskPose:
		return json.Marshal(r.Poses)
	case TaskSegment:
		s := r.Segmentation
		return json.Marshal(struct {
			Height  int         `json:"height"`
			Width   int         `json:"width"`
			Areas   []ClassArea `json:"areas"`
			Classes []int       `json:"classes"`
		}{s.Height, s.Width, r.Areas, s.Classes})
	}
	return nil, fmt.Errorf("unknown task %q", r.Task)
}

// WriteText writes r as a table: rank, class, score and label of each
// class; each object's class, score, label and box; each pose's score and
// keypoints; the area of each class of a segmentation.
func (r *Results) WriteText(w io.Writer) error {
	if r.Task == TaskClassify && r.NumLabels > 0 && r.NumLabels != r.NumScores {
		// Common and harmless (e.g. a background class); say so, go on.
		fmt.Fprintf(w, "note: %d labels for %d classes\n", r.NumLabels, r.NumScores)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	switch r.Task {
	case TaskClassify:
		fmt.Fprintln(tw, "rank\tclass\tscore\tlabel")
		for i, c := range r.Classes {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\n", i+1, c.ID, fmtScore(c.Score), c.Label)
		}
	case TaskDetect:
		fmt.Fprintf(tw, "%d objects\n", len(r.Objects))
		fmt.Fprintln(tw, "rank\tid\tscore\tlabel\tymin\txmin\tymax\txmax")
		for i, o := range r.Objects {
			b := o.BBox
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, o.ID, fmtScore(o.Score), o.Label, fmtCoord(b.YMin), fmtCoord(b.XMin), fmtCoord(b.YMax), fmtCoord(b.XMax))
		}
	case TaskPose:
		fmt.Fprintf(tw, "%d poses\n", len(r.Poses))
		for i, p := range r.Poses {
			fmt.Fprintf(tw, "pose %d\tscore %s\n", i, fmtScore(p.Score))
			fmt.Fprintln(tw, "  keypoint\ty\tx\tscore")
			for _, k := range p.Keypoints {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", k.Name, fmtCoord(k.Y), fmtCoord(k.X), fmtScore(k.Score))
			}
		}
	case TaskSegment:
		s := r.Segmentation
		fmt.Fprintf(tw, "segmentation %dx%d: %d classes present\n", s.Width, s.Height, len(r.Areas))
		fmt.Fprintln(tw, "class\tpixels\tshare\tlabel")
		for _, a := range r.Areas {
			fmt.Fprintf(tw, "%d\t%d\t%.1f%%\t%s\n", a.ID, a.Pixels, 100*float64(a.Pixels)/float64(s.Width*s.Height), a.Label)
		}
	}
	return tw.Flush()
}

// fmtScore writes a score with 6 significant digits.
func fmtScore(s float32) string { return strconv.FormatFloat(float64(s), 'g', 6, 32) }

// fmtCoord writes a coordinate with 4 decimals.
func fmtCoord(v float32) string { return strconv.FormatFloat(float64(v), 'f', 4, 32) }
