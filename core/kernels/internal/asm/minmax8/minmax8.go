package minmax8

// Kernel names a row kernel; 0 is the pure-Go twin.
type Kernel int

// Op is what a row computes.
type Op int

// The ops: the larger or the smaller value, of uint8 or of int8 bytes.
const (
	MaxU8 Op = iota
	MaxI8
	MinU8
	MinI8
)

// Best is the kernel MAXIMUM and MINIMUM run: the first of Kernels, or 0
// for the pure-Go twin.
func Best() Kernel { return best }

// Run sets z[i] to op of x[i] and y[i]; x, y and z are equally long.
func (k Kernel) Run(op Op, z, x, y []byte) {
	x, y = x[:len(z)], y[:len(z)]
	done := 0
	if k != 0 && len(z) > 0 {
		done = k.run(op, z, x, y)
	}
	runGo(op, z[done:], x[done:], y[done:])
}

// runGo is the twin: x > y ? x : y for the maxima, x < y ? x : y for the
// minima, as MAXIMUM and MINIMUM compare.
func runGo(op Op, z, x, y []byte) {
	x, y = x[:len(z)], y[:len(z)]
	switch op {
	case MaxU8:
		for i := range z {
			z[i] = max(x[i], y[i])
		}
	case MinU8:
		for i := range z {
			z[i] = min(x[i], y[i])
		}
	case MaxI8:
		for i := range z {
			z[i] = byte(max(int8(x[i]), int8(y[i])))
		}
	case MinI8:
		for i := range z {
			z[i] = byte(min(int8(x[i]), int8(y[i])))
		}
	}
}
