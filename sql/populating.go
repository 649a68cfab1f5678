package sql

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// A materialized view is "populating" from its CREATE until its dataflow
// has committed everything its sources held when it was created (its
// backfill). Until then other sessions' queries of it are refused with
// 55000 rather than shown a half-built result, and SHOW MATERIALIZED
// VIEWS reports its progress.
//
// The flag lives in the view's catalog descriptor (populatingOption in
// Options: the start and target sequence of each source), written with
// the descriptor at CREATE, so it is in the DDL checkpoint and survives a
// restart or a recovery: a view whose backfill had not finished is still
// populating afterwards, until its committed source positions (read from
// Pebble) reach the targets. CREATE clears the flag once its backfill
// wait returns; a query or SHOW that finds the targets reached clears it
// too (in memory at once, in the catalog when no DDL holds the lock).

// populatingOption is the descriptor option that holds a view's backfill
// (JSON of backfill).
const populatingOption = "streamdb.populating"

// backfill is what a view must reach before it may be read: per source
// index of its dataflow, the position it starts after and the sequence of
// the newest message on the source's subject at CREATE (0: nothing).
type backfill struct {
	Start  []uint64 `json:"start"`
	Target []uint64 `json:"target"`
}

// populated caches descriptors (by pointer) of views found caught up, so
// that reads of a view check its positions only until then. Keys are
// descriptors, never reused; finishing replaces the descriptor.
var populated sync.Map

// planBackfill computes the backfill of view d (not yet persisted: the
// targets are the ends of its sources' subjects before it exists). It
// returns nil when there is nothing to read.
func (e *Engine) planBackfill(ctx context.Context, d *catalog.Descriptor, root plan.Node) (*backfill, error) {
	streams, err := e.sourceStreams(d, root)
	if err != nil {
		return nil, err
	}
	bf := &backfill{Start: make([]uint64, len(streams)), Target: make([]uint64, len(streams))}
	some := false
	for i, name := range streams {
		src, ok := e.lookup(name)
		if !ok {
			continue
		}
		if bf.Start[i], err = e.sourceStart(ctx, src); err != nil {
			return nil, err
		}
		last, err := e.streams.LastOnSubject(ctx, src)
		if err != nil {
			return nil, sqlerr.New(sqlerr.InternalError, "read end of subject %s: %v", src.Subject, err)
		}
		if last > bf.Start[i] {
			bf.Target[i] = last
			some = true
		}
	}
	if !some {
		return nil, nil
	}
	return bf, nil
}

// markPopulating sets d's populating flag (before d is persisted).
func markPopulating(d *catalog.Descriptor, bf *backfill) {
	if bf == nil {
		return
	}
	data, _ := json.Marshal(bf)
	if d.Options == nil {
		d.Options = map[string]string{}
	}
	d.Options[populatingOption] = string(data)
}

// populatingProgress returns, for a view still populating, how many of
// its backfill's events it has committed and how many there are; ok is
// false once it is populated (or was never populating).
func (e *Engine) populatingProgress(d *catalog.Descriptor) (done, total uint64, ok bool) {
	raw := d.Options[populatingOption]
	if raw == "" || d.Kind != catalog.KindView {
		return 0, 0, false
	}
	if _, yes := populated.Load(d); yes {
		return 0, 0, false
	}
	var bf backfill
	if err := json.Unmarshal([]byte(raw), &bf); err != nil || len(bf.Start) != len(bf.Target) {
		e.log.Warn("ignoring a damaged populating flag", "view", d.Name, "err", err)
		return 0, 0, false
	}
	caughtUp := true
	for i, target := range bf.Target {
		if target <= bf.Start[i] {
			continue
		}
		pos, err := e.state.Position(d.ID, uint16(i))
		if err != nil {
			return 0, 0, false
		}
		total += target - bf.Start[i]
		if pos.Seq >= target {
			done += target - bf.Start[i]
			continue
		}
		caughtUp = false
		if pos.Seq > bf.Start[i] {
			done += pos.Seq - bf.Start[i]
		}
	}
	if caughtUp {
		populated.Store(d, true)
		if e.ddlMu.TryLock() {
			e.finishPopulatingLocked(d)
			e.ddlMu.Unlock()
		}
		return 0, 0, false
	}
	return done, total, true
}

// finishPopulating clears d's populating flag in the catalog (CREATE
// calls it once the backfill is done).
func (e *Engine) finishPopulating(d *catalog.Descriptor) {
	if d.Options[populatingOption] == "" {
		return
	}
	populated.Store(d, true)
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	e.finishPopulatingLocked(d)
}

// finishPopulatingLocked replaces d, if it is still the catalog's, by a
// copy without the flag. The write need not be synced: if it is lost, the
// flag is found satisfied again.
func (e *Engine) finishPopulatingLocked(d *catalog.Descriptor) {
	if cur, ok := e.lookup(d.Name); !ok || cur != d {
		return
	}
	next := *d
	next.Options = maps.Clone(d.Options)
	delete(next.Options, populatingOption)
	if len(next.Options) == 0 {
		next.Options = nil
	}
	if err := e.cat.Amend(&next); err != nil {
		e.log.Warn("clearing populating flag", "view", d.Name, "err", err)
		return
	}
	e.catMu.Lock()
	if e.objs[d.Name] == d {
		e.objs[d.Name] = &next
	}
	e.catMu.Unlock()
	populated.Delete(d)
}

// checkPopulated refuses a query that reads a materialized view still
// being populated (55000).
func (e *Engine) checkPopulated(root plan.Node) error {
	for _, src := range plan.Sources(root) {
		if src.Kind != catalog.KindView {
			continue
		}
		d, ok := e.lookup(src.Name)
		if !ok || d.ID != src.ID {
			continue
		}
		done, total, populating := e.populatingProgress(d)
		if !populating {
			if e.rt.Attaching(d.ID) {
				// It reads tables or views through their changes and has
				// not yet taken in their rows (after its CREATE, or after
				// a restart from a checkpoint taken before that).
				return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q is still being populated from the tables and views it reads", d.Name).
					WithHint("Retry in a moment, or run FLUSH, which waits until it is populated.")
			}
			continue
		}
		status := e.rt.ViewStatus(d.ID)
		if strings.HasPrefix(status, "failed") {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q stopped before it was populated (%d of %d events): %s", d.Name, done, total, status).
				WithHint("Drop and re-create the view once the cause is fixed.")
		}
		err := sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q is still being populated: %d of %d events", d.Name, done, total)
		if e.rt.Paused() {
			return err.WithHint("Sources are paused: run ALTER SYSTEM RESUME, then retry (FLUSH waits until it is populated).")
		}
		return err.WithHint("Retry when its CREATE MATERIALIZED VIEW has returned, or run FLUSH, which waits until it is populated.")
	}
	return nil
}

// viewStatus is SHOW MATERIALIZED VIEWS' status: the runtime's, or
// "populating: N of M events (P%)" while the view is being populated.
func (e *Engine) viewStatus(d *catalog.Descriptor) string {
	status := e.rt.ViewStatus(d.ID)
	done, total, populating := e.populatingProgress(d)
	if !populating || status != "running" {
		return status
	}
	return fmt.Sprintf("populating: %d of %d events (%d%%)", done, total, done*100/max(total, 1))
}
