package elementwise

import "github.com/delego/delego/core/kernels/internal/asm/minmax8"

// minMax8Rows is minMaxRows on uint8 or int8 tensors: rows of equal
// length through minmax8's vector kernel, long rows against a scalar
// through a table (tableRows), both giving the bytes of x > y ? x : y
// (MAXIMUM when mx) or x < y ? x : y.
func minMax8Rows[T int8 | uint8](st *scalarTable, mx bool, p *bcastPlan, a, b, z []T) {
	var probe T
	signed := probe-1 < 0
	op := minmax8.MinU8
	switch {
	case mx && signed:
		op = minmax8.MaxI8
	case mx:
		op = minmax8.MaxU8
	case signed:
		op = minmax8.MinI8
	}
	k := minmax8.Best()
	tableRows(st, p, a, b, z, func(z, x, y []T) {
		if len(x) == len(z) && len(y) == len(z) {
			k.Run(op, bytesOf(z), bytesOf(x), bytesOf(y))
			return
		}
		for i := range z { // one side is a scalar: short rows, and the table's 256
			xi, yi := bcastAt(x, y, i)
			if mx && xi > yi || !mx && xi < yi {
				yi = xi
			}
			z[i] = yi
		}
	})
}
