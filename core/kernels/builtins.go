package kernels

// Builtins returns a new registry holding every built-in kernel.
func Builtins() *Registry {
	r := NewRegistry()
	for _, family := range [][]Registration{
		convOps(),
		transposeConvOps(),
		elementwiseOps(),
		activationOps(),
		quantizeOps(),
		poolOps(),
		reduceOps(),
		padOps(),
		resizeOps(),
		argMinMaxOps(),
		shapeOps(),
		spaceBatchOps(),
		l2NormOps(),
		lstmOps(),
		detectionOps(),
		posenetOps(),
	} {
		for _, reg := range family {
			r.Register(reg)
		}
	}
	return r
}
