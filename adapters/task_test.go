package adapters

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/delego/delego/tensor"
)

// output is a tensor.Tensor read as an Output.
type output struct{ t *tensor.Tensor }

func (o output) Shape() []int                       { return o.t.Shape }
func (o output) Dequantize() []float32              { return o.t.Dequantize() }
func (o output) Name() string                       { return o.t.Name }
func (o output) Type() tensor.DType                 { return o.t.Type }
func (o output) Data() []byte                       { return o.t.Data }
func (o output) Quantization() *tensor.Quantization { return o.t.Quant }

// floats is a FLOAT32 output of the given shape and values.
func floats(name string, shape []int, v ...float32) output {
	t := tensor.NewTensor(tensor.Float32, shape...)
	t.Name = name
	for i, f := range v {
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(f))
	}
	return output{t}
}

// noThreshold keeps every result, NaN scores included.
func noThreshold() float32 { return float32(math.Inf(-1)) }

// TestClassifyText: equal scores rank by class, a class without a label
// prints empty, and a labels file of another size than the scores is
// noted.
func TestClassifyText(t *testing.T) {
	outs := []Output{floats("scores", []int{1, 4}, 0.1, 0.9, 0.5, 0.9)}
	r, err := ReadTask(TaskClassify, outs, TaskOptions{Top: 3, Threshold: noThreshold(), Labels: Labels{0: "a", 1: "b", 2: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `note: 3 labels for 4 classes
rank  class  score  label
1     3      0.9    
2     1      0.9    b
3     2      0.5    c
`
	if got := b.String(); got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
	}
	j, err := json.Marshal(r)
	if want := `[{"id":3,"score":0.9},{"id":1,"score":0.9,"label":"b"},{"id":2,"score":0.5,"label":"c"}]`; err != nil || string(j) != want {
		t.Errorf("JSON %s, %v; want %s", j, err, want)
	}
}

// TestSegmentTask: the JSON holds the grid, the areas and every pixel's
// class; the text, each class's share.
func TestSegmentTask(t *testing.T) {
	outs := []Output{floats("classes", []int{1, 2, 2}, 3, 3, 3, 0)}
	r, err := ReadTask(TaskSegment, outs, TaskOptions{Labels: Labels{3: "cat"}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(r)
	if want := `{"height":2,"width":2,"areas":[{"id":3,"label":"cat","pixels":3},{"id":0,"pixels":1}],"classes":[3,3,3,0]}`; err != nil || string(j) != want {
		t.Errorf("JSON %s, %v; want %s", j, err, want)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "segmentation 2x2: 2 classes present\nclass  pixels  share  label\n3      3       75.0%  cat\n0      1       25.0%  \n"
	if b.String() != want {
		t.Errorf("printed\n%q\nwant\n%q", b.String(), want)
	}
}

// TestDetectTask: no detection is an empty list, never null, and the
// table says so.
func TestDetectTask(t *testing.T) {
	outs := []Output{
		floats("boxes", []int{1, 1, 4}, 0.1, 0.2, 0.5, 0.6), floats("classes", []int{1, 1}, 17),
		floats("scores", []int{1, 1}, 0.3), floats("count", []int{1}, 1),
	}
	r, err := ReadTask(TaskDetect, outs, TaskOptions{Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	j, jerr := json.Marshal(r)
	if err := r.WriteText(&b); err != nil || jerr != nil || string(j) != "[]" || !strings.HasPrefix(b.String(), "0 objects\n") {
		t.Errorf("JSON %s (%v), text %q (%v)", j, jerr, b.String(), err)
	}
	r, err = ReadTask(TaskDetect, outs, TaskOptions{Threshold: 0.2, Frame: Frame{Width: 10, Height: 100}})
	b.Reset()
	if err != nil || r.WriteText(&b) != nil || !strings.Contains(b.String(), "1     17  0.3    ") || !strings.Contains(b.String(), "10.0000  2.0000  50.0000  6.0000") {
		t.Errorf("one object: %v, text %q", err, b.String())
	}
}

// TestReadTaskRefuses: no outputs, an unknown task, scores that are not
// numbers and a shape that is not the task's are errors that say so.
func TestReadTaskRefuses(t *testing.T) {
	str := output{&tensor.Tensor{Name: "s", Type: tensor.String, Shape: []int{1}, Data: []byte("x")}}
	for _, c := range []struct {
		task Task
		outs []Output
		want string
	}{
		{TaskClassify, nil, "the model has no outputs"},
		{"bogus", []Output{str}, `unknown task "bogus"`},
		{TaskClassify, []Output{str}, `output 0 "s" is STRING, which has no numeric scores`},
		{TaskSegment, []Output{floats("x", []int{1, 4}, 1, 2, 3, 4)}, "want [1,H,W] or [1,H,W,C]"},
		{TaskPose, []Output{floats("x", []int{1, 4}, 1, 2, 3, 4)}, "MoveNet output of shape [1 4]"},
	} {
		if _, err := ReadTask(c.task, c.outs, TaskOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.task, err, c.want)
		}
	}
}

// TestValuesOf: quantized values beside their dequantized ones,
// floats JSON cannot hold as strings, a scalar's shape as [].
func TestValuesOf(t *testing.T) {
	q := tensor.NewTensor(tensor.Uint8, 1, 3)
	q.Name, q.Data, q.Quant = "q", []byte{0, 128, 255}, &tensor.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{128}}
	f := floats("f", nil, float32(math.NaN()))
	vs := ValuesOf([]Output{output{q}, f})
	j, err := json.Marshal(vs)
	want := `[{"index":0,"name":"q","type":"UINT8","shape":[1,3],"quantization":{"scale":[0.5],"zero_point":[128],"axis":0,"per_channel":false},` +
		`"values":[0,128,255],"dequantized":[-64,0,63.5]},{"index":1,"name":"f","type":"FLOAT32","shape":[],"values":["NaN"]}]`
	if err != nil || string(j) != want {
		t.Errorf("JSON\n%s (%v)\nwant\n%s", j, err, want)
	}
	var b bytes.Buffer
	if err := WriteOutputs(&b, []Output{output{q}}); err != nil {
		t.Fatal(err)
	}
	if want := "output 0 \"q\" UINT8 [1,3] (scale 0.5 zp 128)\n  values:      0 128 255\n  dequantized: -64 0 63.5\n"; b.String() != want {
		t.Errorf("summary %q, want %q", b.String(), want)
	}
}
