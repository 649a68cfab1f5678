// Package sql is streamdb's SQL layer: it parses statements (through the
// front layer and the TiDB parser), binds them against the catalog into
// plans, and executes them: DDL against the catalog and runtime, INSERT by
// publishing to JetStream, SELECT as batch queries over committed state.
package sql

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"streamdb/broker"
	"streamdb/config"
	"streamdb/exec"
	"streamdb/pgwire"
	"streamdb/storage"
)

// Engine is one server's SQL engine; it implements pgwire.Engine.
type Engine struct {
	cfg    *config.Config
	log    *slog.Logger
	store  *storage.Store
	broker *broker.Broker
	rt     *exec.Runtime

	// ddlMu serialises catalog changes.
	ddlMu sync.Mutex
	catMu sync.RWMutex
	objs  map[string]*storage.Descriptor
}

// Open starts the engine: the state store, the broker (embedded NATS unless
// cfg.NATSURL is set), the runtime, and every view in the catalog.
func Open(cfg *config.Config, log *slog.Logger) (*Engine, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	var b *broker.Broker
	var err error
	if cfg.NATSURL != "" {
		b, err = broker.Connect(cfg.NATSURL)
	} else {
		b, err = broker.StartEmbedded(cfg.NATSListen, cfg.NATSDir())
	}
	if err != nil {
		return nil, err
	}
	store, err := storage.Open(cfg.StateDir())
	if err != nil {
		b.Close()
		return nil, err
	}
	e := &Engine{cfg: cfg, log: log, store: store, broker: b, objs: map[string]*storage.Descriptor{}}
	e.rt = exec.NewRuntime(store, b, log, cfg.Duration("execution.barrier.interval"))
	if err := e.loadCatalog(); err != nil {
		e.rt.Close()
		store.Close()
		b.Close()
		return nil, err
	}
	e.rt.Start()
	return e, nil
}

// NATSURL is the URL producers can publish to.
func (e *Engine) NATSURL() string { return e.broker.URL }

// Close stops views, then the store and the broker.
func (e *Engine) Close() error {
	e.rt.Close()
	err := e.store.Close()
	e.broker.Close()
	return err
}

// loadCatalog reads every object and restarts the views, in creation order
// so that a view starts after what it reads.
func (e *Engine) loadCatalog() error {
	descs, err := storage.Descriptors(e.store.DB())
	if err != nil {
		return err
	}
	sort.Slice(descs, func(i, j int) bool { return descs[i].ID < descs[j].ID })
	for _, d := range descs {
		e.objs[d.Name] = d
	}
	for _, d := range descs {
		if d.Kind != storage.KindView {
			continue
		}
		start := time.Now()
		root, err := e.planView(d.Query)
		if err != nil {
			return fmt.Errorf("restore materialized view %s: %w", d.Name, err)
		}
		if err := e.rt.StartView(d, root); err != nil {
			return fmt.Errorf("restore materialized view %s: %w", d.Name, err)
		}
		e.log.Info("restored materialized view", "view", d.Name, "took", time.Since(start))
	}
	return nil
}

func (e *Engine) lookup(name string) (*storage.Descriptor, bool) {
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	d, ok := e.objs[name]
	return d, ok
}

// objects returns catalog objects of one kind, by name.
func (e *Engine) objects(kind storage.ObjectKind) []*storage.Descriptor {
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	var out []*storage.Descriptor
	for _, d := range e.objs {
		if d.Kind == kind {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NewSession implements pgwire.Engine.
func (e *Engine) NewSession(ctx context.Context, params map[string]string) (pgwire.Session, error) {
	return newSession(e, params), nil
}
