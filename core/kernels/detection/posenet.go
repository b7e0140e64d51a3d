package detection

import (
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// PosenetDecoderOp: the custom op at the end of Coral's PoseNet and BodyPix
// models (libcoral's coral/pose_estimation/posenet_decoder_op.cc and
// posenet_decoder.cc, not part of TFLite). It turns PoseNet's heads into
// poses of 17 keypoints:
//
//   - inputs: keypoint heatmaps [1,H,W,17] (logits), short-range offsets
//     [1,H,W,34] (17 y then 17 x), mid-range offsets [1,H,W,64] (forward y,
//     forward x, backward y, backward x for the 16 edges of the pose graph),
//     and for BodyPix long-range offsets [1,H',W',34]; UINT8 (dequantized) or
//     FLOAT32. Offsets are in input pixels, the grid has one cell per stride
//     pixels.
//   - outputs (FLOAT32): keypoints [1,N,17,2] (y, x in input pixels),
//     keypoint scores [1,N,17], pose scores [1,N], number of poses [1], and
//     with the fourth input, instance masks [1,N,H',W'] (1 where a cell of
//     the long-offset grid belongs to the pose), with N = max_detections.
//
// The decoding is libcoral's: local maxima of the heatmaps above the
// threshold (as a logit) are the root candidates, highest first; a root near
// the same keypoint of a pose already found (nms_radius) is dropped; a pose
// grows from its root along the graph's edges (mid-range offsets, then five
// refinements by the short-range offsets), best-scoring keypoint first; a
// pose's score is the mean of its keypoint scores (sigmoid), recomputed
// without the keypoints within nms_radius of a better pose's; poses scoring
// below score_threshold are dropped. Arithmetic is float32 in libcoral's
// order (no fused multiply-adds) and the candidate queues follow libstdc++'s
// std::priority_queue step by step, so that equal heatmap scores (frequent
// in quantized models) pick the same roots as libcoral does.
//
// Where libcoral leaves memory as it was, delego writes zeros: the output
// rows past the number of poses, and the masks of poses not found. Its masks
// are declared [1,N,33,33] whatever the offsets' grid; delego sizes them by
// the grid (the same for BodyPix's 33x33).

// Keypoints and edges of the PoseNet pose graph.
const (
	poseKeypoints = 17
	poseEdges     = 16
	// poseRefineSteps are the short-offset refinements after following a
	// mid-range offset, poseMaskRefineSteps the long-offset ones of a mask
	// embedding, poseLocalMaxRadius the window of a root candidate (all
	// fixed in libcoral).
	poseRefineSteps     = 5
	poseMaskRefineSteps = 2
	poseLocalMaxRadius  = 1
)

// poseEdgeList returns the pose graph's edges as (parent, child) keypoints:
// the 16 forward edges from the nose outwards, then the same 16 backward.
// Keypoints: 0 nose, 1/2 left/right eye, 3/4 ears, 5/6 shoulders, 7/8 elbows,
// 9/10 wrists, 11/12 hips, 13/14 knees, 15/16 ankles.
func poseEdgeList() [2 * poseEdges][2]int {
	return [2 * poseEdges][2]int{
		{0, 1}, {1, 3}, {0, 2}, {2, 4}, {0, 5}, {5, 7}, {7, 9}, {5, 11},
		{11, 13}, {13, 15}, {0, 6}, {6, 8}, {8, 10}, {6, 12}, {12, 14}, {14, 16},
		{1, 0}, {3, 1}, {2, 0}, {4, 2}, {5, 0}, {7, 5}, {9, 7}, {11, 5},
		{13, 11}, {15, 13}, {6, 0}, {8, 6}, {10, 8}, {12, 6}, {14, 12}, {16, 14},
	}
}

// posenetOps returns the registration of Coral's PosenetDecoderOp custom op
// (libcoral registers version 1 only).
func posenetOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: "PosenetDecoderOp", Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Uint8}, New: newPosenetDecoder},
	}
}

// posenetParams are the op's custom options (a FlexBuffers map).
type posenetParams struct {
	MaxDetections  int
	ScoreThreshold float32 // a probability in [0, 1]
	Stride         int     // input pixels per grid cell
	NMSRadius      float32 // in input pixels
}

// parsePosenetOptions reads the options as libcoral's Init does (a missing
// key reads as 0) and rejects values the decoder cannot use.
func parsePosenetOptions(buf []byte) (posenetParams, error) {
	var p posenetParams
	if len(buf) == 0 {
		return p, fmt.Errorf("PosenetDecoderOp: the node has no custom options (it needs max_detections, score_threshold, stride and nms_radius)")
	}
	root, err := flexbuf.Parse(buf)
	if err != nil {
		return p, fmt.Errorf("PosenetDecoderOp options: %w", err)
	}
	m, err := root.Map()
	if err != nil {
		return p, fmt.Errorf("PosenetDecoderOp options are not a FlexBuffers map: %w", err)
	}
	get := func(key string) (flexbuf.Value, bool, error) {
		v, err := m.Get(key)
		if err != nil {
			return v, false, fmt.Errorf("PosenetDecoderOp option %s: %w", key, err)
		}
		return v, !v.IsNull(), nil
	}
	getInt := func(key string) (int, error) {
		v, ok, err := get(key)
		if err != nil || !ok {
			return 0, err
		}
		i, err := v.Int()
		if err != nil {
			return 0, fmt.Errorf("PosenetDecoderOp option %s: %w", key, err)
		}
		return int(int32(i)), nil
	}
	getFloat := func(key string) (float32, error) {
		v, ok, err := get(key)
		if err != nil || !ok {
			return 0, err
		}
		f, err := v.Float()
		if err != nil {
			return 0, fmt.Errorf("PosenetDecoderOp option %s: %w", key, err)
		}
		return float32(f), nil
	}
	if p.MaxDetections, err = getInt("max_detections"); err != nil {
		return p, err
	}
	if p.ScoreThreshold, err = getFloat("score_threshold"); err != nil {
		return p, err
	}
	if p.Stride, err = getInt("stride"); err != nil {
		return p, err
	}
	if p.NMSRadius, err = getFloat("nms_radius"); err != nil {
		return p, err
	}
	return p, p.check()
}

// check rejects options libcoral would fail on or compute nonsense from.
func (p posenetParams) check() error {
	switch {
	case p.MaxDetections < 1:
		return fmt.Errorf("PosenetDecoderOp: max_detections is %d, want at least 1", p.MaxDetections)
	case p.Stride < 1:
		return fmt.Errorf("PosenetDecoderOp: stride is %d, want at least 1 (input pixels per heatmap cell)", p.Stride)
	case !(p.ScoreThreshold >= 0 && p.ScoreThreshold < 1):
		return fmt.Errorf("PosenetDecoderOp: score_threshold is %g, want a probability in [0, 1)", p.ScoreThreshold)
	case !(p.NMSRadius >= 0) || math.IsInf(float64(p.NMSRadius), 0):
		return fmt.Errorf("PosenetDecoderOp: nms_radius is %g, want a distance in pixels, 0 or more", p.NMSRadius)
	}
	return nil
}

func newPosenetDecoder(info kernel.OpInfo) (kernel.Op, error) {
	var opts []byte
	if info.Operator != nil {
		opts = info.Operator.CustomOptionsBytes()
	}
	p, err := parsePosenetOptions(opts)
	if err != nil {
		return nil, err
	}
	return &posenetDecoder{p: p, edges: poseEdgeList()}, nil
}

// posePoint is a position on the heatmap grid (or, in outputs, in pixels).
type posePoint struct{ y, x float32 }

// poseKeypoint is a keypoint candidate: where, which keypoint, its score.
type poseKeypoint struct {
	pt    posePoint
	id    int
	score float32
}

// posenetDecoder is one node's kernel with its scratch memory.
type posenetDecoder struct {
	p     posenetParams
	edges [2 * poseEdges][2]int // the pose graph

	h, w         int // heatmap grid
	maskH, maskW int // long-offset grid (BodyPix)

	heatmaps, shorts, mids, longs []float32 // dequantized inputs
	roots, queue                  keypointHeap
	poses                         [][poseKeypoints]posePoint
	keypointScores                [][poseKeypoints]float32
	instanceScores                []float32
	order                         []int
}

// Prepare checks the inputs and outputs, sizes the outputs for
// max_detections poses and allocates the scratch memory.
func (k *posenetDecoder) Prepare(n *kernel.Node) error {
	if err := posenetCounts(n); err != nil {
		return err
	}
	heads := [...]struct {
		name     string
		channels int
	}{{"heatmaps", poseKeypoints}, {"short-range offsets", 2 * poseKeypoints}, {"mid-range offsets", 4 * poseEdges}, {"long-range offsets", 2 * poseKeypoints}}
	for i, in := range n.Inputs {
		if err := posenetCheckInput(in, i, heads[i].name, heads[i].channels); err != nil {
			return err
		}
	}
	k.h, k.w = n.Inputs[0].Shape[1], n.Inputs[0].Shape[2]
	for i, in := range n.Inputs[1:3] {
		if in.Shape[1] != k.h || in.Shape[2] != k.w {
			return fmt.Errorf("PosenetDecoderOp: %s (input %d) on a %dx%d grid, the heatmaps on %dx%d", heads[i+1].name, i+1, in.Shape[1], in.Shape[2], k.h, k.w)
		}
	}
	nd := k.p.MaxDetections
	shapes := [][]int{{1, nd, poseKeypoints, 2}, {1, nd, poseKeypoints}, {1, nd}, {1}}
	if len(n.Inputs) == 4 {
		k.maskH, k.maskW = n.Inputs[3].Shape[1], n.Inputs[3].Shape[2]
		shapes = append(shapes, []int{1, nd, k.maskH, k.maskW})
	}
	for i, out := range n.Outputs {
		if out.Type != tensor.Float32 {
			return kernel.Unsupported("PosenetDecoderOp: output %d is %s; the decoder writes FLOAT32", i, out.Type)
		}
		out.SetShape(shapes[i])
	}
	k.allocScratch(n)
	return nil
}

// posenetCounts checks the node's arity: 3 inputs and 4 outputs (PoseNet),
// or 4 and 5 (BodyPix, with long-range offsets and instance masks).
func posenetCounts(n *kernel.Node) error {
	ni, no := len(n.Inputs), len(n.Outputs)
	if !(ni == 3 && no == 4) && !(ni == 4 && no == 5) {
		return fmt.Errorf("PosenetDecoderOp: %d inputs and %d outputs; want 3 and 4 (PoseNet) or 4 and 5 (BodyPix)", ni, no)
	}
	return n.CheckPresent("PosenetDecoderOp")
}

// posenetCheckInput checks one input head: UINT8 or FLOAT32, [1,H,W,channels].
func posenetCheckInput(in *tensor.Tensor, i int, name string, channels int) error {
	if in.Type != tensor.Uint8 && in.Type != tensor.Float32 {
		return kernel.Unsupported("PosenetDecoderOp: %s (input %d) are %s; the decoder takes UINT8 or FLOAT32", name, i, in.Type)
	}
	s := in.Shape
	if len(s) != 4 || s[0] != 1 || s[3] != channels || s[1] < 1 || s[2] < 1 {
		return fmt.Errorf("PosenetDecoderOp: %s (input %d) of shape %v; want [1,height,width,%d]", name, i, s, channels)
	}
	if in.Type == tensor.Uint8 && !in.Quantized() {
		return fmt.Errorf("PosenetDecoderOp: %s (input %d) are UINT8 without quantization parameters", name, i)
	}
	return nil
}

// allocScratch sizes the dequantized inputs and the decoder's buffers.
func (k *posenetDecoder) allocScratch(n *kernel.Node) {
	k.heatmaps = kernel.Sized(k.heatmaps, n.Inputs[0].NumElements())
	k.shorts = kernel.Sized(k.shorts, n.Inputs[1].NumElements())
	k.mids = kernel.Sized(k.mids, n.Inputs[2].NumElements())
	if len(n.Inputs) == 4 {
		k.longs = kernel.Sized(k.longs, n.Inputs[3].NumElements())
	}
	nd := k.p.MaxDetections
	k.poses = kernel.Sized(k.poses, nd)
	k.keypointScores = kernel.Sized(k.keypointScores, nd)
	k.instanceScores = kernel.Sized(k.instanceScores, nd)[:0]
	k.order = kernel.Sized(k.order, nd)[:0]
	k.roots = kernel.Sized(k.roots, k.h*k.w*poseKeypoints)[:0]
	k.queue = kernel.Sized(k.queue, 4*poseEdges)[:0]
}

// Eval dequantizes the heads (offsets divided by the stride, into grid
// units), decodes the poses and, for BodyPix, their masks.
func (k *posenetDecoder) Eval(n *kernel.Node) error {
	extra := float32(1 / float64(k.p.Stride))
	posenetDequantize(n.Inputs[0], k.heatmaps, 1)
	posenetDequantize(n.Inputs[1], k.shorts, extra)
	posenetDequantize(n.Inputs[2], k.mids, extra)
	count := k.decodePoses(n.Outputs)
	if len(n.Inputs) == 4 {
		posenetDequantize(n.Inputs[3], k.longs, extra)
		k.decodeMasks(n.Outputs[0].Float32s(), count, n.Outputs[4].Float32s())
	}
	return nil
}

// posenetDequantize writes src's values times scale to dst, in libcoral's
// float32 arithmetic: (q - zero point) * (tensor scale * scale).
func posenetDequantize(src *tensor.Tensor, dst []float32, scale float32) {
	if src.Type == tensor.Float32 {
		for i, v := range src.Float32s()[:len(dst)] {
			dst[i] = v * scale
		}
		return
	}
	zp, s := float32(src.ZeroPoint()), src.Scale()*scale
	for i, q := range src.Uint8s()[:len(dst)] {
		dst[i] = (float32(q) - zp) * s
	}
}

// decodePoses is libcoral's DecodeAllPoses: it writes the poses, best
// first, to the first four outputs and returns how many there are.
func (k *posenetDecoder) decodePoses(outs []*tensor.Tensor) int {
	p := k.p
	nmsRadius := p.NMSRadius / float32(p.Stride) // in grid cells
	sqRadius := nmsRadius * nmsRadius
	k.buildRoots(logOdds(p.ScoreThreshold))
	found := 0
	k.instanceScores = k.instanceScores[:0]
	for found < p.MaxDetections && len(k.roots) > 0 {
		root := k.roots.pop()
		if !k.passKeypointNMS(found, root, sqRadius) {
			continue
		}
		pose, scores := &k.poses[found], &k.keypointScores[found]
		for i := range pose {
			pose[i] = posePoint{-1, -1}
			scores[i] = -1e5
		}
		k.backtrack(root, pose, scores)
		for i, s := range scores {
			scores[i] = sigmoid(s)
		}
		if s := meanOfTop(scores[:], nil); s >= p.ScoreThreshold {
			found++
			k.instanceScores = append(k.instanceScores, s)
		}
	}
	k.order = decreasingOrder(k.instanceScores, k.order)
	k.softKeypointNMS(sqRadius)
	k.order = decreasingOrder(k.instanceScores, k.order)
	return k.writePoses(outs)
}

// writePoses copies the poses scoring at least the threshold, by
// decreasing score, to the outputs in pixels; the rest of every output is
// zeroed. It returns the number of poses written.
func (k *posenetDecoder) writePoses(outs []*tensor.Tensor) int {
	keypoints, kpScores := outs[0].Float32s(), outs[1].Float32s()
	poseScores, count := outs[2].Float32s(), outs[3].Float32s()
	clear(keypoints)
	clear(kpScores)
	clear(poseScores)
	stride := float32(k.p.Stride)
	n := 0
	for _, i := range k.order {
		if k.instanceScores[i] < k.p.ScoreThreshold {
			break
		}
		for j, pt := range k.poses[i] {
			keypoints[(n*poseKeypoints+j)*2] = pt.y * stride
			keypoints[(n*poseKeypoints+j)*2+1] = pt.x * stride
		}
		copy(kpScores[n*poseKeypoints:], k.keypointScores[i][:])
		poseScores[n] = k.instanceScores[i]
		n++
	}
	count[0] = float32(n)
	return n
}

// buildRoots queues every heatmap cell that scores at least minLogit and
// is a maximum of its 3x3 window for its keypoint, at the position its
// short-range offset points to (libcoral's BuildKeypointWithScoreQueue).
func (k *posenetDecoder) buildRoots(minLogit float32) {
	h, w := k.h, k.w
	k.roots = k.roots[:0]
	for y := range h {
		for x := range w {
			cell := (y*w + x) * poseKeypoints
			for j := range poseKeypoints {
				score := k.heatmaps[cell+j]
				if !(score >= minLogit) || !k.localMaximum(y, x, j, score) {
					continue
				}
				off := 2*cell + j
				dy, dx := k.shorts[off], k.shorts[off+poseKeypoints]
				pt := posePoint{clampf(float32(y)+dy, 0, float32(h-1)), clampf(float32(x)+dx, 0, float32(w-1))}
				k.roots.push(poseKeypoint{pt, j, score})
			}
		}
	}
}

// localMaximum reports whether no cell within poseLocalMaxRadius of (y, x)
// scores above score for keypoint j.
func (k *posenetDecoder) localMaximum(y, x, j int, score float32) bool {
	for yy := max(y-poseLocalMaxRadius, 0); yy < min(y+poseLocalMaxRadius+1, k.h); yy++ {
		for xx := max(x-poseLocalMaxRadius, 0); xx < min(x+poseLocalMaxRadius+1, k.w); xx++ {
			if k.heatmaps[(yy*k.w+xx)*poseKeypoints+j] > score {
				return false
			}
		}
	}
	return true
}

// passKeypointNMS reports whether root is farther than the NMS radius from
// the same keypoint of each of the first n poses.
func (k *posenetDecoder) passKeypointNMS(n int, root poseKeypoint, sqRadius float32) bool {
	for _, pose := range k.poses[:n] {
		if squaredDistance(root.pt, pose[root.id]) <= sqRadius {
			return false
		}
	}
	return true
}

// backtrack grows a pose from its root: the best-scoring keypoint not yet
// placed is placed next, and its unplaced neighbours in the graph are
// queued where the offsets lead (libcoral's BacktrackDecodePose).
func (k *posenetDecoder) backtrack(root poseKeypoint, pose *[poseKeypoints]posePoint, scores *[poseKeypoints]float32) {
	var placed [poseKeypoints]bool
	k.queue = k.queue[:0]
	root.score = k.sample(k.heatmaps, poseKeypoints, root.pt, root.id, -1)[0]
	k.queue.push(root)
	for len(k.queue) > 0 {
		cur := k.queue.pop()
		if placed[cur.id] {
			continue
		}
		pose[cur.id], scores[cur.id], placed[cur.id] = cur.pt, cur.score, true
		for e, edge := range k.edges {
			child := edge[1]
			if edge[0] != cur.id || placed[child] {
				continue
			}
			pt := k.displaced(cur.pt, e, child)
			score := k.sample(k.heatmaps, poseKeypoints, pt, child, -1)[0]
			k.queue.push(poseKeypoint{pt, child, score})
		}
	}
}

// displaced follows edge e's mid-range offset from pt, then refines the
// position with the target keypoint's short-range offsets.
func (k *posenetDecoder) displaced(pt posePoint, e, target int) posePoint {
	// The mid offsets hold [forward y][forward x][backward y][backward x],
	// 16 channels each; edges 16..31 are the backward ones.
	ch := e
	if e >= poseEdges {
		ch += poseEdges
	}
	hMax, wMax := float32(k.h-1), float32(k.w-1)
	off := k.sample(k.mids, 4*poseEdges, pt, ch, poseEdges+ch)
	pt = posePoint{clampf(pt.y+off[0], 0, hMax), clampf(pt.x+off[1], 0, wMax)}
	for range poseRefineSteps {
		off = k.sample(k.shorts, 2*poseKeypoints, pt, target, poseKeypoints+target)
		pt = posePoint{clampf(pt.y+off[0], 0, hMax), clampf(pt.x+off[1], 0, wMax)}
	}
	return pt
}

// sample interpolates data ([h, w, channels] on the heatmap grid)
// bilinearly at pt in channels c0 and c1 (c1 < 0: c0 only).
func (k *posenetDecoder) sample(data []float32, channels int, pt posePoint, c0, c1 int) [2]float32 {
	return bilinear(data, k.h, k.w, channels, pt, c0, c1)
}

// bilinear is libcoral's SampleTensorAtMultipleChannels for two channels:
// the corners are those of the position clamped to the grid, the weights
// those of the position itself, and every product is rounded to float32
// before it is added, as in libcoral's build (no fused multiply-adds).
func bilinear(data []float32, h, w, channels int, pt posePoint, c0, c1 int) [2]float32 {
	y0, y1, ly := linearCorners(pt.y, h)
	x0, x1, lx := linearCorners(pt.x, w)
	tl, tr := (y0*w+x0)*channels, (y0*w+x1)*channels
	bl, br := (y1*w+x0)*channels, (y1*w+x1)*channels
	at := func(c int) float32 {
		top := float32(float32((1-lx)*data[tl+c]) + float32(lx*data[tr+c]))
		bottom := float32(float32((1-lx)*data[bl+c]) + float32(lx*data[br+c]))
		return float32(float32((1-ly)*top) + float32(ly*bottom))
	}
	var r [2]float32
	r[0] = at(c0)
	if c1 >= 0 {
		r[1] = at(c1)
	}
	return r
}

// linearCorners returns the cells below and above v clamped to [0, n-1],
// and v's distance from the lower one.
func linearCorners(v float32, n int) (lo, hi int, frac float32) {
	c := clampf(v, 0, float32(n)-1)
	f := float32(math.Floor(float64(c)))
	return int(f), int(math.Ceil(float64(c))), v - f
}

// softKeypointNMS rescores the poses, best first, as the mean of their
// keypoint scores leaving out each keypoint within the radius of the same
// keypoint of a better pose (libcoral's PerformSoftKeypointNMS).
func (k *posenetDecoder) softKeypointNMS(sqRadius float32) {
	for i, cur := range k.order {
		var occluded [poseKeypoints]bool
		for _, prev := range k.order[:i] {
			for j := range occluded {
				if squaredDistance(k.poses[cur][j], k.poses[prev][j]) <= sqRadius {
					occluded[j] = true
				}
			}
		}
		k.instanceScores[cur] = meanOfTop(k.keypointScores[cur][:], occluded[:])
	}
}

// meanOfTop is the sum of scores, highest first, leaving out the occluded
// ones (occluded may be nil), divided by the number of keypoints. The
// order of the additions is libcoral's.
func meanOfTop(scores []float32, occluded []bool) float32 {
	var idx [poseKeypoints]int
	order := idx[:len(scores)]
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpDesc(scores[a], scores[b]) })
	var sum float32
	for _, i := range order {
		if occluded == nil || !occluded[i] {
			sum += scores[i]
		}
	}
	return sum / poseKeypoints
}

// decreasingOrder returns the indices of scores by decreasing score, equal
// scores in index order (libstdc++'s std::sort does the same for the 16 or
// fewer poses of Coral's models, by insertion sort).
func decreasingOrder(scores []float32, order []int) []int {
	order = order[:0]
	for i := range scores {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpDesc(scores[a], scores[b]) })
	return order
}

// cmpDesc orders a before b when a is greater.
func cmpDesc(a, b float32) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// decodeMasks assigns each cell of the long-offset grid to the pose whose
// keypoints lie closest (summed squared distances) to where the cell's
// long-range offsets lead, for BodyPix's instance masks
// (libcoral's DecodeInstanceMasks). keypoints holds the poses in pixels.
func (k *posenetDecoder) decodeMasks(keypoints []float32, count int, masks []float32) {
	clear(masks)
	if count == 0 {
		return
	}
	h, w := k.maskH, k.maskW
	var emb [poseKeypoints]posePoint
	for y := range h {
		for x := range w {
			for j := range emb {
				emb[j] = k.embedding(y, x, j)
			}
			best, bestDist := 0, float32(0)
			for pose := range count {
				var d float32
				for j, e := range emb {
					kp := posePoint{keypoints[(pose*poseKeypoints+j)*2], keypoints[(pose*poseKeypoints+j)*2+1]}
					d += squaredDistance(e, kp)
				}
				if pose == 0 || d < bestDist {
					best, bestDist = pose, d
				}
			}
			masks[(best*h+y)*w+x] = 1
		}
	}
}

// embedding follows keypoint j's long-range offsets from cell (y, x), three
// times, and returns where they lead in pixels.
func (k *posenetDecoder) embedding(y, x, j int) posePoint {
	h, w := k.maskH, k.maskW
	pt := posePoint{float32(y), float32(x)}
	for range poseMaskRefineSteps + 1 {
		off := bilinear(k.longs, h, w, 2*poseKeypoints, pt, j, poseKeypoints+j)
		pt = posePoint{clampf(pt.y+off[0], 0, float32(h-1)), clampf(pt.x+off[1], 0, float32(w-1))}
	}
	stride := float32(k.p.Stride)
	return posePoint{pt.y * stride, pt.x * stride}
}

// squaredDistance is dy*dy + dx*dx in float32, each product rounded.
func squaredDistance(a, b posePoint) float32 {
	dy, dx := b.y-a.y, b.x-a.x
	return float32(dy*dy) + float32(dx*dx)
}

// clampf is libcoral's clamp: v < lo ? lo : hi < v ? hi : v.
func clampf(v, lo, hi float32) float32 {
	if v < lo {
		return lo
	}
	if hi < v {
		return hi
	}
	return v
}

// sigmoid is 1/(1+exp(-x)) in float32, as libcoral's Sigmoid.
func sigmoid(x float32) float32 {
	return 1 / (1 + float32(math.Exp(float64(-x))))
}

// logOdds is libcoral's Logodds, the logit of a probability, computed in
// double precision: -log(1/(p+1e-6) - 1).
func logOdds(p float32) float32 {
	return float32(-math.Log(1/(float64(p)+1e-6) - 1))
}

// keypointHeap is a max-heap of keypoint candidates by score, in
// libcoral's std::priority_queue order.
type keypointHeap = stdQueue[poseKeypoint]

// queueScore orders keypoint candidates in a stdQueue.
func (p poseKeypoint) queueScore() float32 { return p.score }
