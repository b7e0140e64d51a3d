//go:build unix

package plugin

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// place is the part a file plays in a plugin's path, which decides what
// another user's write access to it would allow.
type place int

const (
	binaryFile place = iota // the plugin binary
	resolved                // the binary, when found through a symlink
	holderDir               // a directory holding it: others could add entries
	aboveDir                // a directory above one: others could move it aside
)

// untrusted returns why the plugin binary at path, found in the search
// directory dir, could be replaced by a user other than the one running
// delego and root, or "" when it could not. It checks the binary and its
// directory with symlinks resolved, the search directory (which holds the
// link, when path is one) and every directory above those two.
func untrusted(dir, path string) (string, error) {
	bin, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	search, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	file := binaryFile
	if bin != path {
		file = resolved
	}
	type check struct {
		path  string
		place place
	}
	holders := []string{filepath.Dir(bin), search}
	checks := []check{{bin, file}, {holders[0], holderDir}, {holders[1], holderDir}}
	for _, h := range holders {
		for d := h; d != filepath.Dir(d); {
			d = filepath.Dir(d)
			checks = append(checks, check{d, aboveDir})
		}
	}
	done := map[string]bool{} // a holder is checked as one, not as a directory above
	for _, c := range checks {
		if done[c.path] {
			continue
		}
		done[c.path] = true
		if why, err := c.place.untrusted(c.path, os.Geteuid()); why != "" || err != nil {
			return why, err
		}
	}
	return "", nil
}

// untrusted returns why the file p, in place pl, lets a user other than
// euid and root replace the plugin, or "".
func (pl place) untrusted(p string, euid int) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("%s: no owner in its file information", p)
	}
	mode := fi.Mode()
	switch uid := int(st.Uid); {
	case mode.Perm()&0o002 != 0 && (pl != aboveDir || mode&os.ModeSticky == 0):
		return fmt.Sprintf("%s is writable by every user (mode %04o), so any user could %s; fix: chmod o-w %s",
			pl.what(p), octal(mode), pl.threat(), p), nil
	case uid != euid && uid != 0:
		return fmt.Sprintf("%s belongs to %s, who is neither you nor root, so that user could %s; fix: have it owned by you or root",
			pl.what(p), userName(uid), pl.threat()), nil
	}
	return "", nil
}

// what names the file p in place pl.
func (pl place) what(p string) string {
	switch pl {
	case binaryFile:
		return "it"
	case resolved:
		return "the file it resolves to, " + p + ","
	case holderDir:
		return "its directory " + p
	}
	return "the directory " + p + " above it"
}

// threat says what another user's write access to a file in place pl
// would let them do.
func (pl place) threat() string {
	switch pl {
	case binaryFile, resolved:
		return "replace the plugin with a program of their own"
	case holderDir:
		return "put programs of their own there as plugins"
	}
	return "move the plugin's directory aside and put one of their own in its place"
}

// octal is m as chmod writes it: the permission bits, then sticky, setgid
// and setuid above them.
func octal(m os.FileMode) uint32 {
	o := uint32(m.Perm())
	for bit, flag := range map[uint32]os.FileMode{0o1000: os.ModeSticky, 0o2000: os.ModeSetgid, 0o4000: os.ModeSetuid} {
		if m&flag != 0 {
			o |= bit
		}
	}
	return o
}

// userName names the user uid for a message: "user NAME (uid N)", or
// "uid N" when the name cannot be had.
func userName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil {
		return "user " + u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
