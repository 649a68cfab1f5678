package sql

import (
	"context"
	"fmt"
	"slices"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/sqlerr"
)

// renameRelation is ALTER TABLE / ALTER STREAM / ALTER VIEW / ALTER
// MATERIALIZED VIEW ... RENAME TO.
//
// Only an object no view reads can be renamed. Views name their inputs
// in their stored query and plan (DependsOn, the plan's scans), and
// sinks name the view they read, so a renamed input would leave its
// readers bound to a name that no longer exists; PostgreSQL rewrites
// such readers, streamdb refuses (2BP01) and says what to drop first.
// A table or stream is renamed in the catalog only (renameSource): its
// JetStream stream and subject stay.
//
// The object keeps its id, so its state, positions and pg_class oid stay;
// its owner and grants are copied to the new name. The dataflows restart from
// the committed epoch (as ALTER MATERIALIZED VIEW ... AS does), so the
// running pipeline, its logs and metrics carry the new name.
func (e *Engine) renameRelation(ctx context.Context, n *front.RenameRelation) (string, error) {
	tag := "ALTER TABLE"
	switch {
	case n.Stream:
		tag = "ALTER STREAM"
	case n.View:
		tag = "ALTER MATERIALIZED VIEW"
	case n.PlainView:
		tag = "ALTER VIEW"
	}
	if n.Schema != "" && n.Schema != "public" {
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", n.Schema, n.Name)
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	old, ok := e.lookup(n.Name)
	if !ok {
		if n.IfExists {
			pgwire.Notice(ctx, fmt.Sprintf("relation %q does not exist, skipping", n.Name), "")
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", n.Name)
	}
	if old.Envelope() != "" && old.Kind == catalog.KindTable {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "cannot rename stream %q: a stream with an envelope keeps its name", n.Name).
			WithHint("Create it again under the new name; it reads its subject from the start.")
	}
	if old.Mirror != "" || old.Kind == catalog.KindSource {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "cannot rename %s %q: PostgreSQL sources and the tables they mirror keep their names", relKindWord(old), n.Name).
			WithHint("Name the mirrored tables at CREATE SOURCE with FOR TABLES (schema.table AS name, ...).")
	}
	if old.Kind == catalog.KindUnpopulatedView {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "renaming materialized view %q before it is populated is not supported", n.Name).
			WithHint("Run REFRESH MATERIALIZED VIEW %s first, or drop it and create it again under the new name.", n.Name)
	}
	if n.View && old.Kind != catalog.KindView {
		return "", sqlerr.New(sqlerr.WrongObjectType, "%q is not a materialized view", n.Name).
			WithHint("Use ALTER %s.", upperKind(old))
	}
	if n.PlainView && old.Kind != catalog.KindPlainView {
		return "", sqlerr.New(sqlerr.WrongObjectType, "%q is not a view", n.Name).
			WithHint("Use ALTER %s.", upperKind(old))
	}
	if _, taken := e.lookup(n.NewName); taken {
		return "", sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", n.NewName)
	}
	if n.Stream && old.Kind != catalog.KindStream {
		return "", sqlerr.New(sqlerr.WrongObjectType, "%q is not a stream", n.Name).
			WithHint("Use ALTER %s.", upperKind(old))
	}
	if old.Kind != catalog.KindView && old.Kind != catalog.KindPlainView && old.Kind != catalog.KindTable && old.Kind != catalog.KindStream {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "renaming %s %s is not supported", relKindWord(old), n.Name).
			WithHint("Tables, streams, views and materialized views can be renamed.")
	}
	if deps := e.dependents(n.Name); len(deps) > 0 {
		reader := deps[len(deps)-1]
		return "", sqlerr.New(sqlerr.DependentObjectsExist, "cannot rename %s %s because %s %s reads it", relKindWord(old), n.Name, relKindWord(reader), reader.Name).
			WithHint("Views name their inputs in their query: drop %s first, rename, then create it again over %s.", deps[len(deps)-1].Name, n.NewName)
	}
	if old.Kind == catalog.KindTable || old.Kind == catalog.KindStream {
		if err := e.renameSource(old, n.NewName); err != nil {
			return "", err
		}
		e.log.Info("renamed", "kind", old.Kind, "from", n.Name, "to", n.NewName)
		return tag, e.ddlCheckpoint(ctx)
	}
	sinks, err := e.sinksOn([]*catalog.Descriptor{old})
	if err != nil {
		return "", err
	}
	if len(sinks) > 0 {
		return "", sqlerr.New(sqlerr.DependentObjectsExist, "cannot rename materialized view %s because sink %s reads it", n.Name, sinks[0].Name).
			WithHint("DROP SINK %s first, rename, then CREATE SINK again over %s.", sinks[0].Name, n.NewName)
	}
	if old.Kind == catalog.KindPlainView {
		if err := e.renamePlainView(old, n.NewName); err != nil {
			return "", sqlerr.New(sqlerr.InternalError, "renaming view %s failed: %v", n.Name, err)
		}
		e.log.Info("renamed", "kind", old.Kind, "from", n.Name, "to", n.NewName)
		return tag, e.ddlCheckpoint(ctx)
	}
	d := *old
	d.Name = n.NewName
	// The privileges go first, so that a failure leaves them under both
	// names rather than under neither.
	if err := e.roles.CopyPrivileges(old, &d); err != nil {
		return "", err
	}
	if err := e.ddl.CommitRename(old, &d); err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "renaming materialized view %s failed: %v", n.Name, err)
	}
	e.log.Info("renamed", "kind", old.Kind, "from", n.Name, "to", n.NewName)
	return tag, e.ddlCheckpoint(ctx)
}

// renameSource renames table or stream old to newName in the catalog
// only: the JetStream stream, the subject and the table's changelog stay
// as they are (the descriptor names them), and the id keeps the state,
// positions and pg_class oid. Foreign keys that reference the table
// (its own included) are rewritten to the new name in the same batch;
// indexes, constraints and owned sequences keep their names, as in
// PostgreSQL. The caller holds ddlMu and has checked that no view reads
// old.
func (e *Engine) renameSource(old *catalog.Descriptor, newName string) error {
	d := meta.CloneDescriptor(old)
	d.Name = newName
	var others []*catalog.Descriptor
	for _, t := range e.referencingTables(old.Name) {
		x := d
		if t.ID != old.ID {
			x = meta.CloneDescriptor(t)
			others = append(others, x)
		}
		x.Constraints = slices.Clone(t.Constraints)
		for j := range x.Constraints {
			if c := &x.Constraints[j]; c.Type == "f" && c.RefTable == old.Name {
				c.RefTable = newName
			}
		}
	}
	if err := e.roles.CopyPrivileges(old, d); err != nil {
		return err
	}
	if err := e.ddl.CommitRename(old, d, others...); err != nil {
		return sqlerr.New(sqlerr.InternalError, "renaming %s %s failed: %v", relKindWord(old), old.Name, err)
	}
	return nil
}

// upperKind is the ALTER keyword of d's kind.
func upperKind(d *catalog.Descriptor) string {
	switch d.Kind {
	case catalog.KindView, catalog.KindUnpopulatedView:
		return "MATERIALIZED VIEW"
	case catalog.KindPlainView:
		return "VIEW"
	case catalog.KindStream:
		return "STREAM"
	}
	return "TABLE"
}

// referencingTables returns the tables with a foreign key that references
// the table named name (the table itself too, for a self-reference).
func (e *Engine) referencingTables(name string) []*catalog.Descriptor {
	var out []*catalog.Descriptor
	for _, t := range e.objects(catalog.KindTable) {
		if slices.ContainsFunc(t.Constraints, func(c catalog.Constraint) bool { return c.Type == "f" && c.RefTable == name }) {
			out = append(out, t)
		}
	}
	return out
}
