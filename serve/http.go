package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// binaryTensorData is the protocol extension the server metadata names:
// Triton's binary tensor data.
const binaryTensorData = "binary_tensor_data"

// statusError is an error with the HTTP status it answers with.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// badRequest is a 400 error: what is wrong with the request.
func badRequest(format string, a ...any) error {
	return &statusError{status: http.StatusBadRequest, err: fmt.Errorf(format, a...)}
}

// statusOf is the HTTP status that answers err.
func statusOf(err error) int {
	if se, ok := errors.AsType[*statusError](err); ok {
		return se.status
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrOverloaded), errors.Is(err, ErrStopping):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// jsonProblem says what encoding/json found wrong, in words.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("%v (at byte %d)", syn, syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the request"
		}
		return fmt.Sprintf("%s is a JSON %s, which is not what the protocol has there", field, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "it ends before its last value is complete"
	}
	return err.Error()
}

// handler builds the server's routes: the protocol's REST endpoints, and
// a JSON 404 for any other path.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, e func(http.ResponseWriter, *http.Request) error) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := e(w, r); err != nil {
				writeJSON(w, statusOf(err), map[string]string{"error": err.Error()})
			}
		})
	}
	// route serves "METHOD PATH" with e, and PATH with any other method
	// with a 405 that says which method it takes.
	route := func(pattern string, e func(http.ResponseWriter, *http.Request) error) {
		handle(pattern, e)
		method, path, _ := strings.Cut(pattern, " ")
		handle(path, func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Allow", method)
			return &statusError{status: http.StatusMethodNotAllowed, err: fmt.Errorf("%s takes %s, not %s", r.URL.Path, method, r.Method)}
		})
	}
	route("GET /v2/health/live", func(w http.ResponseWriter, r *http.Request) error { return nil })
	route("GET /v2/health/ready", s.serverReady)
	route("GET /v2", s.serverMetadata)
	route("GET /v2/models/{name}", s.modelMetadata)
	route("GET /v2/models/{name}/versions/{version}", s.modelMetadata)
	route("GET /v2/models/{name}/ready", s.modelReady)
	route("GET /v2/models/{name}/versions/{version}/ready", s.modelReady)
	route("POST /v2/models/{name}/infer", s.infer)
	route("POST /v2/models/{name}/versions/{version}/infer", s.infer)
	handle("/", func(w http.ResponseWriter, r *http.Request) error {
		return &statusError{status: http.StatusNotFound, err: fmt.Errorf("no endpoint %s %s: see the Open Inference Protocol's REST API (GET /v2, GET /v2/models/NAME, POST /v2/models/NAME/infer, ...)", r.Method, r.URL.Path)}
	})
	return mux
}

// ServeHTTP answers one request of the protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.routes.ServeHTTP(w, r) }

// writeJSON writes v as the JSON body of a response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"the response could not be written as JSON"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// serverReady answers 200 while the server takes inference requests, 503
// once it stops.
func (s *Server) serverReady(w http.ResponseWriter, r *http.Request) error {
	if !s.Ready() {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	return nil
}

// modelReady answers 200 while the model version takes inference
// requests, 503 once the server stops, 404 for one it does not serve.
func (s *Server) modelReady(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.lookup(r.PathValue("name"), r.PathValue("version")); err != nil {
		return err
	}
	return s.serverReady(w, r)
}

// serverMetadata answers the server's name, version and extensions.
func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		Extensions []string `json:"extensions"`
	}{s.name, s.version, []string{binaryTensorData}})
	return nil
}

// tensorMetadata is the metadata of one input or output.
type tensorMetadata struct {
	Name     string `json:"name"`
	Datatype string `json:"datatype"`
	Shape    []int  `json:"shape"`
}

// modelMetadata answers a model version's name, versions, platform,
// inputs and outputs.
func (s *Server) modelMetadata(w http.ResponseWriter, r *http.Request) error {
	v, err := s.lookup(r.PathValue("name"), r.PathValue("version"))
	if err != nil {
		return err
	}
	list := func(ts []tensorInfo) []tensorMetadata {
		out := make([]tensorMetadata, len(ts))
		for i, t := range ts {
			out[i] = tensorMetadata{Name: t.name, Datatype: t.datatype, Shape: t.shape}
		}
		return out
	}
	writeJSON(w, http.StatusOK, struct {
		Name     string           `json:"name"`
		Versions []string         `json:"versions"`
		Platform string           `json:"platform"`
		Inputs   []tensorMetadata `json:"inputs"`
		Outputs  []tensorMetadata `json:"outputs"`
	}{v.model, s.models[v.model].order, Platform, list(v.inputs), list(v.outputs)})
	return nil
}

// infer runs an inference request: checked in full first, then run on an
// instance of the model version when one is free or the queue has room.
func (s *Server) infer(w http.ResponseWriter, r *http.Request) error {
	v, err := s.lookup(r.PathValue("name"), r.PathValue("version"))
	if err != nil {
		return err
	}
	if !s.Ready() {
		return fmt.Errorf("model %q: %w", v.model, ErrStopping)
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	c, err := parseCall(v, body, r.Header.Get(headerLength))
	if err != nil {
		return err
	}
	it, err := v.pool.acquire(r.Context())
	if err != nil {
		return fmt.Errorf("model %q version %s: %w", v.model, v.version, err)
	}
	results, err := func() ([]result, error) {
		defer v.pool.release(it)
		return c.run(r.Context(), it)
	}()
	if err != nil {
		return err
	}
	return c.respond(w, results)
}

// readBody reads a request's body, refusing one larger than the limit
// with 413.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	tooLarge := &statusError{status: http.StatusRequestEntityTooLarge, err: fmt.Errorf("the request body is larger than the server's limit of %d bytes", s.maxBody)}
	if r.ContentLength > s.maxBody {
		return nil, tooLarge
	}
	body, err := readAll(http.MaxBytesReader(w, r.Body, s.maxBody), r.ContentLength)
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, tooLarge
	}
	if err != nil {
		return nil, badRequest("the request body could not be read: %v", err)
	}
	return body, nil
}

// readAll reads r to its end into a buffer of size bytes when the size
// is known (the body's Content-Length), rather than growing one as it goes.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, size)
	n, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return nil, fmt.Errorf("the body ends after %d of the %d bytes its Content-Length says", n, size)
	}
	return b, err
}

// Serve serves the protocol on ln until ctx is done, then stops: ln is
// closed at once, readiness turns false, the requests in flight finish
// (for drain at most, after which their connections are closed and their
// Invokes cancelled), and Serve returns. Close the server after it.
func (s *Server) Serve(ctx context.Context, ln net.Listener, drain time.Duration) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.stopping.Store(true)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drain)
	defer cancel()
	err := hs.Shutdown(dctx)
	if err != nil {
		err = errors.Join(fmt.Errorf("requests still running after %v were cut off: %w", drain, err), hs.Close())
	}
	<-served // http.ErrServerClosed, at once after Shutdown
	return err
}
