package kernel

// The matrix-vector products the recurrent families (lstm, rnn) share:
// TFLite's MatrixBatchVectorMultiplyAccumulate in float and int8.

// AllZero reports whether every value of v is 0, which lets the hybrid
// products skip a vector as TFLite does.
func AllZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// MatVecAccFloat adds matrix (rows x cols) times each of the nb vectors
// to result, each row's dot product summed first as TFLite's portable kernel
// does.
func MatVecAccFloat(matrix []float32, rows, cols int, vectors []float32, nb int, result []float32) {
	for b := range nb {
		v := vectors[b*cols : (b+1)*cols]
		res := result[b*rows : (b+1)*rows]
		r := 0
		// Four rows at a time share the loads of v; each row's sum keeps
		// its sequential order.
		for ; r+4 <= rows; r += 4 {
			m0, m1 := matrix[r*cols:(r+1)*cols], matrix[(r+1)*cols:(r+2)*cols]
			m2, m3 := matrix[(r+2)*cols:(r+3)*cols], matrix[(r+3)*cols:(r+4)*cols]
			m0, m1, m2, m3 = m0[:len(v)], m1[:len(v)], m2[:len(v)], m3[:len(v)]
			var d0, d1, d2, d3 float32
			for i, x := range v {
				d0 += float32(m0[i] * x)
				d1 += float32(m1[i] * x)
				d2 += float32(m2[i] * x)
				d3 += float32(m3[i] * x)
			}
			res[r] += d0
			res[r+1] += d1
			res[r+2] += d2
			res[r+3] += d3
		}
		for ; r < rows; r++ {
			m := matrix[r*cols : (r+1)*cols]
			m = m[:len(v)]
			var dot float32
			for i, x := range v {
				dot += float32(m[i] * x)
			}
			res[r] += dot
		}
	}
}

// MatVecInt8 writes W·x (rows x cols, row-major) into acc.
func MatVecInt8(w []int8, rows, cols int, x []int8, acc []int32) {
	r := 0
	for ; r+4 <= rows; r += 4 {
		acc[r], acc[r+1], acc[r+2], acc[r+3] = dotInt8x4(x,
			w[r*cols:(r+1)*cols], w[(r+1)*cols:(r+2)*cols], w[(r+2)*cols:(r+3)*cols], w[(r+3)*cols:(r+4)*cols])
	}
	for ; r < rows; r++ {
		acc[r] = dotInt8(x, w[r*cols:(r+1)*cols])
	}
}

// dotInt8 returns the int32 dot product of a and b[:len(a)] (int32
// wrap-around addition is associative, so the order does not matter).
func dotInt8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// dotInt8x4 returns the dot products of x with four weight rows, loading
// each x value once for all four.
func dotInt8x4(x, w0, w1, w2, w3 []int8) (s0, s1, s2, s3 int32) {
	n := len(x)
	w0, w1, w2, w3 = w0[:n], w1[:n], w2[:n], w3[:n]
	for i, xv := range x {
		v := int32(xv)
		s0 += v * int32(w0[i])
		s1 += v * int32(w1[i])
		s2 += v * int32(w2[i])
		s3 += v * int32(w3[i])
	}
	return
}
