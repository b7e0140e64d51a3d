package kernels

// qvKernel names an implementation of the byte-dot-product kernels: the
// GEMM tile kernel (conv_qvnni.go) and the depthwise row kernel
// (conv_dwvnni.go). An op fixes it when it is prepared; qvBest is the one
// this CPU and build run fastest.
type qvKernel uint8

const (
	qvPortable qvKernel = iota // none: the portable layouts (conv_qgemm.go, conv_dwpacked.go)
	qvGoU8                     // the pure-Go twins, on uint8 rows
	qvGoS8                     // the pure-Go twins, on int8 rows
	qvVNNI                     // amd64 AVX-512 VNNI (VPDPBUSD, VPDPWSSD), uint8 rows
	qvAVXVNNI                  // amd64 AVX2 with AVX-VNNI's 256-bit VPDPBUSD, uint8 rows
	qvAVX2                     // amd64 AVX2 (VPMOVSXBW, VPMADDWD), uint8 rows
	qvNEON                     // arm64 NEON (SMULL, SADALP, SMLAL), int8 rows
	qvNEONDot                  // arm64 NEON with SDOT (FEAT_DotProd), int8 rows
	qvAVX512BW                 // amd64 AVX-512BW without VNNI (VPMADDWD on widened bytes), uint8 rows
)

// String names k in test output.
func (k qvKernel) String() string {
	return [...]string{"portable", "go-u8", "go-s8", "vnni", "avxvnni", "avx2", "neon", "neon-dot", "avx512bw"}[k]
}

// signedRows says whether k's tile kernel reads the rows of the left-hand
// side as int8 (SDOT and SMULL multiply bytes of one signedness) rather
// than as uint8 (VPDPBUSD multiplies unsigned by signed bytes).
func (k qvKernel) signedRows() bool {
	return k == qvGoS8 || k == qvNEON || k == qvNEONDot
}

// qgemmTile runs tile kernel k on t.
func qgemmTile(k qvKernel, t *qgemmTileArgs) {
	if k == qvGoU8 || k == qvGoS8 {
		qgemmTileGo(t)
		return
	}
	qgemmTileAsm(k, t)
}

// dwRow runs depthwise row kernel k on t.
func dwRow(k qvKernel, t *dwRowArgs) {
	if k == qvGoU8 || k == qvGoS8 {
		dwRowGo(t)
		return
	}
	dwRowAsm(k, t)
}
