package plugin

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/delego/delego/delegate"
)

// Prefix begins every plugin binary's name: delego-NAME serves the delegate
// NAME.
const Prefix = "delego-"

// EnvPath is the environment variable listing the directories searched for
// plugins first, separated as in $PATH.
const EnvPath = "DELEGO_PLUGIN_PATH"

// SearchDirs returns where plugins are looked for, in order: the
// directories of $DELEGO_PLUGIN_PATH, then the directory of the running
// executable. Empty entries and repeats are dropped.
func SearchDirs() []string {
	var dirs []string
	add := func(d string) {
		if d == "" {
			return
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range filepath.SplitList(os.Getenv(EnvPath)) {
		add(d)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		add(filepath.Dir(exe))
	}
	return dirs
}

// Found is a plugin binary found in the search directories.
type Found struct {
	Name string // what follows "delego-"
	Path string
	// Shadowed are binaries of the same name in later directories, which
	// Path hides.
	Shadowed []string
}

// Discover lists the plugin binaries in dirs, sorted by name; of several
// with the same name, the first directory's wins. A directory that does not
// exist is skipped.
func Discover(dirs []string) ([]Found, error) {
	byName := map[string]*Found{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("look for plugins: %w", err)
		}
		for _, e := range entries {
			name, ok := nameOf(e.Name())
			if !ok {
				continue
			}
			p := filepath.Join(d, e.Name())
			if !isExecutable(p) {
				continue
			}
			if f, ok := byName[name]; ok {
				f.Shadowed = append(f.Shadowed, p)
				continue
			}
			byName[name] = &Found{Name: name, Path: p}
		}
	}
	out := make([]Found, 0, len(byName))
	for _, f := range byName {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Found) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Find returns the path of the plugin binary delego-NAME: the first found in
// dirs. When there is none, the error wraps delegate.ErrUnknownDelegate.
func Find(name string, dirs []string) (string, error) {
	if _, ok := nameOf(Prefix + name); !ok {
		return "", fmt.Errorf("%w %q: not a plugin name", delegate.ErrUnknownDelegate, name)
	}
	for _, d := range dirs {
		p := filepath.Join(d, Prefix+name)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w %q: no plugin binary %s%s in %s (set $%s to add directories)",
		delegate.ErrUnknownDelegate, name, Prefix, name, strings.Join(dirs, string(os.PathListSeparator)), EnvPath)
}

// nameOf returns NAME for a file called delego-NAME, where NAME is
// lower-case letters, digits, '-' and '_', starting with a letter or digit.
func nameOf(file string) (string, bool) {
	name, ok := strings.CutPrefix(file, Prefix)
	if !ok || name == "" {
		return "", false
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '_') && i > 0:
		default:
			return "", false
		}
	}
	return name, true
}

// isExecutable reports whether p is a regular file (after symlinks) that
// someone may execute.
func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// Checksums are pinned SHA-256 sums of plugin binaries, read from a file in
// the format sha256sum writes ("HEX  NAME" per line).
type Checksums struct {
	file  string
	sums  map[string][]byte // by the name as written
	names map[string][]byte // by base name
}

// ReadChecksums reads a sha256sum-style file: one "HEX  NAME" line per
// binary (NAME may be a path, or a base name such as delego-cpu; a leading
// '*' is ignored); blank lines and lines starting with '#' are skipped.
func ReadChecksums(file string) (*Checksums, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("plugin checksums: %w", err)
	}
	defer f.Close()
	c := &Checksums{file: file, sums: map[string][]byte{}, names: map[string][]byte{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		hexSum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimSpace(name), "*")
		sum, err := hex.DecodeString(hexSum)
		if !ok || name == "" || err != nil || len(sum) != 32 {
			return nil, fmt.Errorf("plugin checksums: %s:%d: want a SHA-256 in hex, then the file name", file, n)
		}
		c.sums[name] = sum
		c.names[filepath.Base(name)] = sum
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("plugin checksums: %s: %w", file, err)
	}
	return c, nil
}

// For returns the pinned sum of the binary at path: the line naming that
// path, else the one naming its base name. A binary the file does not list
// is an error: with pinning on, only pinned plugins run.
func (c *Checksums) For(path string) ([]byte, error) {
	if s, ok := c.sums[path]; ok {
		return s, nil
	}
	if s, ok := c.names[filepath.Base(path)]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w: %s is not listed in %s", ErrChecksum, path, c.file)
}
