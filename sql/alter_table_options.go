package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/sqlerr"
)

// alterTableOptions is ALTER TABLE name SET (...) / RESET (...): it
// changes what JetStream keeps of a table's changelog (history) or of a
// stream (retention); the next purge after a checkpoint applies it.
func (e *Engine) alterTableOptions(ctx context.Context, n *front.AlterTableOptions) (string, error) {
	const tag = "ALTER TABLE"
	if n.Schema != "" && n.Schema != "public" {
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", n.Schema, n.Table)
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	d, ok := e.lookup(n.Table)
	if !ok || d.Kind != catalog.KindTable && d.Kind != catalog.KindStream {
		if n.IfExists && !ok {
			return tag, nil
		}
		if ok {
			return "", sqlerr.New(sqlerr.WrongObjectType, "%q is not a table", n.Table)
		}
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", n.Table)
	}
	// A stream with an envelope keeps the options of a stream.
	isTable := d.Kind == catalog.KindTable && d.Envelope() == ""
	opts, err := meta.AlterRetentionOptions(d.Options, n.Set, n.Reset, isTable)
	if err != nil {
		return "", err
	}
	next := *d
	next.Options = opts
	if err := e.replaceDescriptor(d, &next); err != nil {
		return "", err
	}
	e.log.Info("altered storage options", "object", d.Name, "options", opts)
	return tag, e.ddlCheckpoint(ctx)
}
