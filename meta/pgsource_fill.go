package meta

import (
	"context"
	"fmt"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/pgcdc"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A column added on the source with a volatile DEFAULT (random(),
// clock_timestamp(), gen_random_uuid(), nextval) gets a value of its own
// in every existing row: PostgreSQL rewrites the table, which logical
// replication does not send, and stores no missing value for the column.
// So when align adds a column that has a default and no missing value,
// the mirror reads that column of every row from the source table as it
// is then and sets it in the rows it holds, in one commit (fillPending).
// Rows the source changed since the column was added come again in the
// stream after it and are applied over the values read, so the mirror
// ends equal to the source. A fill is recorded before the mirror's ALTER
// TABLE, as a row of the source's progress table (keyed "<source> fill
// <table>.<column>"), and that row is deleted in the fill's commit: a
// crash between the ALTER and the fill fills at the next start, when the
// column is already there and align would add nothing.

const fillMarker = " fill "

// fillKey is the progress table's key of a pending fill of column col
// of mirrored table mirror.
func (a *pgApplier) fillKey(mirror, col string) string {
	return a.name + fillMarker + fillIdent(mirror) + "." + fillIdent(col)
}

func fillIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// parseFillKey reverses fillKey; ok is false for a key of no fill of
// this source.
func (a *pgApplier) parseFillKey(key string) (mirror, col string, ok bool) {
	rest, ok := strings.CutPrefix(key, a.name+fillMarker)
	if !ok {
		return "", "", false
	}
	mirror, rest, ok = cutFillIdent(rest)
	if !ok || !strings.HasPrefix(rest, ".") {
		return "", "", false
	}
	col, rest, ok = cutFillIdent(rest[1:])
	return mirror, col, ok && rest == ""
}

func cutFillIdent(s string) (ident, rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '"' {
			if i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			return b.String(), s[i+1:], true
		}
		b.WriteByte(s[i])
	}
	return "", "", false
}

// markerWrite adds (set) or deletes the progress table's rows of keys.
func (a *pgApplier) markerWrite(keys []string, set bool) (*MirrorWrite, error) {
	d, ok := a.s.cfg.Host.Lookup(a.src.Progress)
	if !ok || d.Kind != catalog.KindTable {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "progress table %q of source %q does not exist", a.src.Progress, a.name)
	}
	a.mu.Lock()
	at := a.applied
	a.mu.Unlock()
	return &MirrorWrite{Table: d, Compute: func(ctx context.Context, ts MirrorTable) ([]exec.Change, error) {
		var out []exec.Change
		for _, k := range keys {
			row := types.Row{types.NewString(k), types.NewString(at.String()), types.NewTime(time.Now())}
			old, err := ts.Lookup(ts.RowKey(row))
			if err != nil {
				return nil, err
			}
			switch {
			case set && old == nil:
				out = append(out, exec.Change{Row: row, Sign: exec.Insert})
			case !set && old != nil:
				out = append(out, exec.Change{Row: old, Sign: exec.Delete})
			}
		}
		return out, nil
	}}, nil
}

// markFills records that columns cols of mirrored table mirror are to be
// filled from the source.
func (a *pgApplier) markFills(ctx context.Context, mirror string, cols []string) error {
	keys := make([]string, len(cols))
	for i, c := range cols {
		keys[i] = a.fillKey(mirror, c)
	}
	w, err := a.markerWrite(keys, true)
	if err != nil {
		return err
	}
	return a.s.cfg.Host.CommitMirror(ctx, []*MirrorWrite{w})
}

// fillPending carries out the recorded fills whose columns the mirrored
// tables have (a fill of a column not added yet waits for align).
func (a *pgApplier) fillPending(ctx context.Context, ep pgcdc.Endpoint) error {
	rows, err := a.s.cfg.Host.Query(ctx, "SELECT source FROM "+expr.QuoteIdent(a.src.Progress))
	if err != nil {
		return err
	}
	fills := map[string][]string{}
	var order []string
	for _, r := range rows {
		mirror, col, ok := a.parseFillKey(r[0])
		if !ok {
			continue
		}
		if _, seen := fills[mirror]; !seen {
			order = append(order, mirror)
		}
		fills[mirror] = append(fills[mirror], col)
	}
	for _, mirror := range order {
		cols := fills[mirror]
		keys := make([]string, len(cols))
		for i, c := range cols {
			keys[i] = a.fillKey(mirror, c)
		}
		done, err := a.markerWrite(keys, false)
		if err != nil {
			return err
		}
		var st *catalog.PGSourceTable
		for i := range a.src.Tables {
			if a.src.Tables[i].Table == mirror {
				st = &a.src.Tables[i]
			}
		}
		d, ok := a.s.cfg.Host.Lookup(mirror)
		if st == nil || !ok || d.Kind != catalog.KindTable || d.Mirror != a.name {
			// The table is no longer mirrored: nothing to fill.
			if err := a.s.cfg.Host.CommitMirror(ctx, []*MirrorWrite{done}); err != nil {
				return err
			}
			continue
		}
		have := map[string]bool{}
		for _, c := range d.Columns {
			have[c.Name] = true
		}
		ready := true
		for _, c := range cols {
			ready = ready && have[c]
		}
		if !ready {
			continue
		}
		names := append(append([]string{}, d.PrimaryKey...), cols...)
		var ops []rowOp
		err = pgcdc.ReadColumns(ctx, ep, st.Schema, st.Name, names, func(vals [][]byte) error {
			v := make([]pgcdc.Value, len(vals))
			for i, x := range vals {
				v[i] = pgcdc.Value{Text: x, Null: x == nil}
			}
			ops = append(ops, rowOp{op: pgcdc.OpUpdate, cols: names, new: v, fill: true})
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading the added columns of source table %s.%s: %w", st.Schema, st.Name, err)
		}
		fill := &MirrorWrite{Table: d, Compute: func(ctx context.Context, ts MirrorTable) ([]exec.Change, error) {
			return mirrorChanges(ctx, ts, ops, false)
		}}
		if err := a.s.cfg.Host.CommitMirror(ctx, []*MirrorWrite{fill, done}); err != nil {
			return err
		}
		a.s.cfg.Log.Info("source table's added columns read from the source: their default gave each row its own value",
			"source", a.name, "table", st.Schema+"."+st.Name, "mirror", mirror, "columns", strings.Join(cols, ", "), "rows", len(ops))
	}
	return nil
}
