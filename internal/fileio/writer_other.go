//go:build !unix

package fileio

import "os"

// otherWriter is false here: there are no FIFOs to wait on.
func otherWriter(*os.File) bool { return false }
