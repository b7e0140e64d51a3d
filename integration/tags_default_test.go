//go:build !purego

package integration

// buildTags are passed to the binaries the tests build (see
// tags_purego_test.go).
const buildTags = ""
