package meta

import (
	"context"
	"fmt"
	"strings"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/faults"
	"streamdb/pgcdc"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A source table's columns may change while the source runs: pgoutput
// then sends the table's Relation again, and the changes after it point
// to the new one. Before the applier applies a transaction with a
// Relation it has not seen, it brings the mirrored table to that
// Relation's columns: a column added on the source is added to the
// mirror (ALTER TABLE ADD COLUMN, with the value rows written before it
// hold on the source, its stored missing value, or, for a volatile
// default, each row's value read from the source: pgsource_fill.go),
// and one dropped there
// is dropped from it; views that read other columns keep running. A
// column whose type changed, or a dropped column a view reads, stops
// the source in an error state (streamdb_sources.status "error: ...")
// with nothing of the transaction applied; it retries as after any
// failure, so dropping the view (or changing the source back) lets it
// go on.

// sourceSchemaError is a change of a source table's columns the mirror
// cannot follow.
type sourceSchemaError struct{ err *sqlerr.Error }

func (e *sourceSchemaError) Error() string { return e.err.Error() }

// applyTxns applies transactions in order, in as few commits as it can:
// one for each run of transactions between two column changes.
func (a *pgApplier) applyTxns(ctx context.Context, ep pgcdc.Endpoint, txns []*pgcdc.Txn) error {
	start := 0
	for i, t := range txns {
		rels := a.unaligned(t)
		if len(rels) == 0 {
			continue
		}
		if i > start {
			if err := a.apply(ctx, txns[start:i], txns[i-1].End); err != nil {
				return err
			}
		}
		start = i
		for _, rel := range rels {
			if err := a.align(ctx, ep, rel); err != nil {
				return err
			}
		}
	}
	if err := a.apply(ctx, txns[start:], txns[len(txns)-1].End); err != nil {
		return err
	}
	a.mu.Lock()
	a.schemaErr = ""
	a.mu.Unlock()
	return nil
}

// unaligned returns the relations transaction t's changes point to that
// the applier has not brought its tables to yet.
func (a *pgApplier) unaligned(t *pgcdc.Txn) []*pgcdc.Relation {
	var out []*pgcdc.Relation
	for _, ch := range t.Changes {
		if ch.Rel != nil && !a.aligned[ch.Rel] && !containsRel(out, ch.Rel) {
			out = append(out, ch.Rel)
		}
	}
	return out
}

func containsRel(rels []*pgcdc.Relation, r *pgcdc.Relation) bool {
	for _, x := range rels {
		if x == r {
			return true
		}
	}
	return false
}

// align brings the mirror of rel's table to rel's columns.
func (a *pgApplier) align(ctx context.Context, ep pgcdc.Endpoint, rel *pgcdc.Relation) error {
	d, err := a.table(rel.Schema, rel.Name)
	if err != nil {
		return err
	}
	if d == nil {
		a.aligned[rel] = true
		return nil
	}
	typeNames, err := pgcdc.FormatTypes(ctx, ep, rel.Types, rel.Mods)
	if err != nil {
		return err
	}
	have := map[string]catalog.Column{}
	for _, c := range d.Columns {
		have[c.Name] = c
	}
	source := fmt.Sprintf("%s.%s", rel.Schema, rel.Name)
	var added []int
	for i, name := range rel.Columns {
		typ := mirrorColumnType(typeNames[i])
		col, ok := have[name]
		if !ok {
			added = append(added, i)
			continue
		}
		if !sameColumnType(col.Type, typ) {
			return &sourceSchemaError{sqlerr.New(sqlerr.FeatureNotSupported,
				"column %s of source table %s changed type to %s; its mirror %s has %s", name, source, typeNames[i], d.Name, col.Type).
				WithHint("Change the column back on the source, or DROP SOURCE %s and CREATE it again to mirror the new type.", a.name)}
		}
	}
	inRel := map[string]bool{}
	for _, name := range rel.Columns {
		inRel[name] = true
	}
	var gone []string
	for _, c := range d.Columns {
		if !inRel[c.Name] {
			gone = append(gone, c.Name)
		}
	}
	if len(added) == 0 && len(gone) == 0 {
		a.aligned[rel] = true
		return nil
	}
	live, err := pgcdc.LiveColumns(ctx, ep, rel.Schema, rel.Name)
	if err != nil {
		return err
	}
	var actions, fill []string
	for _, i := range added {
		act := fmt.Sprintf("ADD COLUMN %s %s", expr.QuoteIdent(rel.Columns[i]), mirrorColumnType(typeNames[i]))
		if lc := live[rel.Columns[i]]; lc.Missing != nil {
			act += " DEFAULT " + quoteLiteral(*lc.Missing)
		} else if lc.Default {
			// A default the rows do not share (volatile): read their
			// values from the source (pgsource_fill.go).
			fill = append(fill, rel.Columns[i])
		}
		actions = append(actions, act)
	}
	for _, name := range gone {
		// A column the source still has is one it does not send
		// (generated, or outside the publication's column list).
		if _, ok := live[name]; !ok {
			actions = append(actions, "DROP COLUMN "+expr.QuoteIdent(name))
		}
	}
	if len(actions) > 0 {
		stmt := fmt.Sprintf("ALTER TABLE %s %s", expr.QuoteIdent(d.Name), strings.Join(actions, ", "))
		if len(fill) > 0 {
			if err := a.markFills(ctx, d.Name, fill); err != nil {
				return err
			}
		}
		if err := a.s.cfg.Host.AlterMirror(ctx, stmt); err != nil {
			se := sqlerr.From(err)
			if se.Code == sqlerr.DependentObjectsExist {
				msg := se.Message
				if se.Detail != "" {
					msg += " (" + strings.ReplaceAll(se.Detail, "\n", "; ") + ")"
				}
				return &sourceSchemaError{sqlerr.New(se.Code, "source table %s changed its columns; its mirror %s cannot follow: %s", source, d.Name, msg).
					WithHint("Drop what reads the column from the mirror, or change the source table back.")}
			}
			return err
		}
		a.s.cfg.Log.Info("source table's columns changed; its mirror follows", "source", a.name, "table", source, "mirror", d.Name, "change", strings.Join(actions, ", "))
		if len(fill) > 0 {
			faults.Crash("pgsource-before-fill")
			if err := a.fillPending(ctx, ep); err != nil {
				return err
			}
		}
	}
	a.aligned[rel] = true
	return nil
}

// mirrorColumnType is the type a mirrored table gives a source column
// of type typ (format_type's spelling): typ, or text when streamdb has
// no such type.
func mirrorColumnType(typ string) string {
	if _, _, err := types.ParseWithModifier(typ); err != nil {
		return "text"
	}
	return typ
}

func sameColumnType(a, b string) bool {
	ta, ma, errA := types.ParseWithModifier(a)
	tb, mb, errB := types.ParseWithModifier(b)
	return errA == nil && errB == nil && ta == tb && ma == mb
}
