package f32elem

// TileLen is about how many elements Tiled tiles a repeated row to.
const TileLen = 1024

// Tiled runs a binary op whose one operand is a short row (a per-channel
// bias, scale or PRELU alpha) repeated along the other operand. Called row
// by row, a row of 16 channels would cost a kernel call per 16 elements;
// Tiled copies the row into a tile of about TileLen elements (a whole
// number of rows) and calls the kernel on runs of the tile instead. The
// same pairs of elements meet, so the results are the row-by-row ones, bit
// for bit. Its Chunk method lets a team of workers share the op in whole
// tiles; an op keeps its Tiled so that the tile's buffer is reused and
// handing it to the team allocates nothing.
type Tiled struct {
	buf    []float32 // kept between uses
	row    []float32 // the tile, in buf
	x, z   []float32 // the other operand and the output
	rowIsY bool      // the row is the op's second operand
	op     Op
	lo, hi float32
}

// Set prepares z[i] = op(x[i], row[i%len(row)]) (rowIsY) or
// op(row[i%len(row)], x[i]) for the elements of x, z as long as x, with
// Binary's clamp [lo, hi]. len(x) must be a multiple of len(row).
func (t *Tiled) Set(op Op, row, x, z []float32, rowIsY bool, lo, hi float32) {
	size := len(row) * max(1, TileLen/len(row))
	if cap(t.buf) < size {
		t.buf = make([]float32, size)
	}
	t.row = t.buf[:size]
	for i := 0; i < size; i += len(row) {
		copy(t.row[i:], row)
	}
	t.x, t.z, t.rowIsY, t.op, t.lo, t.hi = x, z[:len(x)], rowIsY, op, lo, hi
}

// Len is the tile's length: the grain in which Chunk's bounds fall.
func (t *Tiled) Len() int { return len(t.row) }

// Chunk computes output elements [lo, hi), lo a multiple of Len, in runs
// of the tile.
func (t *Tiled) Chunk(_, lo, hi int) {
	size := len(t.row)
	for i := lo; i < hi; i += size {
		j := min(i+size, hi)
		if t.rowIsY {
			Binary(t.op, t.z[i:j], t.x[i:j], t.row[:j-i], t.lo, t.hi)
		} else {
			Binary(t.op, t.z[i:j], t.row[:j-i], t.x[i:j], t.lo, t.hi)
		}
	}
}

// Run computes all of the op's elements on the calling goroutine.
func (t *Tiled) Run() { t.Chunk(0, 0, len(t.x)) }

// Clear drops the references to the operands, keeping the buffer.
func (t *Tiled) Clear() { *t = Tiled{buf: t.buf} }
