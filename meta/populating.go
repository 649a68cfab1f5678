package meta

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
// The flag lives in the view's catalog descriptor (PopulatingOption in
// Options: the start and target sequence of each source), written with
// the descriptor at CREATE, so it is in the DDL checkpoint and survives a
// restart or a recovery: a view whose backfill had not finished is still
// populating afterwards, until its committed source positions (read from
// Pebble) reach the targets. CREATE clears the flag once its backfill
// wait returns; a query or SHOW that finds the targets reached clears it
// too (in memory at once, in the catalog when no DDL holds the lock).

// PopulatingOption is the descriptor option that holds a view's backfill
// (JSON of backfill).
const PopulatingOption = "streamdb.populating"

// backfill is what a view must reach before it may be read: per source
// index of its dataflow, the position it starts after and the sequence of
// the newest message on the source's subject at CREATE (0: nothing).
type backfill struct {
	Start  []uint64 `json:"start"`
	Target []uint64 `json:"target"`
}

// populated caches descriptors (by pointer) of views found caught up, so
// that reads of a view check its positions only until then. Keys are
// descriptors, never reused; finishing replaces the descriptor. It is
// shared by every DDL of the process, as the descriptors are unique.
var populated sync.Map

// planBackfill computes the backfill of view d (not yet persisted: the
// targets are the ends of its sources' subjects before it exists). It
// returns nil when there is nothing to read.
func (x *DDL) planBackfill(ctx context.Context, d *catalog.Descriptor, root plan.Node) (*backfill, error) {
	streams, err := x.SourceStreams(d, root)
	if err != nil {
		return nil, err
	}
	bf := &backfill{Start: make([]uint64, len(streams)), Target: make([]uint64, len(streams))}
	some := false
	for i, name := range streams {
		src, ok := x.cfg.Live.Lookup(name)
		if !ok {
			continue
		}
		if bf.Start[i], err = x.SourceStart(ctx, src); err != nil {
			return nil, err
		}
		last, err := x.cfg.Streams.LastOnSubject(ctx, src)
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
	d.Options[PopulatingOption] = string(data)
}

// PopulatingProgress returns, for a view still populating, how many of
// its backfill's events it has committed and how many there are; ok is
// false once it is populated (or was never populating). It may run under
// stateMu: it only TryLocks ddlMu, to clear the flag of a view found
// caught up.
func (x *DDL) PopulatingProgress(d *catalog.Descriptor) (done, total uint64, ok bool) {
	raw := d.Options[PopulatingOption]
	if raw == "" || d.Kind != catalog.KindView {
		return 0, 0, false
	}
	if _, yes := populated.Load(d); yes {
		return 0, 0, false
	}
	var bf backfill
	if err := json.Unmarshal([]byte(raw), &bf); err != nil || len(bf.Start) != len(bf.Target) {
		x.cfg.Log.Warn("ignoring a damaged populating flag", "view", d.Name, "err", err)
		return 0, 0, false
	}
	caughtUp := true
	for i, target := range bf.Target {
		if target <= bf.Start[i] {
			continue
		}
		pos, err := x.cfg.State.Position(d.ID, uint16(i))
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
		x.tryFinishPopulating(d)
		return 0, 0, false
	}
	return done, total, true
}

// tryFinishPopulating clears d's populating flag unless another catalog
// change holds ddlMu (the flag is then found satisfied again later).
func (x *DDL) tryFinishPopulating(d *catalog.Descriptor) {
	if !x.cfg.DDLMu.TryLock() {
		return
	}
	defer x.cfg.DDLMu.Unlock()
	x.finishPopulatingLocked(d)
}

// FinishPopulating clears d's populating flag in the catalog (CREATE and
// ALTER call it once the backfill is done). It takes ddlMu.
func (x *DDL) FinishPopulating(d *catalog.Descriptor) {
	if d.Options[PopulatingOption] == "" {
		return
	}
	populated.Store(d, true)
	x.cfg.DDLMu.Lock()
	defer x.cfg.DDLMu.Unlock()
	x.finishPopulatingLocked(d)
}

// finishPopulatingLocked replaces d, if it is still the catalog's, by a
// copy without the flag. The write need not be synced: if it is lost, the
// flag is found satisfied again.
func (x *DDL) finishPopulatingLocked(d *catalog.Descriptor) {
	if cur, ok := x.cfg.Live.Lookup(d.Name); !ok || cur != d {
		return
	}
	next := *d
	next.Options = maps.Clone(d.Options)
	delete(next.Options, PopulatingOption)
	if len(next.Options) == 0 {
		next.Options = nil
	}
	if err := x.cfg.Catalog.Amend(&next); err != nil {
		x.cfg.Log.Warn("clearing populating flag", "view", d.Name, "err", err)
		return
	}
	x.cfg.Live.Swap(d, &next)
	populated.Delete(d)
}

// CheckPopulated refuses a query that reads a materialized view still
// being populated (55000).
func (x *DDL) CheckPopulated(root plan.Node) error {
	for _, src := range plan.Sources(root) {
		if src.Kind != catalog.KindView {
			continue
		}
		d, ok := x.cfg.Live.Lookup(src.Name)
		if !ok || d.ID != src.ID {
			continue
		}
		done, total, populating := x.PopulatingProgress(d)
		if !populating {
			if x.cfg.Runtime.Attaching(d.ID) {
				// It reads tables or views through their changes and has
				// not yet taken in their rows (after its CREATE, or after
				// a restart from a checkpoint taken before that).
				return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q is still being populated from the tables and views it reads", d.Name).
					WithHint("Retry in a moment, or run FLUSH, which waits until it is populated.")
			}
			continue
		}
		status := x.cfg.Runtime.ViewStatus(d.ID)
		if strings.HasPrefix(status, "failed") {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q stopped before it was populated (%d of %d events): %s", d.Name, done, total, status).
				WithHint("Drop and re-create the view once the cause is fixed.")
		}
		err := sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q is still being populated: %d of %d events", d.Name, done, total)
		if x.cfg.Runtime.Paused() {
			return err.WithHint("Sources are paused: run ALTER SYSTEM RESUME, then retry (FLUSH waits until it is populated).")
		}
		return err.WithHint("Retry when its CREATE MATERIALIZED VIEW has returned, or run FLUSH, which waits until it is populated.")
	}
	return nil
}

// ViewStatus is SHOW MATERIALIZED VIEWS' status: the runtime's, or
// "populating: N of M events (P%)" while the view is being populated.
func (x *DDL) ViewStatus(d *catalog.Descriptor) string {
	status := x.cfg.Runtime.ViewStatus(d.ID)
	done, total, populating := x.PopulatingProgress(d)
	if !populating || status != "running" {
		return status
	}
	return fmt.Sprintf("populating: %d of %d events (%d%%)", done, total, done*100/max(total, 1))
}
