package plugin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Vet returns path, made absolute, when the plugin binary it names may run
// as one found in the search directories may (see Search): an executable
// file that no other user could replace, its own directory standing for
// the search directory. A relative path is refused, as a relative search
// directory is, unless AllowInsecure takes it from the working directory.
// A refusal wraps ErrInsecure.
func (s Search) Vet(path string) (string, error) {
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", fmt.Errorf("plugin binary %q: %w", path, err)
		}
		if !s.AllowInsecure {
			return "", fmt.Errorf("plugin binary %q %w: it is relative, so what runs would be whatever the working directory holds; use an absolute path, such as %s",
				path, ErrInsecure, abs)
		}
		path = abs
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("no plugin binary %s", path)
	case err != nil:
		return "", fmt.Errorf("plugin binary %s: %w", path, err)
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("plugin binary %s is not an executable file", path)
	}
	return path, s.vet(filepath.Dir(path), path)
}
