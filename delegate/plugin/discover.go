package plugin

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
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

// ErrInsecure is wrapped by the error of a plugin binary, or a search
// directory, that a Search refuses: one that someone other than the user
// running delego (or root) could replace.
var ErrInsecure = errors.New("refused as insecure")

// SystemDir is the folder of the plugins installed for every user of the
// machine, searched last.
const SystemDir = "/usr/lib/delego/plugins"

// SearchDirs returns where plugins are looked for, in order: the
// directories of $DELEGO_PLUGIN_PATH, the directory of the running
// executable, the user's folder (UserDir) and the system's (SystemDir).
// Empty entries and repeats are dropped; a relative entry of
// $DELEGO_PLUGIN_PATH is kept as written, for Search to refuse by name.
func SearchDirs() []string { return searchDirs(SystemDir) }

// searchDirs is SearchDirs with system as the system's folder.
func searchDirs(system string) []string {
	var dirs []string
	add := func(d string) {
		if d != "" && !slices.Contains(dirs, d) {
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
	add(UserDir())
	add(system)
	return dirs
}

// UserDir is the folder of the plugins one user installs for themselves:
// $XDG_DATA_HOME/delego/plugins, or ~/.local/share/delego/plugins when
// $XDG_DATA_HOME is unset or relative (the XDG Base Directory rule); ""
// when there is no home directory either.
func UserDir() string {
	data := os.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(data) {
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return ""
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "delego", "plugins")
}

// Found is a plugin binary found in the search directories.
type Found struct {
	Name string // what follows "delego-"
	Path string
	// Shadowed are binaries of the same name in later directories, which
	// Path hides.
	Shadowed []string
	// Refused, when not nil, says why Path must not run; it wraps
	// ErrInsecure.
	Refused error
}

// Search looks for plugin binaries in Dirs, in order. It refuses what
// another user could swap for a program of their own, since a plugin runs
// with the rights of the user running delego: a relative directory
// (whatever the working directory holds would run), and, on Unix, a
// binary whose file, directory or search directory (symlinks resolved) is
// writable by every user or owned by a user other than the one running
// delego and root, or that sits below such a directory (one writable by
// every user counts there only without the sticky bit, which stops others
// moving it aside). Write access for the group is accepted: it is granted
// to chosen users, and it is what a umask of 002 gives every file on
// systems with a group per user.
type Search struct {
	// Dirs are the directories searched, in order; a directory that does
	// not exist is skipped.
	Dirs []string
	// AllowInsecure skips the checks: relative directories are taken
	// from the working directory and every binary is accepted.
	AllowInsecure bool
}

// Find returns the path of the plugin binary delego-NAME in dirs, as
// Search{Dirs: dirs}.Find does.
func Find(name string, dirs []string) (string, error) { return Search{Dirs: dirs}.Find(name) }

// Discover lists the plugin binaries in dirs, as Search{Dirs:
// dirs}.Discover does.
func Discover(dirs []string) ([]Found, error) { return Search{Dirs: dirs}.Discover() }

// Find returns the path of the plugin binary delego-NAME: the first found in
// the directories. When there is none, the error wraps
// delegate.ErrUnknownDelegate, and names the files of that name it passed
// over and why (not executable, a directory, ...); when the first one
// found, or a directory, is refused, it wraps ErrInsecure (a later binary
// is not tried: the one the user put first is the one to fix).
func (s Search) Find(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", fmt.Errorf("%w: %w", delegate.ErrUnknownDelegate, err)
	}
	dirs, err := s.dirs()
	if err != nil {
		return "", err
	}
	var passed []string
	for _, d := range dirs {
		p := filepath.Join(d, Prefix+name)
		if why := whyNotBinary(p); why != "" {
			if why != absent {
				passed = append(passed, fmt.Sprintf("; passed over %s: %s", p, why))
			}
			continue
		}
		if err := s.vet(d, p); err != nil {
			return "", err
		}
		return p, nil
	}
	return "", fmt.Errorf("%w %q: no plugin binary %s%s in %s (set $%s to add directories)%s",
		delegate.ErrUnknownDelegate, name, Prefix, name, strings.Join(dirs, string(os.PathListSeparator)), EnvPath,
		strings.Join(passed, ""))
}

// Skipped is a file in a search directory whose name begins with
// "delego-", as a plugin binary's does, that is not taken for one.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"` // why, in words, with the fix when there is one
}

// Listing is what Search.List finds in the search directories.
type Listing struct {
	Found   []Found   // the plugin binaries, sorted by name
	Skipped []Skipped // in the order of the directories, then of names
}

// Discover lists the plugin binaries in the directories, sorted by name; of
// several with the same name, the first directory's wins, and says in
// Refused why it must not run, if it must not. It is List's Found.
func (s Search) Discover() ([]Found, error) {
	l, err := s.List()
	return l.Found, err
}

// List lists the plugin binaries in the directories, as Discover does, and
// the files named delego-... that it skipped, saying why: a name that is
// not a plugin's (delego-My.TPU, delego-x.sh), a file that is not
// executable, a directory, a dangling symbolic link. A search directory
// that does not exist is passed over; one that cannot be read is skipped
// too, saying why, so that one unreadable folder does not hide the others.
func (s Search) List() (Listing, error) {
	dirs, err := s.dirs()
	if err != nil {
		return Listing{}, err
	}
	var l Listing
	byName := map[string]*Found{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			l.Skipped = append(l.Skipped, Skipped{d, "this search directory cannot be read: " + cause(err)})
			continue
		}
		for _, e := range entries {
			rest, ok := strings.CutPrefix(e.Name(), Prefix)
			if !ok {
				continue
			}
			p := filepath.Join(d, e.Name())
			if err := CheckName(rest); err != nil {
				l.Skipped = append(l.Skipped, Skipped{p, err.Error()})
				continue
			}
			if why := whyNotBinary(p); why != "" {
				l.Skipped = append(l.Skipped, Skipped{p, why})
				continue
			}
			if f, ok := byName[rest]; ok {
				f.Shadowed = append(f.Shadowed, p)
				continue
			}
			byName[rest] = &Found{Name: rest, Path: p, Refused: s.vet(d, p)}
		}
	}
	for _, f := range byName {
		l.Found = append(l.Found, *f)
	}
	slices.SortFunc(l.Found, func(a, b Found) int { return strings.Compare(a.Name, b.Name) })
	return l, nil
}

// dirs returns the directories to search, absolute: a relative one is
// refused, unless AllowInsecure takes it from the working directory.
func (s Search) dirs() ([]string, error) {
	dirs := make([]string, 0, len(s.Dirs))
	for _, d := range s.Dirs {
		if !filepath.IsAbs(d) {
			abs, err := filepath.Abs(d)
			if err != nil {
				return nil, fmt.Errorf("plugin search directory %q: %w", d, err)
			}
			if !s.AllowInsecure {
				return nil, fmt.Errorf("plugin search directory %q %w: it is relative, so the plugins that run would be whatever the working directory holds; use an absolute path, such as %s",
					d, ErrInsecure, abs)
			}
			d = abs
		}
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// vet returns why the plugin binary at path, found in the search directory
// dir, must not run (an error wrapping ErrInsecure), or nil.
func (s Search) vet(dir, path string) error {
	if s.AllowInsecure {
		return nil
	}
	why, err := untrusted(dir, path)
	switch {
	case err != nil:
		return fmt.Errorf("plugin %s %w: cannot check who could replace it: %w", path, ErrInsecure, err)
	case why != "":
		return fmt.Errorf("plugin %s %w: %s", path, ErrInsecure, why)
	}
	return nil
}

// CheckName accepts what can follow "delego-" in a plugin binary's name,
// the name of its delegate: lower-case letters, digits, '-' and '_',
// starting with a letter or digit. The error names the first character
// that does not belong.
func CheckName(name string) error {
	const rule = "a delegate's name takes only letters, digits, '-' and '_' (letters lower-case, '-' and '_' not first)"
	if name == "" {
		return errors.New("empty delegate name: " + rule)
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '_') && i > 0:
		default:
			return fmt.Errorf("delegate name %q holds %q: %s", name, r, rule)
		}
	}
	return nil
}

// cause is what the system said of a file operation that failed ("permission
// denied"), without the operation and path that the message around it names.
func cause(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// absent is whyNotBinary's answer for a path where there is no file at all.
const absent = "there is no such file"

// whyNotBinary says why the file at p cannot be a plugin binary, or ""
// when it can: a regular file, after symlinks, that someone may execute.
func whyNotBinary(p string) string {
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if target, lerr := os.Readlink(p); lerr == nil {
			return fmt.Sprintf("it is a symbolic link to %s, which does not exist", target)
		}
		return absent
	}
	if err != nil {
		return "it cannot be examined: " + cause(err)
	}
	mode := st.Mode()
	switch {
	case mode.IsDir():
		return "it is a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "it is a named pipe, not a program"
	case mode&fs.ModeSocket != 0:
		return "it is a socket, not a program"
	case mode&fs.ModeDevice != 0:
		return "it is a device, not a program"
	case !mode.IsRegular():
		return "it is not a regular file"
	case mode.Perm()&0o111 == 0:
		return fmt.Sprintf("it is not executable (mode %04o); fix: chmod +x %s", mode.Perm(), p)
	}
	return ""
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
