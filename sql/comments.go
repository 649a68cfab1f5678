package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// COMMENT ON: a relation's or column's comment is a field of its catalog
// descriptor, so it is as durable as the object and follows ROLLBACK TO
// SAVEPOINT with it. obj_description, col_description, pg_description
// and psql's \d+ and \dt+ show it.

// commentOn runs COMMENT ON.
func (e *Engine) commentOn(ctx context.Context, n *front.Comment) (string, error) {
	const tag = "COMMENT"
	if n.Schema != "" && n.Schema != "public" {
		return "", noSuchSchema(n.Schema)
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	old, ok := e.lookup(n.Name)
	if !ok {
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", n.Name)
	}
	if err := checkCommentKind(n, old); err != nil {
		return "", err
	}
	d := *old
	d.Columns = append([]catalog.Column(nil), old.Columns...)
	if n.Column == "" {
		d.Comment = n.Text
	} else {
		i := catalogColumnIndex(d.Columns, n.Column)
		if i < 0 {
			return "", sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", n.Column, n.Name)
		}
		d.Columns[i].Comment = n.Text
	}
	if err := e.replaceDescriptor(old, &d); err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "storing the comment failed: %v", err)
	}
	return tag, e.ddlCheckpoint(ctx)
}

// checkCommentKind refuses COMMENT ON of a kind that is not the object's,
// as PostgreSQL does ("v" is not a table). Streams are tables to
// PostgreSQL's catalogs (relkind r), so COMMENT ON TABLE takes them too.
func checkCommentKind(n *front.Comment, d *catalog.Descriptor) error {
	var ok bool
	switch n.Kind {
	case "":
		return nil
	case front.KindTable:
		ok = d.Kind == catalog.KindTable || d.Kind == catalog.KindStream
	case front.KindStream:
		ok = d.Kind == catalog.KindStream || d.Envelope() != ""
	case front.KindMaterializedView:
		ok = d.Kind == catalog.KindView || d.Kind == catalog.KindUnpopulatedView
	case front.KindView:
		ok = d.Kind == catalog.KindPlainView
	}
	if ok {
		return nil
	}
	return sqlerr.New(sqlerr.WrongObjectType, "%q is not a %s", n.Name, n.Kind).
		WithHint("%s is a %s: use COMMENT ON %s.", n.Name, relKindWord(d), upperKind(d))
}

func catalogColumnIndex(cols []catalog.Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// commentDatum is a comment as a catalog value: NULL when there is none.
func commentDatum(s string) types.Datum {
	if s == "" {
		return types.Null
	}
	return str(s)
}
