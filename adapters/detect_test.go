package adapters

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The rules below are libcoral's GetDetectionResults, in
// google-coral/libcoral @6589d0b, coral/detection/adapter.cc: lines 29-33
// (ObjectComparator), 53 (std::round of the class), 55 (the threshold),
// 56-59 (the clamped edges), 81-105 (the output order).

// TestObjectsClampsAsLibcoral: ymin and xmin are raised to 0 and ymax and
// xmax lowered to 1 (std::max(0.0f, v) and std::min(1.0f, v): a NaN edge
// becomes the bound), and nothing else: an edge past the other bound
// stays. The clamp comes before the box goes into the frame's pixels.
func TestObjectsClampsAsLibcoral(t *testing.T) {
	nan := float32(math.NaN())
	boxes := fake{[]int{1, 3, 4}, []float32{
		-0.25, -0.5, 1.5, 1.25, // past every edge
		1.5, 1.25, -0.25, -0.5, // each edge past the other bound: left as it is
		nan, nan, nan, nan,
	}}
	outs := []Tensor{boxes, fake{[]int{1, 3}, []float32{1, 2, 3}}, fake{[]int{1, 3}, []float32{0.9, 0.8, 0.7}}, fake{[]int{1}, []float32{3}}}
	want := []BBox{{0, 0, 1, 1}, {1.5, 1.25, -0.25, -0.5}, {0, 0, 1, 1}}
	got, err := Objects(outs, DetectOptions{})
	if err != nil || !reflect.DeepEqual(bboxes(got), want) {
		t.Errorf("normalised: %+v, %v; want boxes %+v", got, err, want)
	}
	got, err = Objects(outs, DetectOptions{Frame: Frame{Width: 200, Height: 100}})
	if err != nil || got[0].BBox != (BBox{0, 0, 100, 200}) {
		t.Errorf("in a 200x100 frame: %+v, %v; want the clamped box (0, 0, 100, 200)", got, err)
	}
}

// TestObjectsOrderAsLibcoral: the class is the nearest id (std::round:
// 2.5 gives 3), and the objects come by score, then higher class first,
// whatever the model's order.
func TestObjectsOrderAsLibcoral(t *testing.T) {
	box := []float32{0.1, 0.1, 0.2, 0.2}
	outs := []Tensor{
		fake{[]int{1, 4, 4}, slices.Concat(box, box, box, box)},
		fake{[]int{1, 4}, []float32{0.6, 2.5, 7, 4.4}},
		fake{[]int{1, 4}, []float32{0.5, 0.5, 0.9, 0.5}},
		fake{[]int{1}, []float32{4}},
	}
	got, err := Objects(outs, DetectOptions{})
	if ids := objectIDs(got); err != nil || !slices.Equal(ids, []int{7, 4, 3, 1}) {
		t.Errorf("ids %v, %v; want [7 4 3 1]", ids, err)
	}
}

// TestObjectsBySignatureNames: outputs that carry a signature's names are
// read by them, output_0 the count, output_1 the scores, output_2 the
// classes and output_3 the boxes, in whatever order the model lists them;
// here in the signature's order, which the shape rule would take for
// TF1's and fail on.
func TestObjectsBySignatureNames(t *testing.T) {
	m := detectorModel(t, true)
	it, err := core.NewInterpreter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	count, scores, classes, boxes := f32le(2), f32le(0.25, 0.75), f32le(3, 5), f32le(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
	if err := it.SetInputs([][]byte{count, scores, classes, boxes}); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	outs := Outputs(it)
	got, err := Objects(tensors(SignatureNamed(it, outs)), DetectOptions{})
	want := []Object{
		{ID: 5, Score: 0.75, BBox: BBox{0.5, 0.6, 0.7, 0.8}},
		{ID: 3, Score: 0.25, BBox: BBox{0.1, 0.2, 0.3, 0.4}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("by signature names: %+v, %v; want %+v", got, err, want)
	}
	if _, err := Objects(tensors(outs), DetectOptions{}); err == nil {
		t.Error("the same outputs without their signature names: no error")
	}
	// Without a signature def the outputs are the interpreter's, unnamed.
	plain := detectorModel(t, false)
	it2, err := core.NewInterpreter(plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it2.Close()
	outs = Outputs(it2)
	if named := SignatureNamed(it2, outs); !reflect.DeepEqual(named, outs) {
		t.Errorf("no signature: %v, want the outputs as they are", named)
	}
}

// detectorModel has four FLOAT32 inputs, each added to 0 to make an output,
// in the order of the signature names output_0 to output_3 (count [1],
// scores [1,2], classes [1,2], boxes [1,2,4]), and, when sig, the
// signature def "serving_default" that names the outputs so.
func detectorModel(t *testing.T, sig bool) *model.Model {
	t.Helper()
	b := modelbuild.New()
	zero := b.Const("zero", tensor.Float32, []int{1}, f32le(0))
	shapes := [][]int{{1}, {1, 2}, {1, 2}, {1, 2, 4}}
	ins, outs := make([]int, len(shapes)), make([]int, len(shapes))
	var named []modelbuild.SignatureTensor
	for i, s := range shapes {
		ins[i] = b.Tensor(fmt.Sprintf("in_%d", i), tensor.Float32, s)
		outs[i] = b.Tensor(fmt.Sprintf("StatefulPartitionedCall:%d", i), tensor.Float32, s)
		b.Op(schema.BuiltinOperatorADD, 1, []int{ins[i], zero}, []int{outs[i]}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
		named = append(named, modelbuild.SignatureTensor{Name: fmt.Sprintf("output_%d", i), Tensor: outs[i]})
	}
	b.Inputs(ins...)
	b.Outputs(outs...)
	if sig {
		b.Signature("serving_default", 0, nil, named)
	}
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func bboxes(objs []Object) []BBox {
	var out []BBox
	for _, o := range objs {
		out = append(out, o.BBox)
	}
	return out
}

func objectIDs(objs []Object) []int {
	var out []int
	for _, o := range objs {
		out = append(out, o.ID)
	}
	return out
}
