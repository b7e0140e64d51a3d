package f32elem

// Args is one call of an assembly kernel. Its layout is read by the
// assembly (see TestAsmLayout and args.h): keep the fields in order.
type Args struct {
	X, Y, Z *float32 // inputs and output; Y is X for a unary op
	N       int      // elements
	// XStep and YStep are 1 where the input advances with the output and
	// 0 where it is one element broadcast: then the pointer is Buf, which
	// holds that element 16 times.
	XStep, YStep int
	Op           int32 // an Op
	Lo, Hi       float32
	Alpha        float32
	Buf          [16]float32
}
