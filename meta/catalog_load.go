package meta

import (
	"context"
	"fmt"
	"sort"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
)

// CatalogLoad is what loading the catalog needs of sql: the live catalog,
// the binder and the dataflows' start. Each is a function so that meta
// does not import sql.
type CatalogLoad struct {
	// Install makes descs (in id order) the whole live catalog. It takes
	// sql's catMu.
	Install func(descs []*catalog.Descriptor)
	// Update puts d in the live catalog in place of the descriptor of its
	// name. It takes sql's catMu.
	Update func(d *catalog.Descriptor)
	// Lookup finds an object by name in the live catalog Install made,
	// for the views' stored plans (ViewPlan). It takes catMu shared.
	Lookup func(name string) (*catalog.Descriptor, bool)
	// Bind is sql's binder: it binds the query of a view stored without
	// a plan (ViewPlan), against the live catalog.
	Bind func(query string) (plan.Node, error)
	// StartTable starts table d's dataflow; StartView starts view d's
	// from its plan root. Both start from d's committed state and
	// positions.
	StartTable func(d *catalog.Descriptor) error
	StartView  func(d *catalog.Descriptor, root plan.Node) error
}

// Load reads every stored descriptor and makes it the live catalog, then
// starts the tables and views, in this order:
//
//  1. The data directory's state format is checked, and every view's: a
//     directory or view written by a newer streamdb, or by one too old
//     to move forward, is refused before anything starts, since a view
//     misread would serve wrong rows.
//  2. The descriptors, in id order (creation order), become the live
//     catalog, so that stored plans decode and old views bind against
//     it.
//  3. Every view is moved to the newest format its state is already in
//     or is rewritten to (MigrateViewFormats); a view left older than
//     catalog.DataflowMinSupported is refused then, before anything
//     starts (the views moved before it stay moved).
//  4. Every stream and table gets its JetStream stream, created if it is
//     missing (a savepoint restored from another machine); a subject now
//     held by another JetStream stream is followed there.
//  5. Tables and views start in id order, so that a view starts after
//     everything it reads.
//
// Load runs at start, alone, and again wherever the whole catalog is
// reloaded with the dataflows stopped: after ROLLBACK TO (under ddlMu,
// stateMu and the coordinator's Exclusive), a rename, ALTER TABLE, ALTER
// MATERIALIZED VIEW and index changes (under ddlMu). It takes no lock of
// its own; l's Install and Update take catMu.
func (c *Catalog) Load(l CatalogLoad) error {
	st := c.cfg.Store
	if err := st.CheckDirFormat(); err != nil {
		return err
	}
	descs, err := storage.Descriptors(st.DB())
	if err != nil {
		return err
	}
	if err := CheckViewFormats(descs, catalog.CheckMigratable); err != nil {
		return err
	}
	sort.Slice(descs, func(i, j int) bool { return descs[i].ID < descs[j].ID })
	l.Install(descs)
	viewPlan := func(d *catalog.Descriptor) (plan.Node, error) { return ViewPlan(d, l.Lookup, l.Bind) }
	if err := c.MigrateViewFormats(descs, viewPlan, l.Update); err != nil {
		return err
	}
	if err := CheckViewFormats(descs, catalog.CheckFormat); err != nil {
		return err
	}
	for _, d := range descs {
		if d.Kind != catalog.KindStream && d.Kind != catalog.KindTable {
			continue
		}
		if err := c.bindStream(d); err != nil {
			return err
		}
	}
	for _, d := range descs {
		if d.Kind == catalog.KindTable {
			if err := l.StartTable(d); err != nil {
				return fmt.Errorf("restore table %s: %w", d.Name, err)
			}
			continue
		}
		if d.Kind != catalog.KindView {
			continue
		}
		start := time.Now()
		root, err := viewPlan(d)
		if err != nil {
			return fmt.Errorf("restore materialized view %s: %w", d.Name, err)
		}
		if err := l.StartView(d, root); err != nil {
			return fmt.Errorf("restore materialized view %s: %w", d.Name, err)
		}
		c.cfg.Log.Info("restored materialized view", "view", d.Name, "took", time.Since(start))
	}
	return nil
}

// bindStream binds (or creates) the JetStream stream of stream or table
// d and records it in d, which is the live catalog's descriptor. The
// lookup is retried: a lost reply (a NATS node going) must not hold the
// start for the whole timeout.
func (c *Catalog) bindStream(d *catalog.Descriptor) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var js string
	err := broker.Retry(ctx, broker.RequestAttempt, func(ctx context.Context) (err error) {
		js, err = c.cfg.Broker.EnsureStream(ctx, d.Name, d.Subject)
		return err
	})
	if err != nil {
		return fmt.Errorf("stream %s: %w", d.Name, err)
	}
	if js != d.JSStream {
		c.cfg.Log.Warn("stream's subject is now held by another JetStream stream", "stream", d.Name, "subject", d.Subject, "was", d.JSStream, "now", js)
		d.JSStream = js
	}
	return nil
}
