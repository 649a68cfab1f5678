package meta

import (
	"context"

	"streamdb/exec"
	"streamdb/pgcdc"
	"streamdb/types"
)

// A source's tables are copied (at CREATE SOURCE, and again when the slot
// cannot serve the position the tables hold) in chunks, each its own
// commit, so that the memory a copy takes does not grow with the tables.
// A chunk holds rows of one table, sized to be one changelog message
// (about half the message limit, by the rows' text), so that it goes to
// the table's subject as one message rather than through the transaction
// stream, which would store it twice. The slot's position is written
// last, in the commit of the last chunk: until then the tables hold no
// position (a copy over tables that held one removes it in its first
// commit), so a crash in the middle of a copy copies again from a new
// slot rather than following the source from a half-copied table. Views
// see the copy arrive chunk by chunk, each chunk in one epoch; a copy
// over existing tables replaces each table's rows with its first chunk
// (emptying a table reads its rows, as TRUNCATE does).
//
// The next chunk is read from the source while one is committed, and
// after every copyChunksInFlight chunks the committer waits for the
// table's pipeline to apply them, so unapplied commits do not pile up in
// the table's log (TableLog.entries) or in flight.
const (
	copyChunkRows      = 50_000
	copyChunksInFlight = 16
	// copyValueBytes is what one value adds to its text in a changelog
	// message (quotes, separators).
	copyValueBytes = 8
)

// copyChunk is rows of one source table; last marks the end of the copy.
type copyChunk struct {
	t    *pgcdc.Table
	ops  []rowOp
	size int
	last bool
}

// copySnapshot writes the tables as the slot's snapshot holds them, then
// the slot's position: into new, empty tables, or, with replace, over
// what the tables hold.
func (a *pgApplier) copySnapshot(ctx context.Context, slot *pgcdc.Slot, tables []*pgcdc.Table, replace bool) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Unbuffered: a chunk is read while the one before is committed, no
	// more.
	chunks := make(chan *copyChunk)
	committed := make(chan error, 1)
	go func() {
		err := a.commitCopy(cctx, chunks, tables, slot.Point, replace)
		if err != nil {
			cancel()
		}
		committed <- err
	}()
	send := func(c *copyChunk) error {
		select {
		case chunks <- c:
			return nil
		case <-cctx.Done():
			return cctx.Err()
		}
	}
	names := map[*pgcdc.Table][]string{}
	for _, t := range tables {
		n := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			n[i] = c.Name
		}
		names[t] = n
	}
	chunkBytes := a.s.cfg.Host.ChangelogLimit() / 2
	cur := &copyChunk{}
	err := slot.Copy(cctx, tables, func(t *pgcdc.Table, vals [][]byte) error {
		if cur.t != t || len(cur.ops) >= copyChunkRows || cur.size >= chunkBytes {
			if len(cur.ops) > 0 {
				if err := send(cur); err != nil {
					return err
				}
			}
			cur = &copyChunk{t: t, ops: make([]rowOp, 0, 1024)}
		}
		row := make([]pgcdc.Value, len(vals))
		for i, v := range vals {
			row[i] = pgcdc.Value{Text: v, Null: v == nil}
			cur.size += len(v) + copyValueBytes
		}
		cur.ops = append(cur.ops, rowOp{op: pgcdc.OpInsert, cols: names[t], new: row})
		return nil
	})
	if err == nil {
		cur.last = true
		err = send(cur)
	}
	close(chunks)
	if cerr := <-committed; cerr != nil {
		return cerr
	}
	if err != nil {
		return sourceError(err)
	}
	return nil
}

// commitCopy commits the chunks of a copy as they come, and with the last
// one the position point. A copy that ends without its last chunk (the
// reading failed) commits no position.
func (a *pgApplier) commitCopy(ctx context.Context, chunks <-chan *copyChunk, tables []*pgcdc.Table, point pgcdc.LSN, replace bool) error {
	cleared := map[*pgcdc.Table]bool{}
	first := true
	unapplied := 0
	for c := range chunks {
		var writes []*MirrorWrite
		add := func(t *pgcdc.Table, ops []rowOp) error {
			d, err := a.table(t.Schema, t.Name)
			if err != nil || d == nil {
				return err
			}
			clear := replace && !cleared[t]
			cleared[t] = true
			writes = append(writes, &MirrorWrite{Table: d, Compute: func(ctx context.Context, ts MirrorTable) ([]exec.Change, error) {
				return mirrorChanges(ctx, ts, ops, clear)
			}})
			return nil
		}
		if c.t != nil {
			if err := add(c.t, c.ops); err != nil {
				return err
			}
		}
		if c.last {
			// Tables without rows (or whose chunks all came before) are
			// emptied of what they held too.
			for _, t := range tables {
				if replace && !cleared[t] {
					if err := add(t, nil); err != nil {
						return err
					}
				}
			}
			progress, err := a.progressWrite(point)
			if err != nil {
				return err
			}
			writes = append(writes, progress)
		} else if first && replace {
			progress, err := a.progressDelete()
			if err != nil {
				return err
			}
			writes = append(writes, progress)
		}
		first = false
		if err := a.s.cfg.Host.CommitMirror(ctx, writes); err != nil {
			return err
		}
		if c.last {
			return nil
		}
		if unapplied++; unapplied < copyChunksInFlight {
			continue
		}
		unapplied = 0
		for _, w := range writes {
			if w.Table.Mirror == a.name {
				if err := a.s.cfg.Host.WaitTableCurrent(ctx, w.Table, "the copy of source "+a.name); err != nil {
					return err
				}
			}
		}
	}
	// The reading failed; copySnapshot reports why.
	return nil
}

// progressDelete removes the source's row of its progress table: the
// tables hold no source position.
func (a *pgApplier) progressDelete() (*MirrorWrite, error) {
	w, err := a.progressWrite(0)
	if err != nil {
		return nil, err
	}
	key := types.Row{types.NewString(a.name)}
	w.Compute = func(ctx context.Context, ts MirrorTable) ([]exec.Change, error) {
		old, err := ts.Lookup(ts.RowKey(append(key, types.Null, types.Null)))
		if err != nil || old == nil {
			return nil, err
		}
		return []exec.Change{{Row: old, Sign: exec.Delete}}, nil
	}
	return w, nil
}
