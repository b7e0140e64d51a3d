package serve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/delego/delego"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// Platform is the platform the model metadata names for every model.
const Platform = "tflite"

// DefaultMaxRequestBytes is the largest request body a server takes when
// Options.MaxRequestBytes is 0.
const DefaultMaxRequestBytes = 64 << 20

// Options are a server's settings.
type Options struct {
	// Name and Version are what the server metadata says of the server;
	// Name defaults to "delego".
	Name, Version string
	// Instances is how many interpreters run each model version's requests
	// at once, unless its config.json says otherwise; 0 means 1.
	Instances int
	// MaxQueue is how many requests may wait for an instance of each model
	// version, unless its config.json says otherwise; 0: none wait.
	MaxQueue int
	// MaxRequestBytes bounds a request's body; 0: DefaultMaxRequestBytes.
	MaxRequestBytes int64
}

// Server serves models over the Open Inference Protocol. It is an
// http.Handler; Serve runs it on a listener and drains it when asked to
// stop. Close stops its models' interpreters and plugins.
type Server struct {
	name, version string
	maxBody       int64
	models        map[string]*servedModel
	routes        http.Handler
	stopping      atomic.Bool
	closeOnce     sync.Once
	closeErr      error
}

// servedModel is a model and its versions.
type servedModel struct {
	name     string
	versions map[string]*servedVersion
	order    []string // the versions, in increasing order
}

// latest is the model's highest version, which a request naming no
// version runs.
func (m *servedModel) latest() *servedVersion { return m.versions[m.order[len(m.order)-1]] }

// servedVersion is one version of a model, its instances and what the
// metadata says of its tensors.
type servedVersion struct {
	model, version  string
	file            *model.Model // shared by the instances
	pool            *pool
	inputs, outputs []tensorInfo
}

// tensorInfo is what a model version's metadata says of one of its inputs
// or outputs, and where the interpreter holds it.
type tensorInfo struct {
	index    int // in the interpreter's inputs or outputs
	name     string
	dtype    tensor.DType
	datatype string // the protocol's name of dtype
	shape    []int  // -1 for a dimension that may vary
	opened   []int  // the shape the interpreters were opened with
}

// New opens every source on cfg (Options.Instances interpreters each,
// unless its config says otherwise) and returns the server that serves
// them; a nil cfg runs them on the CPU kernels, as delego.Configure with
// no options does. An error names the model and version that failed, and
// leaves nothing open.
func New(ctx context.Context, cfg *delego.Config, sources []Source, opts Options) (_ *Server, err error) {
	if len(sources) == 0 {
		return nil, errors.New("no model to serve")
	}
	if cfg == nil {
		if cfg, err = delego.Configure(ctx); err != nil {
			return nil, err
		}
	}
	s := &Server{
		name:    cmp.Or(opts.Name, "delego"),
		version: opts.Version,
		maxBody: cmp.Or(opts.MaxRequestBytes, DefaultMaxRequestBytes),
		models:  map[string]*servedModel{},
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	for _, src := range sources {
		m := s.models[src.Name]
		if m == nil {
			m = &servedModel{name: src.Name, versions: map[string]*servedVersion{}}
			s.models[src.Name] = m
		}
		if m.versions[src.Version] != nil {
			return nil, fmt.Errorf("model %q version %s is given twice", src.Name, src.Version)
		}
		v, err := openVersion(ctx, cfg, src, opts)
		if err != nil {
			return nil, fmt.Errorf("model %q version %s: %w", src.Name, src.Version, err)
		}
		m.versions[src.Version] = v
		m.order = append(m.order, src.Version)
	}
	for _, m := range s.models {
		slices.SortFunc(m.order, func(a, b string) int {
			x, _ := strconv.ParseUint(a, 10, 63)
			y, _ := strconv.ParseUint(b, 10, 63)
			return cmp.Compare(x, y)
		})
	}
	s.routes = s.handler()
	return s, nil
}

// openVersion loads src's model once and opens its instances on it.
func openVersion(ctx context.Context, cfg *delego.Config, src Source, opts Options) (v *servedVersion, err error) {
	if !isVersion(src.Version) {
		return nil, fmt.Errorf("version %q is not a positive number", src.Version)
	}
	n, queue := cmp.Or(opts.Instances, 1), opts.MaxQueue
	if c := src.Config.Instances; c != nil {
		n = *c
	}
	if c := src.Config.MaxQueue; c != nil {
		queue = *c
	}
	if n < 1 || queue < 0 {
		return nil, fmt.Errorf("%d instances and a queue of %d: want at least 1 instance and no negative queue", n, queue)
	}
	file, err := model.LoadContext(ctx, src.Path)
	if err != nil {
		return nil, err
	}
	var its []*delego.Interpreter
	defer func() {
		if err != nil {
			for _, it := range its {
				err = errors.Join(err, it.Close())
			}
			err = errors.Join(err, file.Close())
		}
	}()
	for range n {
		it, err := cfg.OpenModel(ctx, file)
		if err != nil {
			return nil, err
		}
		its = append(its, it)
	}
	v = &servedVersion{model: src.Name, version: src.Version, file: file}
	if v.inputs, v.outputs, err = describe(its[0], file); err != nil {
		return nil, err
	}
	v.pool = newPool(its, queue)
	return v, nil
}

// describe lists an interpreter's inputs and outputs as the metadata
// gives them: the shape the model's shape signature declares (-1 for a
// dimension that may vary), else the tensor's shape.
func describe(it *delego.Interpreter, file *model.Model) (in, out []tensorInfo, err error) {
	sg := file.Subgraph(0)
	info := func(kind string, i int, name string, index int) (tensorInfo, error) {
		ti := sg.Tensor(index)
		dt := datatypeOf(ti.Type)
		if dt == "" {
			return tensorInfo{}, fmt.Errorf("%s %d (%q) is %s, which the server does not carry yet", kind, i, name, ti.Type)
		}
		shape := ti.ShapeSignature
		if shape == nil {
			shape = ti.Shape
		}
		return tensorInfo{index: i, name: name, dtype: ti.Type, datatype: dt, shape: slices.Clone(shape), opened: slices.Clone(ti.Shape)}, nil
	}
	for i := range it.NumInputs() {
		t := it.Input(i)
		ti, err := info("input", i, t.Name(), t.Index())
		if err != nil {
			return nil, nil, err
		}
		in = append(in, ti)
	}
	for i := range it.NumOutputs() {
		t := it.Output(i)
		ti, err := info("output", i, t.Name(), t.Index())
		if err != nil {
			return nil, nil, err
		}
		out = append(out, ti)
	}
	return in, out, nil
}

// restore gives it back the input shapes it was opened with, after
// shapes a request asked for could not be allocated, so that it is ready
// for the next request.
func (v *servedVersion) restore(it *delego.Interpreter) error {
	for _, in := range v.inputs {
		if err := it.ResizeInput(in.index, in.opened); err != nil {
			return fmt.Errorf("restoring input %q: %w", in.name, err)
		}
	}
	if err := it.AllocateTensors(); err != nil {
		return fmt.Errorf("restoring the inputs' shapes: %w", err)
	}
	return nil
}

// Close closes every model version's interpreters, once each has come
// back from the request running on it, which stops their plugins, and
// unmaps the model files. The server answers no request after it.
// Call it once Serve has returned (or, for a server used as a handler of
// one's own, once its requests are done); a second Close returns the
// first one's error.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.stopping.Store(true)
		var errs []error
		for _, m := range s.models {
			for _, v := range m.versions {
				if v.pool != nil {
					errs = append(errs, v.pool.close())
				}
				errs = append(errs, v.file.Close())
			}
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// ErrNotFound is wrapped by the error for a model or version the server
// does not serve (HTTP 404).
var ErrNotFound = errors.New("not found")

// ErrStopping is wrapped by the error of a request that comes while the
// server stops (HTTP 503).
var ErrStopping = errors.New("the server is stopping")

// lookup finds a model's version; version "" is its latest.
func (s *Server) lookup(name, version string) (*servedVersion, error) {
	m := s.models[name]
	if m == nil {
		return nil, fmt.Errorf("model %q %w: the server serves %s", name, ErrNotFound, s.modelNames())
	}
	if version == "" {
		return m.latest(), nil
	}
	v := m.versions[version]
	if v == nil {
		return nil, fmt.Errorf("model %q version %q %w: it has versions %v", name, version, ErrNotFound, m.order)
	}
	return v, nil
}

// modelNames lists the served models' names, sorted, in words.
func (s *Server) modelNames() string {
	names := make([]string, 0, len(s.models))
	for n := range s.models {
		names = append(names, strconv.Quote(n))
	}
	slices.Sort(names)
	return fmt.Sprintf("%v", names)
}

// Ready reports whether the server takes inference requests: every model
// is loaded (New returns only then) and the server is not stopping.
func (s *Server) Ready() bool { return !s.stopping.Load() }
