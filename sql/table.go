package sql

import (
	"context"
	"time"

	"streamdb/catalog"
	"streamdb/meta"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// A table (CREATE TABLE without APPEND ONLY) keeps its changes in its own
// JetStream subject as a changelog (see exec/changelog.go). Like a view, it
// has a pipeline that reads that changelog into a state table: keyed by the
// primary key, or as a multiset of whole rows when it has none (two equal
// rows of a table without a key are indistinguishable in SQL, so the
// multiplicity plays the part of PostgreSQL's hidden row identity). SELECT,
// UPDATE and DELETE read that state; views over the table read the
// changelog itself, from the table's start.
//
// Writes are checked under the table's log (table_commit.go) and
// published by meta.Tables (meta/table_log.go).

// tableSubjectPrefix is where tables keep their changelogs unless CREATE
// TABLE names a subject.
const tableSubjectPrefix = "streamdb.table."

// startTable starts the pipeline that keeps a table's state table current.
func (e *Engine) startTable(d *catalog.Descriptor) error {
	if err := e.backfillConstraintIndexes(d); err != nil {
		return err
	}
	root, err := tableScan(d)
	if err != nil {
		return err
	}
	return e.startView(d, root)
}

// tableScan is the plan of table d's dataflow (meta.TableScan).
func tableScan(d *catalog.Descriptor) (*plan.Scan, error) { return meta.TableScan(d) }

// waitTableCurrent waits until the table's state holds every change
// published to its changelog (read from JetStream, so it holds after a
// restart too). Paused sources never catch up, so a paused server refuses
// instead of blocking.
func (e *Engine) waitTableCurrent(ctx context.Context, d *catalog.Descriptor, what string) error {
	last, err := e.streams.LastOnSubject(ctx, d)
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "read the changelog of table %s: %v", d.Name, err)
	}
	return e.waitTableAt(ctx, d, last, what)
}

func (e *Engine) waitTableAt(ctx context.Context, d *catalog.Descriptor, seq uint64, what string) error {
	if seq == 0 || seq <= d.StartSeq {
		return nil
	}
	targets := map[string]uint64{d.Subject: seq}
	if e.rt.Paused() {
		probe, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		err := e.rt.WaitFor(probe, []uint32{d.ID}, targets)
		cancel()
		if err == nil {
			return nil
		}
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s on table %q waits for the table to apply its earlier changes, but the server is paused", what, d.Name).
			WithHint("Run ALTER SYSTEM RESUME first.")
	}
	return e.waitLogged(ctx, []uint32{d.ID}, targets, what+" on table "+d.Name)
}
