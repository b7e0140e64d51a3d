package serve

import (
	"context"
	"errors"
	"fmt"

	"github.com/delego/delego"
)

// ErrOverloaded is wrapped by the error of a request refused because its
// model's instances are busy and its queue is full (HTTP 503).
var ErrOverloaded = errors.New("overloaded")

// pool holds a model version's interpreters and bounds the requests that
// run on them or wait for one.
type pool struct {
	// free holds the idle interpreters.
	free chan *delego.Interpreter
	// admitted holds one token per request that runs or waits: its
	// capacity is the instances plus the queue.
	admitted  chan struct{}
	instances int
}

// newPool makes a pool of its, with room for queue waiting requests.
func newPool(its []*delego.Interpreter, queue int) *pool {
	p := &pool{
		free:      make(chan *delego.Interpreter, len(its)),
		admitted:  make(chan struct{}, len(its)+queue),
		instances: len(its),
	}
	for _, it := range its {
		p.free <- it
	}
	return p
}

// acquire takes an idle interpreter, waiting for one while the queue has
// room: a request beyond the instances and the queue gets ErrOverloaded at
// once. The caller gives the interpreter back with release.
func (p *pool) acquire(ctx context.Context) (*delego.Interpreter, error) {
	select {
	case p.admitted <- struct{}{}:
	default:
		return nil, fmt.Errorf("%w: %d requests run and %d wait, the most it takes; try again later", ErrOverloaded, p.instances, cap(p.admitted)-p.instances)
	}
	select {
	case it := <-p.free:
		return it, nil
	case <-ctx.Done():
		<-p.admitted
		return nil, fmt.Errorf("gave up waiting for an instance: %w", context.Cause(ctx))
	}
}

// release gives back an interpreter acquire took.
func (p *pool) release(it *delego.Interpreter) {
	p.free <- it
	<-p.admitted
}

// close waits for every interpreter to come back and closes them, which
// stops their plugins.
func (p *pool) close() error {
	var errs []error
	for range p.instances {
		errs = append(errs, (<-p.free).Close())
	}
	return errors.Join(errs...)
}
