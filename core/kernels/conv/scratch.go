package conv

import "github.com/delego/delego/core/kernels/kernel"

// convScratch is the convolution kernels' room in an interpreter's Scratch:
// one set of buffers per worker of their loops (worker 0 is the calling
// goroutine). The nodes of an interpreter run one at a time, so every
// convolution uses the same room, grown in Prepare to what the largest
// node needs.
type convScratch struct {
	qU8 []qgemmWork[uint8]
	qI8 []qgemmWork[int8]
	f   []fgemmWork
	dwV []dwVWork
	dwF []dwFloatWork
	// wide is a depthwise input widened for a depth multiplier above 1.
	wide []byte
	// col is each worker's block of CONV_3D im2col rows.
	col [][]float32
	// taps is CONV_3D_TRANSPOSE's GEMM product for one batch: every
	// input pixel times every filter tap.
	taps []float32
	// planes is a one-channel convolution's input as padded planes
	// (planarConv).
	planes []float32
}

// convScratchOf returns the convolutions' room in n's scratch.
func convScratchOf(n *kernel.Node) *convScratch {
	return kernel.RoomOf[convScratch](n.ScratchSpace())
}

// growWide makes wide at least n bytes.
func (s *convScratch) growWide(n int) {
	if len(s.wide) < n {
		s.wide = make([]byte, n)
	}
}

// Bytes is the room's size in bytes.
func (s *convScratch) Bytes() int {
	total := 0
	for i := range s.qU8 {
		total += s.qU8[i].bytes()
	}
	for i := range s.qI8 {
		total += s.qI8[i].bytes()
	}
	for i := range s.f {
		total += 4*(cap(s.f[i].panel)+cap(s.f[i].row)+cap(s.f[i].tile)) + 32*cap(s.f[i].runs)
	}
	for i := range s.dwV {
		total += s.dwV[i].bytes()
	}
	for i := range s.dwF {
		total += 8 * (cap(s.dwF[i].xoff) + cap(s.dwF[i].woff))
	}
	for i := range s.col {
		total += 4 * cap(s.col[i])
	}
	return total + cap(s.wide) + 4*cap(s.taps) + 4*cap(s.planes)
}
