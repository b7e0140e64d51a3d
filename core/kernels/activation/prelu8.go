package activation

// preluTables holds 8-bit PRELU's output for every input byte, one row of
// 256 for each alpha byte the alpha tensor holds, filled by
// preluQuantized itself: a lookup gives the bytes the arithmetic gives.
type preluTables struct {
	out  [256][256]byte
	used [256]bool
}

// preluByTable runs actPreluQuantized through op's tables when src is
// long enough for the rows it needs (256 evaluations each) to cost less
// than the arithmetic they spare, and reports whether it did.
func preluByTable[T uint8 | int8](op *preluOp, src, alpha, dst []T, lo, hi int32) bool {
	t := op.tables
	clear(t.used[:])
	rows := 0
	for _, a := range alpha {
		if b := uint8(a); !t.used[b] {
			t.used[b] = true
			rows++
		}
	}
	if rows*256*2 > len(src) {
		return false
	}
	for b, used := range t.used {
		if !used {
			continue
		}
		row := &t.out[b]
		for v := range row {
			row[v] = uint8(preluQuantized(op, T(v), T(b), lo, hi))
		}
	}
	if !op.broadcast {
		dst = dst[:len(src)]
		alpha = alpha[:len(src)]
		for i, v := range src {
			dst[i] = T(t.out[uint8(alpha[i])][uint8(v)])
		}
		return true
	}
	op.forEach(func(i, ai int) { dst[i] = T(t.out[uint8(alpha[ai])][uint8(src[i])]) })
	return true
}
