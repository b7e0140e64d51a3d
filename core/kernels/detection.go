package kernels

// detectionOps returns the registrations of this op family.
func detectionOps() []Registration { return nil }
