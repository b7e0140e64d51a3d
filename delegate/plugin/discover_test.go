//go:build unix

package plugin_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
)

// otherUID owns the files of the cases "owned by another user": nobody on
// most systems.
const otherUID = 65534

// fakePlugin writes an executable delego-NAME into dir and returns its path.
// It never runs: these tests only look for it.
func fakePlugin(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, plugin.Prefix+name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// chownOther gives p to otherUID; only root may, so elsewhere the case is
// skipped, saying why.
func chownOther(t *testing.T, p string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("giving a file to uid %d takes root; this test runs as uid %d", otherUID, os.Geteuid())
	}
	must(t, os.Chown(p, otherUID, -1))
}

// TestSearchRefusesInsecure builds, for each case, a search directory
// holding delego-x and loosens one thing: Find and Discover refuse the
// binary, saying what is wrong, where, and why it matters; AllowInsecure
// finds it as before.
func TestSearchRefusesInsecure(t *testing.T) {
	for _, c := range []struct {
		name string
		// spoil loosens the layout: top is a private directory, dir the
		// search directory inside it, bin the binary in dir.
		spoil func(t *testing.T, top, dir, bin string)
		want  []string // in the refusal; nil: accepted
	}{
		{"binary 0777", func(t *testing.T, top, dir, bin string) {
			must(t, os.Chmod(bin, 0o777))
		}, []string{"insecure: it is writable by every user (mode 0777)", "any user could replace the plugin", "chmod o-w {bin}"}},
		{"binary writable by others only", func(t *testing.T, top, dir, bin string) {
			must(t, os.Chmod(bin, 0o757))
		}, []string{"insecure: it is writable by every user (mode 0757)"}},
		{"directory 0777", func(t *testing.T, top, dir, bin string) {
			must(t, os.Chmod(dir, 0o777))
		}, []string{"its directory {dir} is writable by every user (mode 0777)", "any user could put programs of their own there", "chmod o-w {dir}"}},
		{"directory 1777 (sticky)", func(t *testing.T, top, dir, bin string) {
			must(t, os.Chmod(dir, 0o777|os.ModeSticky))
		}, []string{"its directory {dir} is writable by every user (mode 1777)"}},
		{"directory above 0777", func(t *testing.T, top, dir, bin string) {
			must(t, os.Chmod(top, 0o777))
		}, []string{"the directory {top} above it is writable by every user (mode 0777)", "move the plugin's directory aside"}},
		{"binary owned by another user", func(t *testing.T, top, dir, bin string) {
			chownOther(t, bin)
		}, []string{"insecure: it belongs to ", "(uid 65534), who is neither you nor root", "could replace the plugin"}},
		{"directory owned by another user", func(t *testing.T, top, dir, bin string) {
			chownOther(t, dir)
		}, []string{"its directory {dir} belongs to ", "(uid 65534)"}},
		{"directory above owned by another user", func(t *testing.T, top, dir, bin string) {
			chownOther(t, top)
		}, []string{"the directory {top} above it belongs to ", "(uid 65534)"}},
		{"symlink to a binary 0777", func(t *testing.T, top, dir, bin string) {
			real := filepath.Join(top, "real")
			must(t, os.Rename(bin, real))
			must(t, os.Chmod(real, 0o777))
			must(t, os.Symlink(real, bin))
		}, []string{"the file it resolves to, {top}/real, is writable by every user (mode 0777)", "chmod o-w {top}/real"}},
		{"symlink into a directory 0777", func(t *testing.T, top, dir, bin string) {
			open := filepath.Join(top, "open")
			must(t, os.Mkdir(open, 0o755))
			must(t, os.Chmod(open, 0o777))
			must(t, os.Rename(bin, filepath.Join(open, "delego-x")))
			must(t, os.Symlink(filepath.Join(open, "delego-x"), bin))
		}, []string{"its directory {top}/open is writable by every user"}},
		{"search directory 1777 holding a link to a binary below it", func(t *testing.T, top, dir, bin string) {
			must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
			must(t, os.Rename(bin, filepath.Join(dir, "sub", "real")))
			must(t, os.Symlink(filepath.Join(dir, "sub", "real"), bin))
			must(t, os.Chmod(dir, 0o777|os.ModeSticky))
		}, []string{"its directory {dir} is writable by every user (mode 1777)"}},
		// Accepted: write access for the group (a umask of 002 gives it),
		// and a directory writable by all above, with the sticky bit (as
		// /tmp): others cannot move what it holds.
		{"group-writable", func(t *testing.T, top, dir, bin string) {
			must(t, os.Chmod(bin, 0o775))
			must(t, os.Chmod(dir, 0o775))
		}, nil},
		{"directory above 1777 (sticky)", func(t *testing.T, top, dir, bin string) {
			must(t, os.Chmod(top, 0o777|os.ModeSticky))
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			top, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			dir := filepath.Join(top, "plugins")
			must(t, os.Mkdir(dir, 0o755))
			bin := fakePlugin(t, dir, "x")
			c.spoil(t, top, dir, bin)
			t.Cleanup(func() { os.Chmod(top, 0o700) }) // for the removal of top

			s := plugin.Search{Dirs: []string{dir}}
			p, err := s.Find("x")
			found, derr := s.Discover()
			if derr != nil || len(found) != 1 || found[0].Path != bin {
				t.Fatalf("Discover() = %+v, %v, want %s", found, derr, bin)
			}
			if c.want == nil {
				if err != nil || p != bin || found[0].Refused != nil {
					t.Errorf("Find = %q, %v; Discover refused: %v; want %s accepted", p, err, found[0].Refused, bin)
				}
				return
			}
			if !errors.Is(err, plugin.ErrInsecure) || errors.Is(err, delegate.ErrUnknownDelegate) || p != "" {
				t.Fatalf("Find = %q, %v, want an ErrInsecure refusal", p, err)
			}
			want := append([]string{"plugin " + bin + " refused as insecure: "}, c.want...)
			for _, w := range want {
				w = strings.NewReplacer("{bin}", bin, "{dir}", dir, "{top}", top).Replace(w)
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q\ndoes not say %q", err, w)
				}
			}
			if found[0].Refused == nil || found[0].Refused.Error() != err.Error() {
				t.Errorf("Discover refused: %v, want %v", found[0].Refused, err)
			}

			s.AllowInsecure = true
			if p, err := s.Find("x"); err != nil || p != bin {
				t.Errorf("with AllowInsecure: Find = %q, %v, want %s", p, err, bin)
			}
			if found, err := s.Discover(); err != nil || len(found) != 1 || found[0].Refused != nil {
				t.Errorf("with AllowInsecure: Discover = %+v, %v", found, err)
			}
		})
	}
}

// TestSearchStopsAtRefused: a refused binary is not passed over for one
// in a later directory; the user is told about the first.
func TestSearchStopsAtRefused(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	loose := fakePlugin(t, a, "x")
	must(t, os.Chmod(loose, 0o777))
	good := fakePlugin(t, b, "x")
	s := plugin.Search{Dirs: []string{a, b}}
	if p, err := s.Find("x"); !errors.Is(err, plugin.ErrInsecure) || !strings.Contains(err.Error(), loose) {
		t.Errorf("Find = %q, %v, want %s refused", p, err, loose)
	}
	found, err := s.Discover()
	if err != nil || len(found) != 1 || found[0].Path != loose || found[0].Refused == nil || !slices.Equal(found[0].Shadowed, []string{good}) {
		t.Errorf("Discover = %+v, %v, want %s refused, shadowing %s", found, err, loose, good)
	}
}

// TestSearchRefusesRelativeDirs: "." or "bin" in the search directories
// would run whatever the working directory holds; they are refused by
// name, whether or not they hold the plugin, and AllowInsecure takes them
// from the working directory as before.
func TestSearchRefusesRelativeDirs(t *testing.T) {
	wd, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	t.Chdir(wd)
	must(t, os.Mkdir("bin", 0o755))
	fakePlugin(t, "bin", "x")
	abs := t.TempDir()
	fakePlugin(t, abs, "y")

	t.Setenv(plugin.EnvPath, strings.Join([]string{abs, ".", "", "bin"}, string(os.PathListSeparator)))
	dirs := plugin.SearchDirs()
	if len(dirs) < 3 || !slices.Equal(dirs[:3], []string{abs, ".", "bin"}) {
		t.Fatalf("SearchDirs() = %q, want %q first, as written, the empty entry skipped", dirs, []string{abs, ".", "bin"})
	}
	for _, c := range []struct {
		dir, abs string
	}{{".", wd}, {"bin", filepath.Join(wd, "bin")}} {
		s := plugin.Search{Dirs: []string{abs, c.dir}}
		want := `plugin search directory "` + c.dir + `" refused as insecure: it is relative`
		for _, name := range []string{"x", "y"} {
			if _, err := s.Find(name); !errors.Is(err, plugin.ErrInsecure) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "use an absolute path, such as "+c.abs) {
				t.Errorf("%q: Find(%s): %v, want %q and the absolute path", c.dir, name, err, want)
			}
		}
		if found, err := s.Discover(); !errors.Is(err, plugin.ErrInsecure) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: Discover = %+v, %v, want %q", c.dir, found, err, want)
		}
	}
	s := plugin.Search{Dirs: dirs, AllowInsecure: true}
	if p, err := s.Find("x"); err != nil || p != filepath.Join(wd, "bin", "delego-x") {
		t.Errorf("with AllowInsecure: Find = %q, %v, want the binary in %s/bin", p, err, wd)
	}
}

// TestSearchFolders: after $DELEGO_PLUGIN_PATH and the executable's
// directory come the user's folder ($XDG_DATA_HOME/delego/plugins, else
// ~/.local/share/delego/plugins) and the system's, and plugins in them are
// found, the user's shadowing the system's.
func TestSearchFolders(t *testing.T) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	env, data, home, system := filepath.Join(top, "env"), filepath.Join(top, "data"), filepath.Join(top, "home"), filepath.Join(top, "system")
	user := filepath.Join(data, "delego", "plugins")
	for _, d := range []string{env, user, system} {
		must(t, os.MkdirAll(d, 0o755))
	}
	t.Setenv(plugin.EnvPath, env)
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("HOME", home)
	exe, err := os.Executable()
	must(t, err)
	exe, err = filepath.EvalSymlinks(exe)
	must(t, err)

	dirs := plugin.SearchDirsWith(system)
	if want := []string{env, filepath.Dir(exe), user, system}; !slices.Equal(dirs, want) {
		t.Fatalf("SearchDirs() = %q, want %q", dirs, want)
	}
	if got := plugin.SearchDirs(); got[len(got)-1] != plugin.SystemDir {
		t.Errorf("SearchDirs() = %q, want %s last", got, plugin.SystemDir)
	}
	fromEnv := fakePlugin(t, env, "a")
	fromUser := fakePlugin(t, user, "b")
	hidden := fakePlugin(t, system, "b")
	fromSystem := fakePlugin(t, system, "c")
	s := plugin.Search{Dirs: dirs}
	for name, want := range map[string]string{"a": fromEnv, "b": fromUser, "c": fromSystem} {
		if p, err := s.Find(name); err != nil || p != want {
			t.Errorf("Find(%s) = %q, %v, want %s", name, p, err, want)
		}
	}
	found, err := s.Discover()
	must(t, err)
	if len(found) != 3 || found[1].Path != fromUser || !slices.Equal(found[1].Shadowed, []string{hidden}) {
		t.Errorf("Discover() = %+v, want a, b (from %s, shadowing %s) and c", found, user, hidden)
	}

	// An unset or relative $XDG_DATA_HOME means ~/.local/share (the XDG
	// rule): a relative one is not refused, as it would be in
	// $DELEGO_PLUGIN_PATH, since delego does not read it as a search path.
	want := filepath.Join(home, ".local", "share", "delego", "plugins")
	for _, v := range []string{"", "relative/data"} {
		t.Setenv("XDG_DATA_HOME", v)
		if got := plugin.UserDir(); got != want {
			t.Errorf("$XDG_DATA_HOME=%q: UserDir() = %q, want %q", v, got, want)
		}
	}
	t.Setenv("HOME", "")
	if got := plugin.UserDir(); got != "" {
		t.Errorf("no $XDG_DATA_HOME, no $HOME: UserDir() = %q, want none", got)
	}
}

// TestSearchSkipped: a file named delego-... that cannot be a plugin is
// listed with the reason it was skipped, and Find names it when it finds
// no binary of that name; files named otherwise are not delego's business.
// A search directory that cannot be read is skipped, saying why, and the
// others are still searched.
func TestSearchSkipped(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	ok := fakePlugin(t, dir, "ok")
	fakePlugin(t, dir, "My.TPU")
	fakePlugin(t, dir, "x.sh")
	must(t, os.Mkdir(filepath.Join(dir, "delego-dir"), 0o755))
	must(t, os.Chmod(fakePlugin(t, dir, "noexec"), 0o644))
	must(t, syscall.Mkfifo(filepath.Join(dir, "delego-fifo"), 0o755))
	must(t, os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "delego-dangling")))
	must(t, os.WriteFile(filepath.Join(dir, "README"), nil, 0o644))

	notDir := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(notDir, nil, 0o644))
	s := plugin.Search{Dirs: []string{dir, notDir}}
	l, err := s.List()
	must(t, err)
	if len(l.Found) != 1 || l.Found[0].Path != ok {
		t.Errorf("Found = %+v, want only %s", l.Found, ok)
	}
	const rule = ": a delegate's name takes only letters, digits, '-' and '_' (letters lower-case, '-' and '_' not first)"
	want := []plugin.Skipped{
		{"delego-My.TPU", `delegate name "My.TPU" holds 'M'` + rule},
		{"delego-dangling", "it is a symbolic link to " + filepath.Join(dir, "gone") + ", which does not exist"},
		{"delego-dir", "it is a directory"},
		{"delego-fifo", "it is a named pipe, not a program"},
		{"delego-noexec", "it is not executable (mode 0644); fix: chmod +x " + filepath.Join(dir, "delego-noexec")},
		{"delego-x.sh", `delegate name "x.sh" holds '.'` + rule},
	}
	for i := range want {
		want[i].Path = filepath.Join(dir, want[i].Path)
	}
	want = append(want, plugin.Skipped{Path: notDir, Reason: "this search directory cannot be read: not a directory"})
	if !slices.Equal(l.Skipped, want) {
		t.Errorf("Skipped:\n%q\nwant\n%q", l.Skipped, want)
	}
	if found, err := s.Discover(); err != nil || !slices.EqualFunc(found, l.Found, func(a, b plugin.Found) bool { return a.Path == b.Path }) {
		t.Errorf("Discover() = %+v, %v, want List's Found", found, err)
	}

	for _, w := range want[1:5] {
		name := strings.TrimPrefix(filepath.Base(w.Path), plugin.Prefix)
		_, err := s.Find(name)
		if !errors.Is(err, delegate.ErrUnknownDelegate) || !strings.Contains(err.Error(), "; passed over "+w.Path+": "+w.Reason) {
			t.Errorf("Find(%s): %v, want ErrUnknownDelegate saying it passed over %s: %s", name, err, w.Path, w.Reason)
		}
	}
	if _, err := s.Find("x.sh"); !errors.Is(err, delegate.ErrUnknownDelegate) || !strings.HasSuffix(err.Error(), want[5].Reason) {
		t.Errorf("Find(x.sh): %v, want ErrUnknownDelegate saying %q", err, want[5].Reason)
	}
}
