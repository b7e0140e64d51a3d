package plugin

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"syscall"

	goplugin "github.com/hashicorp/go-plugin"
)

// pin opens the binary at path and checks that its SHA-256 is sum. The
// host passes the open file to the plugin process and executes it as
// /proc/self/fd/N, so the bytes that run are the bytes hashed here: a file
// put in path's place meanwhile is never run; go-plugin's check by path,
// which other platforms use, is not needed (secure is nil). Executing
// through the open file rather than fexecve with a close-on-exec
// descriptor lets a script run too: its interpreter opens /proc/self/fd/N
// after the exec.
func pin(path string, sum []byte) (f *os.File, secure *goplugin.SecureConfig, err error) {
	// O_NONBLOCK: a FIFO in the binary's place must not hang the open.
	f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open the pinned binary: %w", err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	h := sha256.New()
	if err == nil {
		_, err = io.Copy(h, f)
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("hash the pinned binary: %w", err)
	}
	if got := h.Sum(nil); !bytes.Equal(got, sum) {
		f.Close()
		return nil, nil, fmt.Errorf("%w: its SHA-256 is %x, not the pinned %x", ErrChecksum, got, sum)
	}
	return f, nil, nil
}
