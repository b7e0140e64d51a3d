//go:build purego

package integration

// buildTags are passed to the binaries the tests build, so that a purego
// test run drives purego plugins and delego (the same kernels as in process).
const buildTags = "purego"
