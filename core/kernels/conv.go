package kernels

// convOps returns the registrations of this op family.
func convOps() []Registration { return nil }
