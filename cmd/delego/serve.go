package main

import (
	"cmp"
	"context"

	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/delego/delego/serve"
)

const serveUsage = `Usage: delego serve (--model NAME=PATH... | --repository DIR) [flags]

Serves models over the Open Inference Protocol (KServe's "v2" protocol,
which Triton also speaks), REST only for now: KServe's and Triton's HTTP
clients, and curl, run them.

  GET  /v2/health/live, /v2/health/ready      200 when live, ready
  GET  /v2                                    the server's metadata
  GET  /v2/models/NAME[/versions/V]           a model's metadata: versions,
                                              platform "tflite", inputs and
                                              outputs (name, datatype, shape)
  GET  /v2/models/NAME[/versions/V]/ready     200 when the model is ready
  POST /v2/models/NAME[/versions/V]/infer     run it (no version: the latest)

Inputs and outputs are named by the model's tensor names (delego inspect
lists them). Tensors go as JSON (BOOL, UINT8, INT8, INT16, INT32, INT64,
FP16, FP32, FP64; STRING models are not served yet) or as binary data after
the JSON, as Triton's clients send it (the Inference-Header-Content-Length
header and the binary_data_size parameter; binary_data or
binary_data_output for outputs). Every input is checked (name, datatype,
shape, size) before it reaches an interpreter: a mistake is a 400 whose
{"error": ...} names the input.

Models:
  --model NAME=PATH  serve the model file PATH as NAME, version 1 (the flag
                   may be repeated)
  --repository DIR   serve every model of DIR, laid out as Triton's:
                   DIR/NAME/V/model.tflite for each version V (1, 2, ...),
                   and an optional DIR/NAME/config.json,
                   {"instances": N, "max_queue": N}, for that model

Serving:
  --http ADDR      listen for HTTP on ADDR (default :8000, Triton's port)
  --instances N    interpreters per model version, each running one request
                   at a time (default 1)
  --max-queue N    requests that may wait for a busy model version (default
                   16); beyond them a request is refused at once with 503 and
                   an "overloaded" error, never held without bound
  --max-request-bytes N  the largest request body taken (default 64 MiB);
                   a larger one is refused with 413
  --drain DURATION how long the requests in flight may take to finish when
                   delego is stopped (default 30s)
  --threads N      goroutines a kernel may use (default: the settings', else 1)
  -v               stream each plugin's standard error to delego's

On SIGINT or SIGTERM delego stops listening, lets the requests in flight
finish (for --drain at most), then closes its interpreters and their
plugins.

Delegates (for every model):
` + delegationHelp

// serveFlags are the parsed flags of "delego serve".
type serveFlags struct {
	models     stringList
	repository string
	http       string
	opts       serve.Options
	drain      time.Duration
	threads    int
	verbose    bool
	delegation delegationFlags
}

func parseServeFlags(args []string, stdout io.Writer) (*serveFlags, error) {
	f := &serveFlags{}
	fs := newFlagSet("serve")
	fs.Var(&f.models, "model", "")
	fs.StringVar(&f.repository, "repository", "", "")
	fs.StringVar(&f.http, "http", ":8000", "")
	fs.IntVar(&f.opts.Instances, "instances", 1, "")
	fs.IntVar(&f.opts.MaxQueue, "max-queue", 16, "")
	fs.Int64Var(&f.opts.MaxRequestBytes, "max-request-bytes", serve.DefaultMaxRequestBytes, "")
	fs.DurationVar(&f.drain, "drain", 30*time.Second, "")
	fs.IntVar(&f.threads, "threads", 0, "")
	fs.BoolVar(&f.verbose, "v", false, "")
	f.delegation.define(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, flagError(fs, "serve", serveUsage, stdout, err)
	}
	set := setFlags(fs)
	switch {
	case len(pos) > 0:
		return nil, usagef("serve", "serve takes no arguments (give models with --model NAME=PATH or --repository DIR), got %q", pos)
	case len(f.models) == 0 && f.repository == "":
		return nil, usagef("serve", "no model to serve: give --model NAME=PATH or --repository DIR")
	case f.http == "":
		return nil, usagef("serve", "--http '' turns off the only listener delego serve has so far")
	case f.opts.Instances < 1:
		return nil, usagef("serve", "--instances must be at least 1, got %d", f.opts.Instances)
	case f.opts.MaxQueue < 0:
		return nil, usagef("serve", "--max-queue must not be negative, got %d", f.opts.MaxQueue)
	case f.opts.MaxRequestBytes < 1:
		return nil, usagef("serve", "--max-request-bytes must be at least 1, got %d", f.opts.MaxRequestBytes)
	case f.drain < 0:
		return nil, usagef("serve", "--drain must not be negative, got %v", f.drain)
	case set["threads"] && f.threads < 1:
		return nil, usagef("serve", "--threads must be at least 1, got %d", f.threads)
	}
	return f, nil
}

// sources are the models the flags name: the repository's, then --model's.
func (f *serveFlags) sources() ([]serve.Source, error) {
	var out []serve.Source
	if f.repository != "" {
		srcs, err := serve.Repository(f.repository)
		if err != nil {
			return nil, err
		}
		out = srcs
	}
	for _, m := range f.models {
		src, err := serve.ParseModel(m)
		if err != nil {
			return nil, usagef("serve", "--model %v", err)
		}
		out = append(out, src)
	}
	return out, nil
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return serveWith(ctx, args, stdout, stderr, env{})
}

// serveWith is serveCmd with the kernels and delegates of e.
func serveWith(ctx context.Context, args []string, stdout, stderr io.Writer, e env) (err error) {
	f, err := parseServeFlags(args, stdout)
	if err != nil || f == nil {
		return err
	}
	srcs, err := f.sources()
	if err != nil {
		return err
	}
	stderr, logs := withPluginLogs(f.verbose, stderr)
	cfg, err := f.delegation.configure(ctx, "serve", f.threads, e, stderr, logs...)
	if err != nil {
		return err
	}
	f.opts.Version = serverVersion()
	s, err := serve.New(ctx, cfg, srcs, f.opts)
	if err != nil {
		return err
	}
	defer closeAfter(&err, stderr, "closing the models", s)
	ln, err := net.Listen("tcp", f.http)
	if err != nil {
		return fmt.Errorf("--http %s: %w", f.http, err)
	}
	var served []string
	for _, src := range srcs {
		served = append(served, fmt.Sprintf("%s (version %s)", src.Name, src.Version))
	}
	fmt.Fprintf(stderr, "delego serve: serving %s on http://%s\n", strings.Join(served, ", "), ln.Addr())
	if err := s.Serve(ctx, ln, f.drain); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "delego serve: stopped")
	return nil
}

// serverVersion is the version the server metadata gives: a release's,
// else the module's.
func serverVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return cmp.Or(releaseVersion, bi.Main.Version)
	}
	return releaseVersion
}
