//go:build unix

package plugin

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// shmSupported reports whether this platform can share tensor memory.
const shmSupported = true

// region is a shared memory mapping: the host's view or the plugin's.
type region struct {
	data []byte
}

// defaultShmDir is /dev/shm when it is a directory we can write to (a tmpfs
// on Linux), else the temporary directory.
func defaultShmDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}

// createRegion makes a region of size bytes in a new file of dir, mode 0600,
// and maps it. The caller unlinks path once the plugin has mapped it too.
func createRegion(dir string, size int) (r *region, path string, err error) {
	f, err := os.CreateTemp(dir, "delego-shm-*")
	if err != nil {
		return nil, "", fmt.Errorf("shared memory: %w", err)
	}
	path = f.Name()
	defer func() {
		f.Close()
		if err != nil {
			os.Remove(path)
		}
	}()
	// CreateTemp makes the file 0600 already; make sure whatever the umask.
	if err := f.Chmod(0o600); err != nil {
		return nil, "", fmt.Errorf("shared memory: %w", err)
	}
	if err := f.Truncate(int64(size)); err != nil {
		return nil, "", fmt.Errorf("shared memory: %w", err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, "", fmt.Errorf("shared memory: map %d bytes: %w", size, err)
	}
	return &region{data: data}, path, nil
}

// openRegion maps the host's region file at path, of size bytes, after
// checking it as mapRegion does.
func openRegion(path string, size int) (*region, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("shared memory: open %s: %w", path, err)
	}
	defer unix.Close(fd)
	return mapRegion(fd, path, size)
}

// mapRegion maps the region open as fd (name says what it is, for
// messages), of size bytes, after checking that it is what a delego host
// makes: a regular file of that size, owned by this user, closed to
// everybody else.
func mapRegion(fd int, name string, size int) (*region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("shared memory: size %d", size)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("shared memory: %s: %w", name, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, fmt.Errorf("shared memory: %s is not a regular file", name)
	case st.Size != int64(size):
		return nil, fmt.Errorf("shared memory: %s holds %d bytes, want %d", name, st.Size, size)
	case int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("shared memory: %s belongs to user %d, not %d", name, st.Uid, os.Geteuid())
	case st.Mode&0o077 != 0:
		return nil, fmt.Errorf("shared memory: %s has mode %o; want it closed to group and others", name, st.Mode&0o777)
	}
	data, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shared memory: map %s: %w", name, err)
	}
	return &region{data: data}, nil
}

// close unmaps the region.
func (r *region) close() error {
	if r == nil || r.data == nil {
		return nil
	}
	err := unix.Munmap(r.data)
	r.data = nil
	if err != nil {
		return fmt.Errorf("shared memory: unmap: %w", err)
	}
	return nil
}

// slice returns bytes [off, off+n) of the region.
func (r *region) slice(off, n uint64) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no shared memory region attached")
	}
	size := uint64(len(r.data))
	if off > size || n > size-off {
		return nil, fmt.Errorf("range [%d, %d+%d) outside the %d-byte shared memory region", off, off, n, size)
	}
	return r.data[off : off+n : off+n], nil
}
