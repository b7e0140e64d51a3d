package kernels

// Scratch is the working memory of an interpreter's convolution kernels:
// one set per worker of their loops (worker 0 is the calling goroutine).
// The nodes of an interpreter run one at a time, so every node uses the
// same set, grown in Prepare to what the largest node needs: an
// interpreter's scratch is the largest node's, not the sum over its nodes.
//
// A kernel keeps nothing in it from one Eval to the next.
type Scratch struct {
	qU8 []qgemmWork[uint8]
	qI8 []qgemmWork[int8]
	f   []fgemmWork
	dwV []dwVWork
	dwF []dwFloatWork
	// wide is a depthwise input widened for a depth multiplier above 1.
	wide []byte
}

// growWide makes wide at least n bytes.
func (s *Scratch) growWide(n int) {
	if len(s.wide) < n {
		s.wide = make([]byte, n)
	}
}

// scratch returns the interpreter's Scratch, or one of the node's own when
// the node was made without one.
func (n *Node) scratch() *Scratch {
	if n.Scratch == nil {
		n.Scratch = new(Scratch)
	}
	return n.Scratch
}

// size is the scratch's size in bytes.
func (s *Scratch) size() int {
	total := 0
	for i := range s.qU8 {
		total += s.qU8[i].bytes()
	}
	for i := range s.qI8 {
		total += s.qI8[i].bytes()
	}
	for i := range s.f {
		total += 4 * (cap(s.f[i].panel) + cap(s.f[i].row) + cap(s.f[i].tile))
	}
	for i := range s.dwV {
		total += s.dwV[i].bytes()
	}
	for i := range s.dwF {
		total += 8 * (cap(s.dwF[i].xoff) + cap(s.dwF[i].woff))
	}
	return total + cap(s.wide)
}
