package kernel

// ExactClamper is an op with a float output that can clamp that output,
// after its own fused activation, as a standalone float RELU or RELU6 op
// does: a RELU or RELU6 node reading only that output then fuses into the
// op with the same bytes (core's activation fusion). A fused activation
// keeps a NaN and a -0 (TFLite's ActivationFunctionWithMinMax); the
// standalone ops map both to 0, which the fused one cannot do.
type ExactClamper interface {
	// ClampExactly makes every later Eval clamp the op's float output
	// to [lo, hi] as the standalone op does (see ExactClamp.Range). A
	// second call clamps after the first: for ranges of one lo, such as
	// RELU's and RELU6's, that is the clamp to [lo, the lesser hi].
	ClampExactly(lo, hi float32)
}

// ExactClamp is the clamp of an ExactClamper: embedded in an op, it gives
// the op the method; the op's Eval clamps its output to its Range.
type ExactClamp struct {
	set    bool
	lo, hi float32
}

// ClampExactly implements ExactClamper.
func (c *ExactClamp) ClampExactly(lo, hi float32) {
	if c.set {
		lo, hi = max(lo, c.lo), min(hi, c.hi)
	}
	c.set, c.lo, c.hi = true, lo, hi
}

// Range is the clamp's range, and whether one is set: the op's Eval
// then maps each float output element v to v > lo ? v : lo, then v < hi
// ? v : hi, the standalone RELU's `if !(v > 0) { v = 0 }` (hi +Inf) and
// RELU6's, bit for bit (f32elem's MaxMin).
func (c *ExactClamp) Range() (lo, hi float32, set bool) { return c.lo, c.hi, c.set }
