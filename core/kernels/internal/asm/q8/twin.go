package q8

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// tileGo is the pure-Go twin of the assembly tile kernels: for each row r
// and channel c of the tile, the exact int32 sum of the row's bytes times
// the weights (with UnsignedW, the weights read as uint8) plus the row term, requantized with ruy's rounding, stored
// where the mask allows.
func tileGo(t *TileArgs) {
	lda, k4 := t.LDA, t.K4
	rowBytes, wBytes := 4*k4, 64*k4
	if t.Wide != 0 {
		rowBytes, wBytes = 8*k4, 128*k4
	}
	a := unsafe.Slice(t.A, (t.Rows-1)*lda+rowBytes)
	w := unsafe.Slice(t.W, (t.NB-1)*t.WStride+wBytes)
	rowterm := unsafe.Slice(t.RowTerm, t.Rows)
	qp := unsafe.Slice(t.QP, t.NB)
	// The last block's masked-off lanes may lie past the output's end.
	out := unsafe.Slice(t.Out, (t.Rows-1)*t.LDO+16*(t.NB-1)+bits.Len64(t.Tail&0xffff))
	zp, lo, hi := int32(t.ZP), int32(t.Lo), int32(t.Hi)
	var acc [16]int32
	for r := range t.Rows {
		row := a[r*lda : r*lda+rowBytes]
		for b := range t.NB {
			wb := w[b*t.WStride : b*t.WStride+wBytes]
			switch {
			case t.Wide != 0:
				blockWideGo(row, wb, &acc)
			case t.Deep != 0:
				blockDeepGo(row, t.Signed != 0, wb, &acc)
			default:
				blockGo(row, t.Signed != 0, t.UnsignedW != 0, wb, &acc)
			}
			mask := uint64(0xffff)
			if b == t.NB-1 {
				mask = t.Tail
			}
			o := out[r*t.LDO+16*b:]
			for j := range 16 {
				if mask&(1<<j) != 0 {
					q := qp[b].Lane(j)
					o[j] = uint8(q.Ruy(acc[j]+rowterm[r], zp, lo, hi))
				}
			}
		}
	}
}

// blockGo sets acc[j] to sum_k row[k] * w[k][j] for one block, the row's
// bytes read as int8 when signed, else as uint8, and the weights as uint8
// when unsignedW, else as int8.
func blockGo(row []uint8, signed, unsignedW bool, w []int8, acc *[16]int32) {
	*acc = [16]int32{}
	var x [4]int32
	for g := 0; g < len(row); g += 4 {
		for i, b := range row[g : g+4] {
			x[i] = int32(b)
			if signed {
				x[i] = int32(int8(b))
			}
		}
		wg := w[16*g : 16*g+64 : 16*g+64]
		if unsignedW {
			for j := range 16 {
				acc[j] += x[0]*int32(uint8(wg[4*j])) + x[1]*int32(uint8(wg[4*j+1])) +
					x[2]*int32(uint8(wg[4*j+2])) + x[3]*int32(uint8(wg[4*j+3]))
			}
			continue
		}
		for j := range 16 {
			acc[j] += x[0]*int32(wg[4*j]) + x[1]*int32(wg[4*j+1]) +
				x[2]*int32(wg[4*j+2]) + x[3]*int32(wg[4*j+3])
		}
	}
}

// blockDeepGo is blockGo on the deep layout (DeepIndex): each quarter of
// the block holds 16 depth steps of its 4 channels in turn.
func blockDeepGo(row []uint8, signed bool, w []int8, acc *[16]int32) {
	*acc = [16]int32{}
	k4 := len(row) / 4
	for k, b := range row {
		x := int32(b)
		if signed {
			x = int32(int8(b))
		}
		for j := range 16 {
			acc[j] += x * int32(w[DeepIndex(k4, j, k)])
		}
	}
}

// blockWideGo is blockGo on the wide layout: row holds 4*K4 int16 and w
// [K4][2][16][2] int16, both as little-endian bytes.
func blockWideGo(row []uint8, w []int8, acc *[16]int32) {
	*acc = [16]int32{}
	wb := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(w))), len(w))
	for k := 0; 2*k < len(row); k += 2 {
		x0 := int32(int16(binary.LittleEndian.Uint16(row[2*k:])))
		x1 := int32(int16(binary.LittleEndian.Uint16(row[2*k+2:])))
		// Depth steps k and k+1 (k even) of channel j are pair j of
		// half (k/2)%2 of depth group k/4.
		half := wb[128*(k/4)+64*((k/2)%2):]
		for j := range 16 {
			w0 := int32(int16(binary.LittleEndian.Uint16(half[4*j:])))
			w1 := int32(int16(binary.LittleEndian.Uint16(half[4*j+2:])))
			acc[j] += x0*w0 + x1*w1
		}
	}
}

// widenGo is WidenRows in Go.
func widenGo(dst []uint16, src []uint8, signed bool) {
	for i, b := range src {
		dst[i] = uint16(b)
		if signed {
			dst[i] = uint16(int8(b))
		}
	}
}

// rowGo is the pure-Go twin of the assembly row kernels.
func rowGo(t *RowArgs) {
	rows := unsafe.Slice(t.Rows, t.KH)
	nc := 16 * t.NB
	slots := t.KW // weight slots of a filter row
	if t.Paired != 0 {
		slots = (t.KW + 1) / 2
	}
	w := unsafe.Slice(t.W, t.KH*slots*t.WStride/4)
	qp := unsafe.Slice(t.QP, t.NB)
	zp, lo, hi := int32(t.ZP), int32(t.Lo), int32(t.Hi)
	width := nc - 16 + bits.Len64(t.Tail&0xffff) // the last block's masked-off lanes may lie past the output's end
	for p := range t.NPix {
		out := unsafe.Slice((*uint8)(unsafe.Add(unsafe.Pointer(t.Out), p*t.OutC)), width)
		for c := range width {
			if c >= nc-16 && t.Tail&(1<<(c%16)) == 0 {
				continue
			}
			var acc int32
			for ky := range t.KH {
				for kx := range t.KW {
					x := *(*uint8)(unsafe.Add(rows[ky], p*t.PixStep+kx*t.TapStep+c))
					v := int32(x)
					if t.Signed != 0 {
						v = int32(int8(x))
					}
					slot, half := ky*slots+kx, 0
					if t.Paired != 0 {
						slot, half = ky*slots+kx/2, kx%2
					}
					acc += v * int32(int16(w[slot*t.WStride/4+c]>>(16*half)))
				}
			}
			q := qp[c/16].Lane(c % 16)
			out[c] = uint8(q.TFL(acc, zp, lo, hi))
		}
	}
}
