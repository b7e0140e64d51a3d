package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, SPACE_TO_DEPTH and DEPTH_TO_SPACE
// only move elements, so they work on bytes: one implementation serves every
// type TF 2.9 accepts (FLOAT32, UINT8, INT8, INT32, INT64). As in TF 2.9,
// the ND ops take 3-D [batch, H, C] or 4-D [batch, H, W, C] inputs (3-D is
// treated as [batch, H, 1, C]) and the depth ops 4-D NHWC inputs.

// spaceBatchOps returns the registrations of the four ops, with the version ranges of TF 2.9's builtin resolver (register.cc; checked
// against the TF 2.9 C library, which refuses the next version up).
func spaceBatchOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorSPACE_TO_BATCH_ND, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64}, New: newSpaceToBatchND},
		{Code: schema.BuiltinOperatorBATCH_TO_SPACE_ND, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64}, New: newBatchToSpaceND},
		{Code: schema.BuiltinOperatorSPACE_TO_DEPTH, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64}, New: newSpaceToDepth},
		{Code: schema.BuiltinOperatorDEPTH_TO_SPACE, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64}, New: newDepthToSpace},
	}
}

// spaceBatchTypeOK reports whether TF 2.9's space/batch/depth kernels take t.
func spaceBatchTypeOK(t tensor.DType) bool {
	switch t {
	case tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int32, tensor.Int64:
		return true
	}
	return false
}

// spaceToBatchND pads the spatial dimensions and moves blocks of them into
// the batch: output batch (sh*bw+sw)*inBatch+b holds the input pixels whose
// padded coordinates are (oh*bh+sh, ow*bw+sw).
type spaceToBatchND struct {
	block, pad   [2]int // block height/width, top/left padding of the run
	inH, inW     int
	depthBytes   int  // bytes of one pixel
	padByte      byte // the fill: the output zero point for 1-byte types
	inputBatches int
}

func newSpaceToBatchND(kernel.OpInfo) (kernel.Op, error) { return &spaceToBatchND{}, nil }

// spaceBatchInputs checks what SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND share:
// three inputs (data, block shape, paddings or crops), one output, a 3-D or
// 4-D input, same types, int32 block shape and paddings.
func spaceBatchInputs(name string, n *kernel.Node) (in, block, pads, out *tensor.Tensor, err error) {
	if len(n.Inputs) != 3 || len(n.Outputs) != 1 {
		return nil, nil, nil, nil, fmt.Errorf("%s: want 3 inputs and 1 output, have %d and %d", name, len(n.Inputs), len(n.Outputs))
	}
	in, block, pads, out = n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Outputs[0]
	if in == nil || block == nil || pads == nil || out == nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: missing tensor", name)
	}
	if len(in.Shape) < 3 || len(in.Shape) > 4 {
		return nil, nil, nil, nil, kernel.Unsupported("%s: %d-D input", name, len(in.Shape))
	}
	if in.Type != out.Type {
		return nil, nil, nil, nil, fmt.Errorf("%s: input %s, output %s", name, in.Type, out.Type)
	}
	if !spaceBatchTypeOK(in.Type) {
		return nil, nil, nil, nil, kernel.Unsupported("%s: type %s", name, in.Type)
	}
	if block.Type != tensor.Int32 || pads.Type != tensor.Int32 {
		return nil, nil, nil, nil, kernel.Unsupported("%s: block shape %s and paddings %s, want INT32", name, block.Type, pads.Type)
	}
	spatial := len(in.Shape) - 2
	if len(block.Shape) != 1 || block.Shape[0] != spatial {
		return nil, nil, nil, nil, fmt.Errorf("%s: block shape of shape %v for %d spatial dimensions", name, block.Shape, spatial)
	}
	if len(pads.Shape) != 2 || pads.Shape[0] != spatial || pads.Shape[1] != 2 {
		return nil, nil, nil, nil, fmt.Errorf("%s: paddings of shape %v for %d spatial dimensions", name, pads.Shape, spatial)
	}
	return in, block, pads, out, nil
}

func (k *spaceToBatchND) Prepare(n *kernel.Node) error {
	in, block, pads, out, err := spaceBatchInputs("SPACE_TO_BATCH_ND", n)
	if err != nil {
		return err
	}
	if !block.Const || !pads.Const {
		out.Dynamic = true
		return nil
	}
	return k.resize(in, block, pads, out, false)
}

// resize computes the output shape from the block shape and paddings and
// records the geometry Eval needs.
func (k *spaceToBatchND) resize(in, block, pads, out *tensor.Tensor, eval bool) error {
	bs, ps := block.Int32s(), pads.Int32s()
	spatial := len(in.Shape) - 2
	shape := append([]int(nil), in.Shape...)
	batch := in.Shape[0]
	k.block, k.pad = [2]int{1, 1}, [2]int{0, 0}
	for d := 0; d < spatial; d++ {
		b, p0, p1 := int(bs[d]), int(ps[2*d]), int(ps[2*d+1])
		if b < 1 || p0 < 0 || p1 < 0 {
			return fmt.Errorf("SPACE_TO_BATCH_ND: block %d, paddings %d, %d", b, p0, p1)
		}
		padded := in.Shape[d+1] + p0 + p1
		if padded%b != 0 {
			return fmt.Errorf("SPACE_TO_BATCH_ND: padded size %d of dimension %d is not a multiple of %d", padded, d+1, b)
		}
		shape[d+1] = padded / b
		batch *= b
		k.block[d], k.pad[d] = b, p0
	}
	shape[0] = batch
	k.inputBatches = in.Shape[0]
	k.inH, k.inW = in.Shape[1], 1
	if spatial == 2 {
		k.inW = in.Shape[2]
	}
	k.depthBytes = in.Shape[len(in.Shape)-1] * in.Type.Size()
	k.padByte = 0
	if in.Type.Size() == 1 {
		k.padByte = byte(out.ZeroPoint()) // TFLite memsets the output zero point
	}
	if eval {
		out.SetShape(shape)
	} else {
		out.Shape = shape
	}
	return nil
}

func (k *spaceToBatchND) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if out.Dynamic {
		if err := k.resize(in, n.Inputs[1], n.Inputs[2], out, true); err != nil {
			return err
		}
	}
	outBatches, outH := out.Shape[0], out.Shape[1]
	outW := 1
	if len(out.Shape) == 4 {
		outW = out.Shape[2]
	}
	bh, bw, padT, padL := k.block[0], k.block[1], k.pad[0], k.pad[1]
	db := k.depthBytes
	src, dst := in.Data, out.Data
	o := 0
	for ob := 0; ob < outBatches; ob++ {
		ib := ob % k.inputBatches
		shiftW := (ob / k.inputBatches) % bw
		shiftH := (ob / k.inputBatches) / bw
		for oh := 0; oh < outH; oh++ {
			ih := oh*bh + shiftH - padT
			if ih < 0 || ih >= k.inH {
				fill(dst[o:o+outW*db], k.padByte)
				o += outW * db
				continue
			}
			row := src[((ib*k.inH+ih)*k.inW)*db:]
			for ow := 0; ow < outW; ow++ {
				iw := ow*bw + shiftW - padL
				if iw < 0 || iw >= k.inW {
					fill(dst[o:o+db], k.padByte)
				} else {
					copy(dst[o:o+db], row[iw*db:(iw+1)*db])
				}
				o += db
			}
		}
	}
	return nil
}

// fill sets every byte of b to v.
func fill(b []byte, v byte) {
	if v == 0 {
		clear(b)
		return
	}
	for i := range b {
		b[i] = v
	}
}

// batchToSpaceND is the inverse: input batch (sh*bw+sw)*outBatch+b goes to
// output pixels (ih*bh+sh-cropTop, iw*bw+sw-cropLeft) of batch b, what
// falls outside the cropped output being dropped.
type batchToSpaceND struct {
	block, crop [2]int
	depthBytes  int
}

func newBatchToSpaceND(kernel.OpInfo) (kernel.Op, error) { return &batchToSpaceND{}, nil }

func (k *batchToSpaceND) Prepare(n *kernel.Node) error {
	in, block, crops, out, err := spaceBatchInputs("BATCH_TO_SPACE_ND", n)
	if err != nil {
		return err
	}
	if !block.Const || !crops.Const {
		out.Dynamic = true
		return nil
	}
	return k.resize(in, block, crops, out, false)
}

func (k *batchToSpaceND) resize(in, block, crops, out *tensor.Tensor, eval bool) error {
	bs, cs := block.Int32s(), crops.Int32s()
	spatial := len(in.Shape) - 2
	shape := append([]int(nil), in.Shape...)
	batch := in.Shape[0]
	k.block, k.crop = [2]int{1, 1}, [2]int{0, 0}
	for d := 0; d < spatial; d++ {
		b, c0, c1 := int(bs[d]), int(cs[2*d]), int(cs[2*d+1])
		if b < 1 || c0 < 0 || c1 < 0 {
			return fmt.Errorf("BATCH_TO_SPACE_ND: block %d, crops %d, %d", b, c0, c1)
		}
		if batch%b != 0 {
			return fmt.Errorf("BATCH_TO_SPACE_ND: batch %d is not a multiple of block %d", batch, b)
		}
		batch /= b
		shape[d+1] = in.Shape[d+1]*b - c0 - c1
		if shape[d+1] < 0 {
			return fmt.Errorf("BATCH_TO_SPACE_ND: crops %d, %d exceed dimension %d", c0, c1, in.Shape[d+1]*b)
		}
		k.block[d], k.crop[d] = b, c0
	}
	shape[0] = batch
	k.depthBytes = in.Shape[len(in.Shape)-1] * in.Type.Size()
	if eval {
		out.SetShape(shape)
	} else {
		out.Shape = shape
	}
	return nil
}

func (k *batchToSpaceND) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if out.Dynamic {
		if err := k.resize(in, n.Inputs[1], n.Inputs[2], out, true); err != nil {
			return err
		}
	}
	inBatches, inH := in.Shape[0], in.Shape[1]
	outBatches, outH := out.Shape[0], out.Shape[1]
	inW, outW := 1, 1
	if len(in.Shape) == 4 {
		inW, outW = in.Shape[2], out.Shape[2]
	}
	bh, bw, cropT, cropL := k.block[0], k.block[1], k.crop[0], k.crop[1]
	db := k.depthBytes
	src, dst := in.Data, out.Data
	for ib := 0; ib < inBatches; ib++ {
		ob := ib % outBatches
		off := ib / outBatches
		offH, offW := off/bw-cropT, off%bw-cropL
		// The input rows and columns that land inside the output.
		h0, h1 := spaceRange(offH, bh, inH, outH)
		w0, w1 := spaceRange(offW, bw, inW, outW)
		for ih := h0; ih < h1; ih++ {
			oh := ih*bh + offH
			for iw := w0; iw < w1; iw++ {
				ow := iw*bw + offW
				s := ((ib*inH+ih)*inW + iw) * db
				d := ((ob*outH+oh)*outW + ow) * db
				copy(dst[d:d+db], src[s:s+db])
			}
		}
	}
	return nil
}

// spaceRange returns the input indices i in [0, n) with 0 <= i*block+offset
// < outSize.
func spaceRange(offset, block, n, outSize int) (lo, hi int) {
	lo, hi = 0, n
	if offset < 0 {
		lo = (-offset + block - 1) / block
	}
	if limit := outSize - offset; limit <= 0 {
		hi = 0
	} else {
		hi = min(n, (limit+block-1)/block)
	}
	return lo, max(lo, hi)
}

// spaceToDepth moves each blockxblock patch into the channels:
// out[b, y, x, (dy*bs+dx)*C+c] = in[b, y*bs+dy, x*bs+dx, c].
type spaceToDepth struct {
	blockSize int
}

// blockSizeOption reads block_size from SpaceToDepthOptions or
// DepthToSpaceOptions (same layout); 0 when absent, as in TFLite.
func blockSizeOption(info kernel.OpInfo, typ schema.BuiltinOptions) int {
	tbl, ok := info.Options(typ)
	if !ok {
		return 0
	}
	var o schema.SpaceToDepthOptions
	o.Init(tbl.Bytes, tbl.Pos)
	return int(o.BlockSize())
}

func newSpaceToDepth(info kernel.OpInfo) (kernel.Op, error) {
	return &spaceToDepth{blockSize: blockSizeOption(info, schema.BuiltinOptionsSpaceToDepthOptions)}, nil
}

// depthOpCheck checks what the depth ops share: one 4-D input and output of
// the same supported type, a positive block size.
func depthOpCheck(name string, n *kernel.Node, blockSize int) (in, out *tensor.Tensor, err error) {
	if len(n.Inputs) != 1 || len(n.Outputs) != 1 || n.Inputs[0] == nil || n.Outputs[0] == nil {
		return nil, nil, fmt.Errorf("%s: want 1 input and 1 output", name)
	}
	in, out = n.Inputs[0], n.Outputs[0]
	if len(in.Shape) != 4 {
		return nil, nil, fmt.Errorf("%s: %d-D input, want 4-D", name, len(in.Shape))
	}
	if !spaceBatchTypeOK(out.Type) {
		return nil, nil, kernel.Unsupported("%s: type %s", name, out.Type)
	}
	if in.Type != out.Type {
		return nil, nil, fmt.Errorf("%s: input %s, output %s", name, in.Type, out.Type)
	}
	if blockSize < 1 {
		return nil, nil, fmt.Errorf("%s: block size %d", name, blockSize)
	}
	return in, out, nil
}

func (k *spaceToDepth) Prepare(n *kernel.Node) error {
	in, out, err := depthOpCheck("SPACE_TO_DEPTH", n, k.blockSize)
	if err != nil {
		return err
	}
	bs := k.blockSize
	h, w := in.Shape[1], in.Shape[2]
	if h%bs != 0 || w%bs != 0 {
		return fmt.Errorf("SPACE_TO_DEPTH: %dx%d input is not a multiple of block size %d", h, w, bs)
	}
	out.Shape = append(out.Shape[:0], in.Shape[0], h/bs, w/bs, in.Shape[3]*bs*bs)
	return nil
}

func (k *spaceToDepth) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	bs := k.blockSize
	batch, inH, inW := in.Shape[0], in.Shape[1], in.Shape[2]
	db := in.Shape[3] * in.Type.Size() // one input pixel
	src, dst := in.Data, out.Data
	o := 0
	for b := 0; b < batch; b++ {
		for oy := 0; oy < inH/bs; oy++ {
			for ox := 0; ox < inW/bs; ox++ {
				for dy := 0; dy < bs; dy++ {
					s := ((b*inH+oy*bs+dy)*inW + ox*bs) * db
					// bs pixels of one input row are contiguous.
					o += copy(dst[o:o+bs*db], src[s:s+bs*db])
				}
			}
		}
	}
	return nil
}

// depthToSpace is the inverse:
// out[b, y, x, c] = in[b, y/bs, x/bs, ((y%bs)*bs+x%bs)*C+c].
type depthToSpace struct {
	blockSize int
}

func newDepthToSpace(info kernel.OpInfo) (kernel.Op, error) {
	return &depthToSpace{blockSize: blockSizeOption(info, schema.BuiltinOptionsDepthToSpaceOptions)}, nil
}

func (k *depthToSpace) Prepare(n *kernel.Node) error {
	in, out, err := depthOpCheck("DEPTH_TO_SPACE", n, k.blockSize)
	if err != nil {
		return err
	}
	bs := k.blockSize
	c := in.Shape[3]
	if c%(bs*bs) != 0 {
		return fmt.Errorf("DEPTH_TO_SPACE: %d channels are not a multiple of %d", c, bs*bs)
	}
	out.Shape = append(out.Shape[:0], in.Shape[0], in.Shape[1]*bs, in.Shape[2]*bs, c/(bs*bs))
	return nil
}

func (k *depthToSpace) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	bs := k.blockSize
	batch, inH, inW := in.Shape[0], in.Shape[1], in.Shape[2]
	inPix := in.Shape[3] * in.Type.Size()
	run := inPix / bs // bs output pixels of one output row, from one input pixel
	src, dst := in.Data, out.Data
	o := 0
	for b := 0; b < batch; b++ {
		for iy := 0; iy < inH; iy++ {
			for dy := 0; dy < bs; dy++ {
				for ix := 0; ix < inW; ix++ {
					s := ((b*inH+iy)*inW+ix)*inPix + dy*run
					o += copy(dst[o:o+run], src[s:s+run])
				}
			}
		}
	}
	return nil
}
