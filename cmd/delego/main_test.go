package main

import (
	"bytes"
	"context"
	"flag"
	"reflect"
	"strings"
	"testing"
)

// cli runs the command line in process and returns its exit status and output.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = realMain(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// checkRunFails checks that a run failed with an error mentioning each of
// wants.
func checkRunFails(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("run succeeded")
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "Commands:"},
		{[]string{"--help"}, "Commands:"},
		{[]string{"help", "run"}, "Usage: delego run MODEL"},
		{[]string{"help", "inspect"}, "JSON fields (stable):"},
		{[]string{"run", "-h"}, "Usage: delego run MODEL"},
		{[]string{"run", "model.tflite", "--help"}, "Usage: delego run MODEL"},
		{[]string{"inspect", "-h"}, "Usage: delego inspect MODEL"},
		{[]string{"bench", "-h"}, "Usage: delego bench MODEL"},
		{[]string{"plan", "-h"}, "Usage: delego plan MODEL"},
		{[]string{"devices", "-h"}, "Usage: delego devices"},
		{[]string{"plugins", "-h"}, "Usage: delego plugins"},
		{[]string{"example", "-h"}, "Usage: delego example"},
		{[]string{"help", "plan"}, "JSON fields (stable):"},
		{[]string{"help", "-h"}, "Usage: delego help"},
		{[]string{"version", "-h"}, "Usage: delego version"},
		{[]string{"version"}, "delego "},
	} {
		code, out, errOut := cli(t, c.args...)
		if code != exitOK || !strings.Contains(out, c.want) || errOut != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 0 and %q on stdout", c.args, code, out, errOut, c.want)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no command given"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"version", "extra"}, "no arguments"},
		{[]string{"run"}, "need exactly one MODEL argument, got 0"},
		{[]string{"run", "a.tflite", "b.tflite"}, "need exactly one MODEL argument, got 2"},
		{[]string{"run", "a.tflite", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"run", "a.tflite", "--image", "x.png", "--input", "x.raw"}, "cannot be used together"},
		{[]string{"run", "a.tflite", "--input", "x.raw", "--mean", "0"}, "--mean and --std apply to --image only"},
		{[]string{"run", "a.tflite", "--image", "x.png", "--std", "0"}, "--std must not be 0"},
		{[]string{"run", "a.tflite", "--threads", "0"}, "--threads must be at least 1"},
		{[]string{"run", "a.tflite", "--top", "-1"}, "--top must not be negative"},
		{[]string{"run", "a.tflite", "--threads", "many"}, `invalid value "many" for flag -threads`},
		{[]string{"inspect"}, "need exactly one MODEL argument"},
		{[]string{"bench", "a.tflite", "--runs", "0"}, "--runs must be at least 1"},
		{[]string{"bench", "a.tflite", "--warmup", "-1"}, "--warmup must not be negative"},
		{[]string{"bench", "a.tflite", "--seed", "4294967296"}, "--seed must fit in 32 bits"},
		{[]string{"bench", "a.tflite", "--threads", "0"}, "--threads must be at least 1"},
	} {
		code, out, errOut := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: status %d, stderr %q; want status 2 and %q", c.args, code, errOut, c.want)
		}
		if c.args != nil && out != "" {
			t.Errorf("%q: a usage error printed %q on stdout", c.args, out)
		}
		if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
			t.Errorf("%q: stderr holds a stack trace: %s", c.args, errOut)
		}
	}
}

// TestUsageMentionsEveryFlag keeps each command's help in step with its flags.
func TestUsageMentionsEveryFlag(t *testing.T) {
	var asJSON bool
	for _, c := range []struct {
		usage string
		fs    *flag.FlagSet
	}{
		{runUsage, (&runFlags{}).flagSet()},
		{benchUsage, (&benchFlags{}).flagSet()},
		{planUsage, (&planFlags{}).flagSet()},
		{tuneUsage, (&tuneFlags{}).flagSet()},
		{inspectUsage, inspectFlagSet(&asJSON, &pluginFlags{})},
	} {
		c.fs.VisitAll(func(f *flag.Flag) {
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			if !strings.Contains(c.usage, "\n  "+dash+f.Name+" ") {
				t.Errorf("%s help does not describe %s%s", c.fs.Name(), dash, f.Name)
			}
		})
	}
}

func TestParseArgsAnywhere(t *testing.T) {
	for _, c := range []struct {
		args       []string
		pos, input []string
		v          bool
	}{
		{[]string{"m.tflite"}, []string{"m.tflite"}, nil, false},
		{[]string{"--input", "a", "m.tflite", "-v", "--input=b"}, []string{"m.tflite"}, []string{"a", "b"}, true},
		{[]string{"m.tflite", "--input", "a", "x", "--input", "b"}, []string{"m.tflite", "x"}, []string{"a", "b"}, false},
		{[]string{"-v", "--", "-m.tflite", "--input", "a"}, []string{"-m.tflite", "--input", "a"}, nil, true},
		{[]string{"m.tflite", "--", "--input"}, []string{"m.tflite", "--input"}, nil, false},
	} {
		fs := newFlagSet("t")
		var input stringList
		fs.Var(&input, "input", "")
		v := fs.Bool("v", false, "")
		pos, err := parseArgs(fs, c.args)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if !reflect.DeepEqual(pos, c.pos) || !reflect.DeepEqual([]string(input), c.input) || *v != c.v {
			t.Errorf("%q: positionals %q, inputs %q, v %v; want %q, %q, %v", c.args, pos, input, *v, c.pos, c.input, c.v)
		}
	}
}
