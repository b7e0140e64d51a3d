package lut8

// ApplyGo is the twin, for the external tests (which import kerneltest,
// whose kernel package imports this one).
var ApplyGo = applyGo
